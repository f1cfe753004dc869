/**
 * Enforces docs/derivations/advantages.md#leave-one-out-std against upstream: NeMo-RL's GRPO
 * advantage (GRPOAdvantageEstimator over calculate_baseline_and_std_per_prompt, commit 7ea279a),
 * recorded by tools/record-fixtures/nemoLoo.py (test/fixtures/frameworks/nemo-loo.json) with the
 * leave-one-out baseline on and off and normalisation on and off, in float64 and float32.
 * Compositions: leave-one-out → looAdvantages(r, g, {eps: 1e-6, scale}); plain → grpoAdvantages
 * (r, g, {eps: 1e-6, singletons: "zero", scale}). Tolerances, each derived: float64 rewards —
 * NeMo's Bessel factor n/(n − 1) is a float32 (its count is valid_mask.float()), 2 float32 ulps of
 * |A|, plus a few float64 ulps of r − μ over σ + ε (at a zero spread both sides carry such a
 * residue, and ours is divided by ε where NeMo's one-pass std of 0 does not divide); float32 rewards — NeMo's float32
 * statistics (one-pass E[r²] − μ²), 64 float32 ulps of (|r| + max_g |r|)/(σ + ε) + |A|.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { grpoAdvantages, looAdvantages } from "../../../src/advantages/index.js";

interface Variant {
  readonly name: string;
  readonly cases: readonly {
    readonly inputs: { rewards: number[]; groups: number[][] };
    readonly outputs: { advantages: number[][] };
  }[];
}
const FX = JSON.parse(
  readFileSync(new URL("../../fixtures/frameworks/nemo-loo.json", import.meta.url), "utf8"),
) as { readonly variants: readonly Variant[] };
const U32 = 2 ** -24;

describe("NeMo-RL's GRPO advantages", () => {
  for (const v of FX.variants) {
    test(`conformance: nemo-rl@7ea279ab ${v.name} replays within its tolerance`, () => {
      const loo = v.name.includes("leave_one_out=True");
      const normalize = v.name.includes("normalize=True");
      const f32 = v.name.includes("float32");
      for (const [k, c] of v.cases.entries()) {
        const r = c.inputs.rewards;
        const ids = new Array<number>(r.length);
        c.inputs.groups.forEach((g, gi) => {
          for (const i of g) ids[i] = gi;
        });
        const scale = normalize ? "std" : "none";
        const ours = loo
          ? looAdvantages(r, ids, { eps: 1e-6, scale })
          : grpoAdvantages(r, ids, { eps: 1e-6, singletons: "zero", scale });
        const expected = c.outputs.advantages.map((row) => row[0] as number);
        const bad: string[] = [];
        expected.forEach((e, i) => {
          const g = c.inputs.groups[ids[i] as number] as number[];
          const mx = Math.max(...g.map((j) => Math.abs(r[j] as number)));
          const xs = g.filter((j) => !loo || j !== i).map((j) => r[j] as number);
          const mu = xs.reduce((a, b) => a + b, 0) / xs.length;
          const sd =
            xs.length > 1
              ? Math.sqrt(xs.reduce((a, b) => a + (b - mu) ** 2, 0) / (xs.length - 1))
              : 0;
          const tol = f32
            ? 64 * U32 * ((Math.abs(r[i] as number) + mx) / (sd + 1e-6) + Math.abs(e))
            : 2 * U32 * Math.abs(e) +
              // r − μ carries a few float64 ulps of rounding on either side (an exact zero spread
              // included), divided by σ + ε: at σ = 0 that residue over ε is all either side has.
              (4 * 2 ** -52 * (Math.abs(r[i] as number) + mx)) / (sd + 1e-6) +
              1e-15;
          const a = ours[i] as number;
          if (!(Math.abs(a - e) <= tol)) bad.push(`[${i}] ${a} vs ${e} (tol ${tol})`);
        });
        expect(bad, `case ${k}`).toEqual([]);
      }
    });
  }
});
