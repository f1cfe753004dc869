/**
 * Enforces docs/testing.md#the-differential-against-polgrad: 400 random cases recorded from polgrad
 * 0.2.0 (PyTorch autograd, float64; tools/record-fixtures/differential.py) — every ratio,
 * surrogate, clip, aggregation, TIS and KL option polgrad has, on ragged polgrad-style batches
 * with B from 1 to 32 and T from 1 to 128, old and ref log-probabilities above 0 included, junk
 * (123, NaN, ±Inf) at padding — each written as a batch file (safetensors, JSON, .npz or a folder
 * of .npy, in turn) and evaluated by the built binary, `polgrad loss --config … --batch FILE
 * --json`. The loss agrees to 1e-12 relative, the gradient, per-token objective and ratio to
 * 1e-12 norm-wise, the clip flags exactly; the warnings name exactly the streams with values
 * above 0. A future input rule that refuses what polgrad accepts fails here.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import {
  type FixtureNumber,
  loadPolgradFixture,
  matrixRelErr,
  num,
  relErr,
} from "../_kit/polgradFixtures.js";
import { useTmpDir } from "../io/_kit.js";
import { npyBytes, npzBytes } from "../io/_writers.js";
import { runBin } from "./_run.js";

type Rows = FixtureNumber[][];

interface Case {
  readonly name: string;
  readonly shape: readonly [number, number];
  readonly config: Readonly<Record<string, unknown>>;
  readonly inputs: {
    readonly logprobs: Rows;
    readonly old_logprobs: Rows;
    readonly advantages: FixtureNumber[] | Rows;
    readonly response_mask: boolean[][];
    readonly ref_logprobs?: Rows;
    readonly rollout_logprobs?: Rows;
  };
  readonly outputs: {
    readonly loss: number;
    readonly kl_loss: number | null;
    readonly grad_logprobs: Rows;
    readonly per_token_objective: Rows;
    readonly ratio: Rows;
    readonly clipped_low: boolean[][];
    readonly clipped_high: boolean[][];
  };
}

const fx = loadPolgradFixture<{ cases: readonly Case[] }>("differential.json");
const tmp = useTmpDir();
const FORMATS = ["safetensors", "json", "npz", "npy-folder"] as const;
const LOGPROB_STREAMS = ["logprobs", "old_logprobs", "ref_logprobs", "rollout_logprobs"] as const;

/** Write one case's inputs as a batch file in `format`; returns the path `--batch` takes. */
function writeBatch(c: Case, format: (typeof FORMATS)[number]): string {
  const [B, T] = c.shape;
  const streams: [string, number[], number[]][] = [];
  for (const name of LOGPROB_STREAMS) {
    const x = c.inputs[name];
    if (x !== undefined) streams.push([name, x.flat().map(num), [B, T]]);
  }
  const adv = c.inputs.advantages;
  const advFlat = (adv as (FixtureNumber | FixtureNumber[])[]).flat().map(num);
  streams.push(["advantages", advFlat, Array.isArray(adv[0]) ? [B, T] : [B]]);
  const mask = c.inputs.response_mask.flat().map((m) => (m ? 1 : 0));
  const base = tmp(c.name);
  if (format === "json") {
    const path = `${base}.json`;
    writeFileSync(path, JSON.stringify(c.inputs));
    return path;
  }
  if (format === "safetensors") {
    const path = `${base}.safetensors`;
    const tensors: Record<string, { dtype: "F64" | "BOOL"; shape: number[]; data: number[] }> = {
      response_mask: { dtype: "BOOL", shape: [B, T], data: mask },
    };
    for (const [name, data, shape] of streams) tensors[name] = { dtype: "F64", shape, data };
    writeFileSync(path, encodeSafetensors(tensors));
    return path;
  }
  const arrays: Record<string, { descr: "<f8" | "|b1"; shape: number[]; data: number[] }> = {
    response_mask: { descr: "|b1", shape: [B, T], data: mask },
  };
  for (const [name, data, shape] of streams) arrays[name] = { descr: "<f8", shape, data };
  if (format === "npz") {
    const path = `${base}.npz`;
    writeFileSync(path, npzBytes(arrays));
    return path;
  }
  mkdirSync(base, { recursive: true });
  for (const [name, a] of Object.entries(arrays))
    writeFileSync(join(base, `${name}.npy`), npyBytes(a.descr, a.shape, a.data));
  return base;
}

