/**
 * Enforces docs/derivations/variants.md: the ten entries, every shipped constant against its
 * source (spot-checks, one per algorithm), the notes facts, the deep freeze, config validity, and
 * the two independent factors separating grpo from dr_grpo.
 */
import { describe, expect, test } from "vitest";
import { effectiveTokenWeights } from "../../src/aggregate/index.js";
import { ConfigError } from "../../src/errors.js";
import { policyLoss, rlooAdvantages, toRows } from "../../src/index.js";
import { validatePolicyLossConfig } from "../../src/losses/configValidate.js";
import { ALGORITHMS, type AlgorithmSpec } from "../../src/registry/index.js";

/** polgrad's sentinel at masked positions (tests/strategies.py MASKED_JUNK). */
const JUNK = 123;

const KEYS = [
  "ppo",
  "grpo",
  "dr_grpo",
  "dapo",
  "gspo",
  "gspo_token",
  "cispo",
  "rloo",
  "reinforce_pp",
  "grpo_tis",
  "papo_g",
  "papo_d",
  "sapo",
  "gmpo",
  "dppo_tv",
  "dppo_kl",
  "luspo",
  "vespo",
  "top_entropy",
];
const GROUP_STD = { center: true, scale: "std", eps: 1e-4, unbiased: true };
const BUDGET = 8;

/** The spec's loss with dr_grpo's deferred normLen filled in. */
function callable(spec: AlgorithmSpec): AlgorithmSpec["loss"] {
  return spec.loss.aggregation === "token_sum_norm" && spec.loss.normLen == null
    ? { ...spec.loss, normLen: BUDGET }
    : spec.loss;
}

function* walk(x: unknown): Generator<object> {
  if (typeof x === "object" && x !== null) {
    yield x;
    for (const v of Object.values(x)) yield* walk(v);
  }
}

