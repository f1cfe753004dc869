/**
 * Enforces docs/derivations/variants.md#sapo, #gmpo and #dppo: the constants the new registry
 * entries ship, each traced in the entry's notes to the paper or the authors' released code, and
 * that each passes the gradient checks `polgrad verify` runs (closed form vs the exact autodiff
 * reference ≤ 1e-13, central differences of the detach-free equivalent).
 */
import { describe, expect, test } from "vitest";
import { ALGORITHMS } from "../../src/registry/index.js";
import { gradcheckLoss } from "../../src/verify/gradcheckLoss.js";
import { checkAgainstReference } from "../../src/verify/referenceCheck.js";

const callable = (
  name: "sapo" | "gmpo" | "dppo_tv" | "dppo_kl" | "luspo" | "vespo" | "top_entropy",
) => {
  const loss = ALGORITHMS[name].loss;
  return loss.aggregation === "token_sum_norm" ? { ...loss, normLen: 8 } : loss;
};

describe("new registry algorithms", () => {
  test("golden: sapo ships the soft gate at τ+ 1 and τ− 1.05 on the token ratio", () => {
    const s = ALGORITHMS.sapo;
    expect(s.loss).toMatchObject({
      ratio: "token",
      surrogate: "sapo",
      clip: null,
      aggregation: "seq_mean_token_mean",
      sapo: { tauPos: 1, tauNeg: 1.05 },
    });
    expect([s.citation.arxiv, s.klPlacement]).toEqual(["2511.20347", "none"]);
    expect(s.notes).toMatch(/1\.0499999523162842/);
  });

  test("golden: gmpo ships the sign-aware log-space clip at 0.4 on the geometric-mean ratio", () => {
    const s = ALGORITHMS.gmpo;
    expect(s.loss).toMatchObject({
      ratio: "sequence",
      surrogate: "pg",
      aggregation: "seq_mean_token_mean",
      ratioClamp: { level: "token", lower: -0.4, upper: 0.4, signAware: true },
      emptyRows: "count",
    });
    expect(s.citation.arxiv).toBe("2507.20673");
    expect(s.notes).toMatch(/defaults are 0\.2/);
  });

  test("golden: dppo_tv and dppo_kl ship the authors' thresholds 0.15 and 0.05", () => {
    expect(ALGORITHMS.dppo_tv.loss.dppo).toEqual({
      divergence: "tv",
      low: 0.15,
      high: 0.15,
      truncation: 10000,
    });
    expect(ALGORITHMS.dppo_kl.loss.dppo).toEqual({
      divergence: "kl",
      low: 0.05,
      high: 0.05,
      truncation: 10000,
    });
    for (const n of ["dppo_tv", "dppo_kl"] as const) {
      expect(ALGORITHMS[n].loss).toMatchObject({
        ratio: "token",
        surrogate: "dppo",
        aggregation: "token_sum_norm",
        ratioClamp: { level: "token", lower: -20, upper: 20 },
      });
      expect(ALGORITHMS[n].citation.arxiv).toBe("2602.04879");
    }
  });

  test("golden: luspo, vespo and top_entropy ship TRL's constants", () => {
    expect(ALGORITHMS.luspo.loss).toMatchObject({
      ratio: "sequence",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "seq_mean_token_sum",
    });
    expect(ALGORITHMS.vespo.loss).toMatchObject({
      ratio: "token",
      surrogate: "vespo",
      aggregation: "token_mean",
      vespo: { kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 },
    });
    expect(ALGORITHMS.top_entropy.loss).toMatchObject({
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.28 },
      aggregation: "token_mean",
      topEntropyQuantile: 0.2,
    });
    expect(
      ["luspo", "vespo", "top_entropy"].map((n) => ALGORITHMS[n as "luspo"].citation.arxiv),
    ).toEqual(["2602.05261", "2602.10693", "2506.01939"]);
  });

  test("gradient: each new entry passes the reference check and the finite-difference gradcheck", () => {
    for (const name of [
      "sapo",
      "gmpo",
      "dppo_tv",
      "dppo_kl",
      "luspo",
      "vespo",
      "top_entropy",
    ] as const) {
      const config = callable(name);
      expect(() => checkAgainstReference(config, { cases: 8, seed: 7 }), name).not.toThrow();
      expect(() => gradcheckLoss(config, { cases: 8, seed: 7 }), name).not.toThrow();
    }
  });
});
