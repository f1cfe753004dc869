/**
 * Enforces docs/derivations/kl.md#kl-loss: klLoss is aggregate(klEstimate) bitwise, and it (with
 * the surrogate and in-reward forms) reproduces polgrad 0.2.0 on test/fixtures/polgrad/kl.json.
 */
import { describe, expect, test } from "vitest";
import {
  AGGREGATIONS,
  aggregate,
  KL_ESTIMATORS,
  klEstimate,
  klInReward,
  klLoss,
  reverseKlGradSurrogate,
} from "../../src/index.js";
import {
  type FixtureNumber,
  loadPolgradFixture,
  matrixRelErr,
  relErr,
  rows,
} from "../_kit/polgradFixtures.js";

const lp = [
  [-0.5, -1.5, -2.0],
  [-0.3, 123, 123],
];
const ref = [
  [-1.5, -1.0, -2.5],
  [-0.1, Number.NaN, 123],
];
const m = [
  [true, true, true],
  [true, false, false],
];

describe("klLoss", () => {
  test("identity: equals aggregate of klEstimate bitwise", () => {
    for (const kind of KL_ESTIMATORS) {
      for (const agg of AGGREGATIONS) {
        const normLen = 5;
        const direct = aggregate(klEstimate(lp, ref, kind, { responseMask: m }), m, agg, {
          normLen,
        });
        expect(
          Object.is(klLoss(lp, ref, kind, agg, { responseMask: m, normLen }).loss, direct),
        ).toBe(true);
      }
    }
  });

  test("gradient: per-token closed forms of the four estimators", () => {
    // token_mean over one token (w = 1), δ = ref − lp = −1: k1 → 1; k2 → lp − ref = 1;
    // k3 → −expm1(−1) = 1 − e^−1; abs → −sign(δ) = 1.
    const one = (kind: (typeof KL_ESTIMATORS)[number]) =>
      klLoss([[-0.5]], [[-1.5]], kind, "token_mean", { responseMask: [[true]] }).gradLogprobs
        .data[0];
    expect(one("k1")).toBe(1);
    expect(one("k2")).toBe(1);
    expect(one("k3")).toBe(-Math.expm1(-1));
    expect(one("abs")).toBe(1);
  });

  test("conformance: matches polgrad 0.2.0 on every recorded kl case", () => {
    type Rows = FixtureNumber[][];
    interface Args {
      logprobs?: Rows;
      ref_logprobs: Rows;
      old_logprobs?: Rows;
      token_rewards?: Rows;
      kind?: "k1";
      coef?: number;
      aggregation?: "token_mean";
      response_mask: boolean[][];
      norm_len?: number | null;
    }
    const f = loadPolgradFixture<{
      cases: { name: string; function: string; args: Args; outputs: Record<string, unknown> }[];
    }>("kl.json");
    expect(f.cases.length).toBe(48);
    for (const c of f.cases) {
      const a = c.args;
      const o = c.outputs as { loss: number; grad_logprobs: Rows; kl_estimate: Rows; result: Rows };
      if (c.function === "kl_in_reward") {
        const out = klInReward(
          rows(a.token_rewards as Rows),
          rows(a.old_logprobs as Rows),
          rows(a.ref_logprobs),
          a.kind as "k1",
          a.coef as number,
          { responseMask: a.response_mask },
        );
        expect(matrixRelErr(out, o.result), c.name).toBeLessThanOrEqual(1e-12);
        continue;
      }
      const opts = { responseMask: a.response_mask, normLen: a.norm_len ?? null };
      const r =
        c.function === "kl_loss"
          ? klLoss(
              rows(a.logprobs as Rows),
              rows(a.ref_logprobs),
              a.kind as "k1",
              a.aggregation as "token_mean",
              opts,
            )
          : reverseKlGradSurrogate(
              rows(a.logprobs as Rows),
              rows(a.ref_logprobs),
              a.aggregation as "token_mean",
              opts,
            );
      expect(relErr(r.loss, o.loss), c.name).toBeLessThanOrEqual(1e-12);
      expect(matrixRelErr(r.gradLogprobs, o.grad_logprobs), c.name).toBeLessThanOrEqual(1e-12);
      if (c.function === "kl_loss") {
        const est = klEstimate(rows(a.logprobs as Rows), rows(a.ref_logprobs), a.kind as "k1", {
          responseMask: a.response_mask,
        });
        expect(matrixRelErr(est, o.kl_estimate), c.name).toBeLessThanOrEqual(1e-12);
      }
    }
  });
});
