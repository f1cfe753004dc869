/**
 * Enforces docs/contracts.md#liveness-on-a-run: `polgrad contract liveness DIR` orders a folder's
 * per-batch dumps by the step number in their names, measures each (reported scalars, or the PAPO
 * perception term computed from logprobs and masked logprobs), and runs probeLiveness with the
 * authors' bound of 20: 20 consecutive degenerate batches are tolerated, the 21st fails. Exit 0
 * live, 1 not shown live, 2 bad input.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  observedLivenessMeasure,
  orderBatchFiles,
  PAPO_PROBE_MAX_DEGENERATE_BATCHES,
} from "../../src/contracts/index.js";
import { ConfigError, IoError } from "../../src/index.js";
import { runMain } from "../cli/_run.js";

const root = mkdtempSync(join(tmpdir(), "polgrad-liveness-"));

/** A folder of batch files: `entries` maps a file name to its JSON tensors. */
function folder(name: string, entries: Record<string, unknown>): string {
  const d = join(root, name);
  mkdirSync(d);
  for (const [f, t] of Object.entries(entries)) writeFileSync(join(d, f), JSON.stringify(t));
  return d;
}

const lp = [[-1.0, -0.5]];
const mask = [[true, true]];
/** Image-invariant (δ = 0 at every token): k3(0) = e^0 − 0 − 1 = 0 exactly, a degenerate batch. */
const invariant = { logprobs: lp, masked_logprobs: lp, response_mask: mask };
/** δ = [0, 0.1]: a live batch. */
const live = { logprobs: lp, masked_logprobs: [[-1.0, -0.4]], response_mask: mask };
const zero = { perception_kl: [0], perception_gradient_norm: [0] };

/** `n` degenerate batches step_0 … step_{n−1} (alternating both dump kinds), then `last` if given. */
function run(name: string, n: number, last?: unknown): string {
  const e: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) e[`step_${i}.json`] = i % 2 === 0 ? invariant : zero;
  if (last !== undefined) e[`step_${n}.json`] = last;
  return folder(name, e);
}

describe("orderBatchFiles", () => {
  test("golden: step order when every name has a step, else name order", () => {
    const a = orderBatchFiles(["step_10.json", "notes.txt", "step_2.safetensors", "step_1.JSON"]);
    expect(a).toEqual({
      order: "step",
      files: [
        { file: "step_1.JSON", step: 1 },
        { file: "step_2.safetensors", step: 2 },
        { file: "step_10.json", step: 10 },
      ],
    });
    // "final.json" has no digits: every file falls back to name (code-unit) order.
    const b = orderBatchFiles(["step_10.json", "step_2.json", "final.json"]);
    expect(b.order).toBe("name");
    expect(b.files.map((f) => f.file)).toEqual(["final.json", "step_10.json", "step_2.json"]);
    // The last run of digits counts: run3_batch_7 is step 7.
    expect(orderBatchFiles(["run3_batch_7.json"]).files).toEqual([
      { file: "run3_batch_7.json", step: 7 },
    ]);
    expect(() => orderBatchFiles(["step_1.json", "step_01.safetensors"])).toThrow(IoError);
    expect(PAPO_PROBE_MAX_DEGENERATE_BATCHES).toBe(20);
  });
});

describe("observedLivenessMeasure", () => {
  test("golden: reported scalars are the measure and logprobs give the papo perception term", () => {
    const set = (t: Record<string, unknown>) => ({
      path: "b.json",
      tensors: new Map(
        Object.entries(t).map(([k, v]) => {
          const rows = v as number[][] | number[];
          const shape = Array.isArray(rows[0]) ? [rows.length, (rows[0] as number[]).length] : [1];
          const data = Float64Array.from((rows as unknown[]).flat(), (x) => Number(x));
          return [k, { dtype: "F64", shape, data }];
        }),
      ),
    });
    const trl = observedLivenessMeasure("trl");
    expect(trl(set({ perception_kl: [0.3], perception_gradient_norm: [0.02] }))).toEqual({
      term: 0.3,
      gradNorm: 0.02,
    });
    // δ = [0, 0.1]; k3(0.1) = e^0.1 − 0.1 − 1. TRL form: γ = 0.1, mean over B·T = 2 positions,
    // term = 0.1·k3(0.1)/2; ∂/∂lp = +γ·(e^δ − 1)/2 and ∂/∂lpm = −γ·(e^δ − 1)/2 at the live token,
    // so ‖∇‖ = √2·0.1·(e^0.1 − 1)/2.
    const k3 = Math.exp(0.1) - 0.1 - 1;
    const lv = { logprobs: lp, masked_logprobs: [[-1.0, -0.5 + 0.1]], response_mask: [[1, 1]] };
    const m = trl(set(lv));
    const d = -0.5 + 0.1 - -0.5; // the δ the measure sees (0.1 up to rounding of −0.4)
    expect(m.term).toBeCloseTo((0.1 * (Math.exp(d) - d - 1)) / 2, 15);
    expect(m.term).toBeCloseTo((0.1 * k3) / 2, 9);
    expect(m.gradNorm).toBeCloseTo((Math.SQRT2 * 0.1 * Math.expm1(d)) / 2, 15);
    // Official form: γ = 0.01, the grpo parent's weights 1/(B·L_b) = 1/2, masked stream sg.
    const off = observedLivenessMeasure("official")(set(lv));
    expect(off.term).toBeCloseTo((0.01 * (Math.exp(d) - d - 1)) / 2, 15);
    expect(off.gradNorm).toBeCloseTo((0.01 * Math.expm1(d)) / 2, 15);
    // Image-invariant: exactly 0.
    expect(trl(set({ ...lv, masked_logprobs: lp })).term).toBe(0);
  });

  test("rejects: a lone scalar, a file without either kind, a fractional mask", () => {
    const m = observedLivenessMeasure();
    const t = (shape: number[], data: number[]) => ({ dtype: "F64", shape, data });
    const set = (e: Record<string, ReturnType<typeof t>>) => ({
      path: "b.json",
      tensors: new Map(Object.entries(e)),
    });
    expect(() => m(set({ perception_kl: t([1], [0.1]) }))).toThrow(
      /perception_gradient_norm must be given with the other reported scalar; got missing/,
    );
    expect(() => m(set({}))).toThrow(/logprobs must be present/);
    expect(() =>
      m(
        set({
          logprobs: t([1, 2], [-1, -0.5]),
          masked_logprobs: t([1, 2], [-1, -0.5]),
          response_mask: t([1, 2], [1, 0.5]),
        }),
      ),
    ).toThrow(/response_mask must be 0 or 1 everywhere; got 0.5 at \[0, 1\]/);
    expect(() => observedLivenessMeasure("paper" as never)).toThrow(ConfigError);
  });
});