/** The response positions holding a finite value above 0, per log-probability stream. */
function positives(c: Case): Map<string, number> {
  const out = new Map<string, number>();
  const mask = c.inputs.response_mask.flat();
  for (const name of LOGPROB_STREAMS) {
    const x = c.inputs[name];
    if (x === undefined) continue;
    const n = x
      .flat()
      .map(num)
      .filter((v, i) => mask[i] && v > 0 && v < Number.POSITIVE_INFINITY).length;
    if (n > 0) out.set(name, n);
  }
  return out;
}

interface LossDoc {
  readonly result: {
    readonly loss: number;
    readonly kl_loss: number | null;
    readonly grad_logprobs: number[][];
    readonly per_token_objective: number[][];
    readonly ratio: number[][];
    readonly clipped_low: boolean[][];
    readonly clipped_high: boolean[][];
    readonly source: { readonly warnings: readonly { tensor: string; count: number }[] };
  };
}

describe("differential against polgrad 0.2.0", () => {
  test("conformance: 400 recorded random cases agree through the binary (loss 1e-12 relative; gradient, objective and ratio 1e-12 norm-wise; clip flags exact)", () => {
    expect(fx.cases.length).toBeGreaterThanOrEqual(300);
    const failures: string[] = [];
    let warned = 0;
    let worstLoss = 0;
    let worstGrad = 0;
    fx.cases.forEach((c, i) => {
      const format = FORMATS[i % FORMATS.length] as (typeof FORMATS)[number];
      const run = runBin([
        "loss",
        "--config",
        JSON.stringify(c.config),
        "--batch",
        writeBatch(c, format),
        "--json",
      ]);
      const where = `${c.name} (${format}, ${c.shape.join("x")})`;
      if (run.code !== 0) {
        failures.push(`${where}: exit ${run.code}: ${run.stderr.trim()}`);
        return;
      }
      const r = (JSON.parse(run.stdout) as LossDoc).result;
      const o = c.outputs;
      const errs = {
        loss: relErr(r.loss, o.loss),
        kl:
          o.kl_loss === null
            ? r.kl_loss === null
              ? 0
              : 1
            : relErr(r.kl_loss ?? Number.NaN, o.kl_loss),
        grad: matrixRelErr({ data: r.grad_logprobs.flat() }, o.grad_logprobs),
        objective: matrixRelErr({ data: r.per_token_objective.flat() }, o.per_token_objective),
        ratio: matrixRelErr({ data: r.ratio.flat() }, o.ratio),
      };
      worstLoss = Math.max(worstLoss, errs.loss);
      worstGrad = Math.max(worstGrad, errs.grad);
      for (const [k, e] of Object.entries(errs))
        if (!(e <= 1e-12)) failures.push(`${where}: ${k} off by ${e}`);
      if (JSON.stringify(r.clipped_low) !== JSON.stringify(o.clipped_low))
        failures.push(`${where}: clipped_low differs`);
      if (JSON.stringify(r.clipped_high) !== JSON.stringify(o.clipped_high))
        failures.push(`${where}: clipped_high differs`);
      // One warning line (and one document entry) per stream with values above 0.
      const want = positives(c);
      const got = new Map(r.source.warnings.map((w) => [w.tensor, w.count]));
      if (JSON.stringify([...got].sort()) !== JSON.stringify([...want].sort()))
        failures.push(
          `${where}: warnings ${JSON.stringify([...got])} for ${JSON.stringify([...want])}`,
        );
      const lines = run.stderr.split("\n").filter((l) => l !== "");
      if (lines.length !== want.size || !lines.every((l) => l.includes(": warning: ")))
        failures.push(`${where}: stderr ${JSON.stringify(run.stderr)}`);
      if (want.size > 0) warned++;
    });
    expect(failures).toEqual([]);
    // polgrad-style batches: old (or ref) log-probabilities above 0 in many cases.
    expect(warned).toBeGreaterThan(150);
    // Measured: the worst loss and gradient errors stay far inside the bound.
    expect(worstLoss).toBeLessThan(1e-12);
    expect(worstGrad).toBeLessThan(1e-12);
  }, 600_000);
});
