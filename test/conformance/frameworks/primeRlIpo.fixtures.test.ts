/**
 * Enforces docs/derivations/losses.md#ipo: prime-rl's `ipo_loss_fn` (src/prime_rl/trainer/rl/loss.py
 * at 559b4477, recorded by tools/record-fixtures/primeRlIpo.py with torch autograd in float64) is
 * one config of ours: surrogate ipo {threshold}, the inference logprobs as old (prime-rl has no old
 * policy), kl_tau·(log r)² as kl {k2, coef 2·kl_tau} against the inference logprobs, A·adv_tau, and
 * token_sum (the function returns the sequence's sum; compute_loss divides by the step's token
 * count afterwards). Each recorded sequence is a one-row batch; loss and gradient to 1e-12.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { PolicyLossConfig } from "../../../src/losses/config.js";
import { policyLoss } from "../../../src/losses/policyLoss.js";
import { expectNormwiseClose } from "../../_kit/index.js";

interface Case {
  readonly seed: number;
  readonly inputs: {
    readonly trainer_logprobs: number[];
    readonly inference_logprobs: number[];
    readonly advantages: number[];
    readonly loss_mask: boolean[];
  };
  readonly outputs: {
    readonly loss: number;
    readonly grad_trainer_logprobs: number[];
    readonly is_masked: boolean[];
  };
}
interface Variant {
  readonly name: string;
  readonly config: {
    readonly adv_tau: number;
    readonly ipo_threshold: number;
    readonly kl_tau: number;
  };
  readonly cases: readonly Case[];
}
const FX = JSON.parse(
  readFileSync(new URL("../../fixtures/frameworks/prime-rl-ipo.json", import.meta.url), "utf8"),
) as { readonly provenance: { readonly commit: string }; readonly variants: readonly Variant[] };

describe("IPO vs prime-rl", () => {
  test("identity: four variants of six cases, each dropping and keeping tokens", () => {
    expect(FX.provenance.commit).toBe("559b44772e471d1538537b8805cc77f3824a5e64");
    expect(FX.variants.map((v) => [v.name, v.cases.length])).toEqual([
      ["default", 6],
      ["threshold-0.05", 6],
      ["kl_tau-0", 6],
      ["threshold-0.05:kl_tau-0", 6],
    ]);
  });
  for (const v of FX.variants) {
    test(`conformance: prime-rl@559b4477 ipo ${v.name} replays to 1e-12`, () => {
      const { adv_tau, ipo_threshold, kl_tau } = v.config;
      const config: PolicyLossConfig = {
        ratio: "token",
        surrogate: "ipo",
        clip: null,
        aggregation: "token_sum",
        ipo: { threshold: ipo_threshold },
        kl: kl_tau === 0 ? null : { kind: "k2", coef: 2 * kl_tau },
      };
      let dropped = 0;
      for (const [k, c] of v.cases.entries()) {
        const what = `${v.name} case ${k} (seed ${c.seed})`;
        const inf = [c.inputs.inference_logprobs];
        const got = policyLoss(config, {
          logprobs: [c.inputs.trainer_logprobs],
          oldLogprobs: inf,
          refLogprobs: inf,
          advantages: [c.inputs.advantages.map((a) => a * adv_tau)],
          responseMask: [c.inputs.loss_mask],
        });
        expectNormwiseClose(got.loss, c.outputs.loss, 1e-12, `${what}: loss`);
        expectNormwiseClose(
          got.gradLogprobs,
          {
            rows: 1,
            cols: c.inputs.loss_mask.length,
            data: Float64Array.from(c.outputs.grad_trainer_logprobs),
          },
          1e-12,
          `${what}: grad`,
        );
        // Our flags mark the response tokens the trust region drops (upstream's is_masked ∧ mask).
        const flagged = c.inputs.loss_mask.map(
          (m, t) => (got.clippedHigh.data[t] === 1 || got.clippedLow.data[t] === 1) && m,
        );
        expect(flagged, `${what}: dropped tokens`).toEqual(
          c.outputs.is_masked.map((x, t) => x && c.inputs.loss_mask[t]),
        );
        dropped += flagged.filter(Boolean).length;
      }
      expect(dropped).toBeGreaterThan(0);
    });
  }
});