describe("contract liveness", () => {
  test("golden: 20 degenerate batches then a live one exits 0 and 21 degenerate exit 1", async () => {
    // Edge 1: batches 0..19 degenerate (20 = the bound, tolerated), batch 20 live.
    const ok = await runMain(["contract", "liveness", run("twenty", 20, live), "--json"]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).result).toMatchObject({
      status: "live",
      live: true,
      order: "step",
      max_degenerate: 20,
      concluded_at: 20,
      file: "step_20.json",
      skipped: 20,
    });
    // Edge 2: 21 degenerate batches (then a live one that is never read): fails at batch 20.
    // In name order step_2x would come before step_3 and the live step_21 would be reached at
    // index 14; step order keeps the run's order.
    const bad = await runMain(["contract", "liveness", run("twentyone", 21, live), "--json"]);
    expect(bad.code).toBe(1);
    const doc = JSON.parse(bad.stdout).result;
    expect(doc).toMatchObject({
      status: "degenerate_bound",
      live: false,
      concluded_at: 20,
      file: "step_20.json",
      skipped: 21,
    });
    expect(doc.batches).toHaveLength(21);
    const text = await runMain(["contract", "liveness", join(root, "twentyone")]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("batch 20 step_20.json (step 20): term 0, gradient norm 0");
    expect(text.stdout).toMatch(/verdict: degenerate_bound at batch 20 — probeLiveness: /);
    // --max-degenerate moves the edge: 0 tolerates none.
    const none = await runMain([
      "contract",
      "liveness",
      run("one", 1, live),
      "--max-degenerate",
      "0",
    ]);
    expect(none.code).toBe(1);
    const one = await runMain(["contract", "liveness", join(root, "one"), "--max-degenerate", "1"]);
    expect(one.code).toBe(0);
  });

  test("golden: a dead gradient, a negative term and batches that run out exit 1", async () => {
    const dead = await runMain([
      "contract",
      "liveness",
      folder("dead", { "b_1.json": { perception_kl: [0.2], perception_gradient_norm: [0] } }),
      "--json",
    ]);
    expect([dead.code, JSON.parse(dead.stdout).result.status]).toEqual([1, "dead_gradient"]);
    const neg = await runMain([
      "contract",
      "liveness",
      folder("neg", { "b_1.json": { perception_kl: [-0.1], perception_gradient_norm: [1] } }),
      "--json",
    ]);
    expect([neg.code, JSON.parse(neg.stdout).result.status]).toEqual([1, "negative_term"]);
    const out = await runMain(["contract", "liveness", run("three", 3), "--json"]);
    expect([out.code, JSON.parse(out.stdout).result]).toMatchObject([
      1,
      { status: "inconclusive", concluded_at: null, skipped: 3 },
    ]);
    const nan = await runMain([
      "contract",
      "liveness",
      folder("nan", { "b_1.json": { perception_kl: ["NaN"], perception_gradient_norm: [1] } }),
      "--json",
    ]);
    expect([nan.code, JSON.parse(nan.stdout).result.batches[0].term]).toEqual([1, null]);
  });

  test("rejects: a missing or empty folder and a bad bound exit 2", async () => {
    const cases: [string[], string][] = [
      [["contract", "liveness"], "DIR"],
      [["contract", "liveness", join(root, "nope")], "DIR"],
      [["contract", "liveness", folder("empty", {})], "DIR"],
      [["contract", "liveness", join(root, "one"), "--max-degenerate", "-1"], "--max-degenerate"],
      [["contract", "liveness", join(root, "one"), "--form", "paper"], "--form"],
    ];
    for (const [args, arg] of cases) {
      const r = await runMain([...args, "--json"]);
      expect([args, r.code, JSON.parse(r.stderr).error.arg]).toEqual([args, 2, arg]);
    }
    const junk = await runMain([
      "contract",
      "liveness",
      folder("junk", { "b_1.json": { logprobs: lp } }),
      "--json",
    ]);
    expect([junk.code, JSON.parse(junk.stderr).error.code]).toEqual([2, "E_IO"]);
  });
});