describe("ALGORITHMS", () => {
  test("identity: exactly the nineteen registered keys", () => {
    expect(Object.keys(ALGORITHMS).sort()).toEqual([...KEYS].sort());
  });

  test("identity: every key equals its entry's name", () => {
    for (const [key, spec] of Object.entries(ALGORITHMS)) expect(spec.name).toBe(key);
  });

  test("identity: every entry has a titled citation with an arxiv id or a url and non-empty notes", () => {
    for (const spec of Object.values(ALGORITHMS)) {
      expect(spec.citation.title.length).toBeGreaterThan(0);
      expect(spec.citation.arxiv !== null || spec.citation.url !== null).toBe(true);
      expect(spec.citation.notes.length).toBeGreaterThan(0);
      expect(spec.notes.length).toBeGreaterThan(0);
    }
  });

  test("identity: the record and every entry are deeply frozen", () => {
    expect(Object.isFrozen(ALGORITHMS)).toBe(true);
    for (const spec of Object.values(ALGORITHMS)) {
      for (const part of walk(spec)) expect(Object.isFrozen(part)).toBe(true);
    }
    // ES modules run in strict mode: writes to frozen objects throw.
    expect(() => {
      (ALGORITHMS.grpo.loss.clip as { epsLow: number }).epsLow = 0.3;
    }).toThrow(TypeError);
    expect(() => {
      (ALGORITHMS as Record<string, unknown>).extra = ALGORITHMS.grpo;
    }).toThrow(TypeError);
    expect(ALGORITHMS.grpo.loss.clip?.epsLow).toBe(0.2);
  });

  test("identity: every entry's loss passes policy-loss config validation (dr_grpo after setting normlen)", () => {
    for (const spec of Object.values(ALGORITHMS)) {
      const resolved = validatePolicyLossConfig("policyLoss", callable(spec));
      expect(resolved.kl !== null).toBe(spec.klPlacement === "loss");
    }
  });

  test("rejects: dr_grpo's shipped loss until normlen is set", () => {
    let error: unknown;
    try {
      validatePolicyLossConfig("policyLoss", ALGORITHMS.dr_grpo.loss);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "E_CONFIG", arg: "config.normLen" });
  });

  test("golden: ppo ships the paper constants", () => {
    const s = ALGORITHMS.ppo;
    // arXiv 1707.06347: eq. 7 clip ε = 0.2 (Sec. 3, Table 1); Ê_t over all timesteps → token_mean;
    // GAE γ = 0.99, λ = 0.95 (Tables 3–5); no KL term.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
      aggregation: "token_mean",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantage).toBe("gae");
    expect(s.advantageConfig).toStrictEqual({ gamma: 0.99, lam: 0.95 });
    expect([s.klPlacement, s.klReward, s.citation.arxiv]).toEqual(["none", null, "1707.06347"]);
  });

  test("golden: grpo ships the deepseekmath constants", () => {
    const s = ALGORITHMS.grpo;
    // arXiv 2402.03300: eq. 3 (1/G)Σ_i(1/|o_i|)Σ_t → seq_mean_token_mean; eq. 4 = k3 in the loss
    // at β = 0.04 (Sec. 4.2), aggregation inherited; ε = 0.2 from PPO/TRL/Dr.GRPO (paper silent);
    // group mean/std advantages with polgrad's defaults eps 1e-4, unbiased.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
      aggregation: "seq_mean_token_mean",
      normLen: null,
      isCorrection: null,
      kl: { kind: "k3", coef: 0.04, aggregation: null, normLen: null },
    });
    expect(s.advantageConfig).toStrictEqual(GROUP_STD);
    expect([s.advantage, s.klPlacement, s.klReward, s.citation.arxiv]).toEqual([
      "grpo",
      "loss",
      null,
      "2402.03300",
    ]);
  });

  test("identity: grpo notes say the paper never states its clip value", () => {
    const n = ALGORITHMS.grpo.notes;
    expect(n.includes("never states its value") || n.includes("does not specify")).toBe(true);
  });

  test("golden: dr_grpo ships the paper constants with normlen null", () => {
    const s = ALGORITHMS.dr_grpo;
    // arXiv 2503.20783: token sums / constant budget → token_sum_norm, budget left to the caller;
    // clip 0.2 (Table 6); β = 0 (Table 6: both KL coefficients 0.0); centring without std.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
      aggregation: "token_sum_norm",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantageConfig).toStrictEqual({ ...GROUP_STD, scale: "none" });
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual(["grpo", "none", "2503.20783"]);
  });

  test("golden: dapo ships clip-higher 0.2 / 0.28", () => {
    const s = ALGORITHMS.dapo;
    // arXiv 2503.14476: Clip-Higher ε_low 0.2, ε_high 0.28; eq. 12 1/Σ|o_i| → token_mean; no KL;
    // eq. 9 group mean/std advantages.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null },
      aggregation: "token_mean",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantageConfig).toStrictEqual(GROUP_STD);
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual(["grpo", "none", "2503.14476"]);
  });

  test("golden: gspo ships the 3e-4 / 4e-4 sequence clip", () => {
    const s = ALGORITHMS.gspo;
    // arXiv 2507.18071: eq. 7 sequence ratio; clip ranges 3e-4 / 4e-4; eq. 5 (1/G)Σ_i over
    // row-constant values → seq_mean_token_mean; no KL; eq. 6 group mean/std.
    expect(s.loss).toStrictEqual({
      ratio: "sequence",
      surrogate: "pg_clip",
      clip: { epsLow: 3e-4, epsHigh: 4e-4, ratioCap: null },
      aggregation: "seq_mean_token_mean",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantageConfig).toStrictEqual(GROUP_STD);
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual(["grpo", "none", "2507.18071"]);
  });

  test("identity: gspo_token's loss is gspo's with the sequence_token ratio", () => {
    const s = ALGORITHMS.gspo_token;
    // arXiv 2507.18071 eq. 13–14: same clip ranges and aggregation, stop-gradient token ratio.
    expect(s.loss).toStrictEqual({ ...ALGORITHMS.gspo.loss, ratio: "sequence_token" });
    expect(s.advantageConfig).toStrictEqual(GROUP_STD);
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual(["grpo", "none", "2507.18071"]);
  });

  test("golden: cispo ships a one-sided 0.2 upper bound", () => {
    const s = ALGORITHMS.cispo;
    // arXiv 2506.13585: eq. 4 1/Σ|o_i| → token_mean; one-sided (no lower bound); ε_high 0.2 from
    // verl's default (paper undisclosed); no KL; GRPO advantages.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "cispo",
      clip: { epsLow: null, epsHigh: 0.2, ratioCap: null },
      aggregation: "token_mean",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantageConfig).toStrictEqual(GROUP_STD);
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual(["grpo", "none", "2506.13585"]);
  });

  test("identity: cispo notes say the paper does not disclose eps_high and name verl", () => {
    expect(ALGORITHMS.cispo.notes).toContain("does not disclose");
    expect(ALGORITHMS.cispo.notes).toContain("verl");
  });

  test("golden: rloo ships unclipped reinforce with k1 in the reward at 0.03", () => {
    const s = ALGORITHMS.rloo;
    // arXiv 2402.14740: whole completion = one action → reinforce, seq_mean_token_sum, no clip;
    // R = r − β·log(π/π_ref) = k1 summed in the reward, β = 0.03 (TL;DR, Appendix C); LOO baseline.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "reinforce",
      clip: null,
      aggregation: "seq_mean_token_sum",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantageConfig).toBeNull();
    expect(s.klReward).toStrictEqual({ kind: "k1", coef: 0.03, aggregation: null, normLen: null });
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual([
      "rloo",
      "reward",
      "2402.14740",
    ]);
  });

  test("identity: rloo notes record the anthropic-hh beta 0.10", () => {
    expect(ALGORITHMS.rloo.notes).toContain("0.10");
  });

  test("golden: reinforce_pp ships clip 0.2 and k1 in the reward at 0.001", () => {
    const s = ALGORITHMS.reinforce_pp;
    // arXiv 2501.03262: eq. 1 per-sequence token mean → seq_mean_token_mean; ε = 0.2, β = 0.001
    // (Sec. 4.2.3); eq. 9 KL = k1 at the sampling policy, in the reward; eq. 10 batch norm, eps 1e-8.
    expect(s.loss).toStrictEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null },
      aggregation: "seq_mean_token_mean",
      normLen: null,
      isCorrection: null,
      kl: null,
    });
    expect(s.advantageConfig).toStrictEqual({ batchNorm: true, eps: 1e-8 });
    expect(s.klReward).toStrictEqual({ kind: "k1", coef: 0.001, aggregation: null, normLen: null });
    expect([s.advantage, s.klPlacement, s.citation.arxiv]).toEqual([
      "reinforce_pp",
      "reward",
      "2501.03262",
    ]);
  });

  test("identity: grpo_tis's loss is grpo's plus a token-level cap-10 correction", () => {
    const s = ALGORITHMS.grpo_tis;
    // verl PR #2953: w_t = min(exp(old − rollout), C), token level; C = 10 from the PR's example.
    expect(s.loss.isCorrection).toStrictEqual({ cap: 10, level: "token" });
    expect({ ...s.loss, isCorrection: null }).toStrictEqual(ALGORITHMS.grpo.loss);
    expect(s.advantageConfig).toStrictEqual(ALGORITHMS.grpo.advantageConfig);
    expect([s.advantage, s.klPlacement, s.klReward, s.citation.arxiv]).toEqual([
      "grpo",
      "loss",
      null,
      null,
    ]);
  });

  test("identity: grpo_tis notes record the shipped -1 cap and cite pr 2953", () => {
    const s = ALGORITHMS.grpo_tis;
    expect(s.notes).toContain("-1");
    expect(s.citation.title).toContain("2953");
    expect(s.citation.url).toContain("2953");
  });

  test("identity: on equal-length rows grpo's token weights are norm_len/L times dr_grpo's", () => {
    // B = 2 rows of L = 4 tokens, budget 8: grpo 1/(B·L) = 1/8, dr_grpo 1/(B·8) = 1/16, ratio 8/4 = 2.
    const mask = [
      [1, 1, 1, 1],
      [1, 1, 1, 1],
    ];
    const g = effectiveTokenWeights(mask, ALGORITHMS.grpo.loss.aggregation);
    const d = effectiveTokenWeights(mask, ALGORITHMS.dr_grpo.loss.aggregation, { normLen: BUDGET });
    for (let i = 0; i < 8; i++) expect(g.data[i]).toBe((BUDGET / 4) * (d.data[i] as number));
  });

  test("golden: on ragged rows grpo weights a token by 1/(b·l_i) and dr_grpo by 1/(b·norm_len)", () => {
    // Lengths [3, 1], B = 2: grpo 1/6 and 1/2 (no common scalar to dr_grpo); dr_grpo 1/16 everywhere.
    const mask = [
      [1, 1, 1],
      [1, 0, 0],
    ];
    const g = effectiveTokenWeights(mask, ALGORITHMS.grpo.loss.aggregation);
    const d = effectiveTokenWeights(mask, ALGORITHMS.dr_grpo.loss.aggregation, { normLen: BUDGET });
    expect(Array.from(g.data)).toEqual([1 / 6, 1 / 6, 1 / 6, 1 / 2, 0, 0]);
    expect(Array.from(d.data)).toEqual([1 / 16, 1 / 16, 1 / 16, 1 / 16, 0, 0]);
  });

  test("golden: on polgrad's ragged batch the grpo loss is -14/15 and the dr_grpo loss (norm_len 2) is -0.8, with no equal-length factor between them", () => {
    // polgrad tests/test_cross.py::test_ragged_grpo_dr_grpo_diverge_and_weight_ratio_matches_effective_token_weights:
    // grpo's loss without its KL term and dr_grpo's with norm_len 2, the same [B, T] advantages.
    // Row 0 (L = 1): r = e^(−0.5 + 0.9) = e^0.4 = 1.49 > 1.2, A = 1 → −min(r, 1.2)·1 = −1.2.
    // Row 1 (L = 3): r = 1, A = (1, −1, 2) → (−1, 1, −2), row sum −2.
    // grpo: ((−1.2)/1 + (−2)/3)/2 = −14/15; dr_grpo: (−1.2 − 2)/(B·norm_len) = −3.2/4 = −0.8.
    const inputs = {
      logprobs: [
        [-0.5, JUNK, JUNK],
        [-1.0, -0.5, -2.0],
      ],
      oldLogprobs: [
        [-0.9, JUNK, JUNK],
        [-1.0, -0.5, -2.0],
      ],
      advantages: [
        [1, JUNK, JUNK],
        [1, -1, 2],
      ],
      responseMask: [
        [true, false, false],
        [true, true, true],
      ],
    };
    const grpo = policyLoss({ ...ALGORITHMS.grpo.loss, kl: null }, inputs);
    const dr = policyLoss({ ...ALGORITHMS.dr_grpo.loss, normLen: 2 }, inputs);
    expect(Math.abs(grpo.loss / (-14 / 15) - 1)).toBeLessThanOrEqual(1e-12);
    expect(Math.abs(dr.loss / -0.8 - 1)).toBeLessThanOrEqual(1e-12);
    // On equal lengths L, grpo = (norm_len/L)·dr_grpo; here neither L = 1 (factor 2: −1.6) nor
    // L = 3 (factor 2/3: −0.533) relates them.
    for (const L of [1, 3]) expect(Math.abs(grpo.loss - (2 / L) * dr.loss)).toBeGreaterThan(0.1);
    // Each loss is its weights (1/(B·L_i) and 1/(B·norm_len)) against the shared per-token objective.
    expect(toRows(grpo.perTokenObjective)).toEqual(toRows(dr.perTokenObjective));
    const obj = grpo.perTokenObjective.data;
    for (const [r, w] of [
      [grpo, effectiveTokenWeights(inputs.responseMask, "seq_mean_token_mean")],
      [dr, effectiveTokenWeights(inputs.responseMask, "token_sum_norm", { normLen: 2 })],
    ] as const) {
      const sum = Array.from(obj).reduce((s, x, i) => s + x * (w.data[i] as number), 0);
      expect(r.loss).toBeCloseTo(sum, 15);
    }
  });

  test("golden: the rloo entry fed rlooAdvantages equals manual leave-one-out reinforce: loss exactly 0.875, gradient -A_i/4", () => {
    // polgrad tests/test_cross.py::test_rloo_registry_equals_manual_loo_reinforce_golden.
    // Rewards (1, 0, 2, 4) in groups (0, 0, 1, 1): leave-one-out baselines (0, 1, 4, 2), so
    // A = (1, −1, −2, 2). Masked logprob row sums (−1.5, −2.0, −1.0, −3.0); the reinforce
    // surrogate under seq_mean_token_sum is (1/4)·Σ_i −A_i·Σ_t lp_{i,t}
    // = (1.5 − 2.0 − 2.0 + 6.0)/4 = 0.875, with gradient −A_i/4 = (−0.25, 0.25, 0.5, −0.5) at
    // each response token of row i. Every number is dyadic, so all of it is exact.
    const spec = ALGORITHMS.rloo;
    expect([spec.loss.surrogate, spec.loss.aggregation]).toEqual([
      "reinforce",
      "seq_mean_token_sum",
    ]);
    const rewards = [1, 0, 2, 4];
    const groups = [0, 0, 1, 1];
    const advantages = rlooAdvantages(rewards, groups);
    expect(Array.from(advantages)).toEqual([1, -1, -2, 2]);
    const mask = [
      [true, true],
      [true, false],
      [true, true],
      [true, false],
    ];
    const logprobs = [
      [-0.5, -1.0],
      [-2.0, JUNK],
      [-0.25, -0.75],
      [-3.0, JUNK],
    ];
    const r = policyLoss(spec.loss, {
      logprobs,
      oldLogprobs: logprobs,
      advantages,
      responseMask: mask,
    });
    // Manual composition with explicit loops: A_i = R_i − mean_{j ≠ i, same group} R_j, then
    // mean_i(−A_i·Σ_{t in mask_i} lp_{i,t}).
    const manualA = rewards.map((R, i) => {
      const peers = rewards.filter((_, j) => j !== i && groups[j] === groups[i]);
      return R - peers.reduce((a, b) => a + b, 0) / peers.length;
    });
    const manual =
      logprobs
        .map(
          (row, i) =>
            -(manualA[i] as number) * row.filter((_, t) => mask[i]?.[t]).reduce((a, b) => a + b, 0),
        )
        .reduce((a, b) => a + b, 0) / logprobs.length;
    expect(r.loss).toBe(0.875);
    expect(r.loss).toBe(manual);
    expect(toRows(r.gradLogprobs)).toEqual([
      [-0.25, -0.25],
      [0.25, 0],
      [0.5, 0.5],
      [-0.5, 0],
    ]);
  });

  test("identity: grpo and dr_grpo advantages differ only in the std factor", () => {
    // The second factor: group normalisation with scale std (÷ (σ_g + ε)) versus none; all other
    // knobs of the advantage config coincide.
    expect(ALGORITHMS.grpo.advantageConfig).toStrictEqual({
      ...ALGORITHMS.dr_grpo.advantageConfig,
      scale: "std",
    });
    expect(ALGORITHMS.dr_grpo.advantageConfig).toMatchObject({ scale: "none" });
  });
});
