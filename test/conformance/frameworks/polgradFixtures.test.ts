/**
 * Enforces docs/conformance/frameworks.md#polgrads-vendored-entries: polgrad 0.2.0's own four
 * framework fixture files (44 cases of its VENDORED verl / OpenRLHF wrappers and its verl / TRL
 * reimplementations, carried over by tools/record-fixtures/polgradFrameworkFixtures.py and
 * re-run there through polgrad) replay through the CLI, each as a JSON batch file evaluated by
 * the model POLGRAD_VENDORED names, to 1e-12; and the mask dtype is what makes 8 of them agree.
 */
import { writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { POLGRAD_VENDORED } from "../../../src/conformance/frameworks/polgradVendored.js";
import { getFrameworkModel } from "../../../src/conformance/frameworks/registry.js";
import {
  type FixtureNumber,
  loadPolgradFixture,
  matrixRelErr,
  relErr,
} from "../../_kit/polgradFixtures.js";
import { runBin, runMain } from "../../cli/_run.js";
import { useTmpDir } from "../../io/_kit.js";

interface Case {
  readonly file: string;
  readonly key: string;
  readonly index: number;
  readonly shape: readonly [number, number];
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly outputs: { readonly loss: number; readonly grad_logprobs: FixtureNumber[][] };
}
const fx = loadPolgradFixture<{ cases: readonly Case[] }>("framework_fixtures.json");
const tmp = useTmpDir();

/** Write one case's inputs as a JSON batch file (polgrad's names; bool mask; [B, T] advantages). */
function batchFile(c: Case): string {
  const path = `${tmp(`${c.key.replace("/", "-")}-${c.index}`)}.json`;
  writeFileSync(path, JSON.stringify(c.inputs));
  return path;
}

/** The CLI's loss and gradient for one case under a model id. */
async function replay(c: Case, id: string, extra: readonly string[] = []) {
  const r = await runMain(["loss", "--framework", id, ...extra, "--batch", batchFile(c), "--json"]);
  expect(r.code, `${c.key}[${c.index}] ${id}: ${r.stderr}`).toBe(0);
  const doc = JSON.parse(r.stdout) as { result: { loss: number; grad_logprobs: number[][] } };
  return {
    loss: relErr(doc.result.loss, c.outputs.loss),
    grad: matrixRelErr({ data: doc.result.grad_logprobs.flat() }, c.outputs.grad_logprobs),
  };
}

describe("polgrad 0.2.0 framework fixtures", () => {
  test("conformance: all 44 recorded cases replay through the cli to 1e-12", async () => {
    expect(fx.cases.length).toBe(44);
    // Every VENDORED key of polgrad has its 4 cases, and every mapped id is a model.
    expect(new Set(fx.cases.map((c) => c.key))).toEqual(new Set(Object.keys(POLGRAD_VENDORED)));
    for (const id of Object.values(POLGRAD_VENDORED)) expect(getFrameworkModel(id).id).toBe(id);
    let positiveOld = 0;
    for (const c of fx.cases) {
      const id = POLGRAD_VENDORED[c.key] as string;
      const e = await replay(c, id);
      expect([c.key, c.index, e.loss <= 1e-12, e.grad <= 1e-12]).toEqual([
        c.key,
        c.index,
        true,
        true,
      ]);
      if (JSON.stringify(c.inputs.old_logprobs).match(/[[,]\d/)) positiveOld++;
    }
    // Most of polgrad's cases hold old log-probabilities above 0 (logprobs ≥ −8 plus a gap up to
    // +2): they are read with a warning, as polgrad reads them.
    expect(positiveOld).toBeGreaterThan(20);
  });

  test("golden: the mask dtype decides 12 cases: verl's and OpenRLHF's L + 1e-8 row divisor survives only under float64", async () => {
    // Under the frameworks' own bool / long mask, L_b + 1e-8 is float32 and rounds to L_b; under
    // polgrad's float64 mask every row's mean is deflated by L_b / (L_b + 1e-8) ≈ 1 − 1e-8/L_b.
    // Only the per-row-mean aggregations carry the ε: verl seq-mean-token-mean (vanilla, and gspo,
    // which hard-codes it) and OpenRLHF's sample mean.
    const differs: string[] = [];
    for (const c of fx.cases) {
      const id = (POLGRAD_VENDORED[c.key] as string).replace(/\[mask_dtype=float64\]$/, "");
      const e = await replay(c, id);
      if (e.loss > 1e-12) {
        differs.push(`${c.key}[${c.index}]`);
        // The deflation: a relative gap of order 1e-8 / L, never more than 1e-8.
        expect(e.loss, c.key).toBeLessThan(1.5e-8);
        expect(e.loss, c.key).toBeGreaterThan(1e-11);
      }
    }
    const keys = [...new Set(differs.map((d) => d.replace(/\[\d\]$/, "")))].sort();
    expect(keys).toEqual([
      "openrlhf/pg_clip_seq_mean_token_mean",
      "verl/gspo",
      "verl/pg_clip_seq_mean_token_mean",
    ]);
    expect(differs.length).toBe(12);
  });

  test("golden: --mask-dtype float64 on the command line is the id suffix, through the binary", () => {
    const c = fx.cases.find((x) => x.key === "openrlhf/pg_clip_seq_mean_token_mean") as Case;
    const file = batchFile(c);
    const run = runBin([
      "loss",
      "--framework",
      "openrlhf@bc71bb19:ppo:sample",
      "--mask-dtype",
      "float64",
      "--batch",
      file,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as {
      result: { loss: number; framework: { id: string; settings: Record<string, unknown> } };
    };
    expect(doc.result.framework.id).toBe("openrlhf@bc71bb19:ppo:sample[mask_dtype=float64]");
    expect(doc.result.framework.settings.response_mask_dtype).toBe("torch.float64");
    expect(relErr(doc.result.loss, c.outputs.loss)).toBeLessThanOrEqual(1e-12);
  });

  test("rejects: a mask dtype the framework does not take, one given twice, and one without a model id", async () => {
    const c = fx.cases[0] as Case;
    const file = batchFile(c);
    const cases: [string[], string][] = [
      [["--framework", "verl@74a718a4:gspo", "--mask-dtype", "long"], "one of bool, float64"],
      [
        ["--framework", "verl@74a718a4:gspo[mask_dtype=bool]", "--mask-dtype", "float64"],
        "must not repeat",
      ],
      [["--algorithm", "dapo", "--mask-dtype", "float64"], "must come with --framework ID"],
      [
        ["--framework", "trl@v1.9.0", "--mask-dtype", "float64"],
        "must come with a framework model id",
      ],
      [["--framework", "verl@74a718a4:gspo[mask_dtype=float32]"], `id's mask_dtype`],
    ];
    for (const [args, fragment] of cases) {
      const r = await runMain(["loss", ...args, "--batch", file]);
      expect([args.join(" "), r.code, r.stdout]).toEqual([args.join(" "), 2, ""]);
      expect(r.stderr, args.join(" ")).toContain(fragment);
    }
  });
});
