/**
 * Coverage of the frameworks' semantics (docs/coverage.md, generated from this table): one row per
 * semantic of the feature table of the framework-semantics survey (verl, OpenRLHF, TRL and
 * others), each expressed by one of our configs or API calls, registered as out of scope with the
 * reason, or still pending with the issue item that builds it. A row is never silent: the
 * coverage test (test/conformance/coverage.test.ts) fails when a row has no status, when an
 * expressed row's policy-loss config does not run, or when an API row names a test that does not
 * exist. Browser-safe data: no `node:` import.
 */

import type { PolicyLossConfig } from "../losses/config.js";
import { ALGORITHMS } from "../registry/registry.js";

/** The section of the feature table a row belongs to. */
export type CoverageSection = "surrogates" | "aggregation" | "advantages" | "kl" | "is_correction";

/** Where a row stands. */
export type CoverageStatus = "expressed" | "out_of_scope" | "pending";

/** One semantic of the feature table. */
export interface CoverageRow {
  /** Stable slug. */
  readonly id: string;
  readonly section: CoverageSection;
  /** The semantic, as the feature table names it. */
  readonly semantic: string;
  /** Who ships it, from the feature table (✔, ~ with a note, ✗). */
  readonly frameworks: { readonly verl: string; readonly openrlhf: string; readonly trl: string };
  readonly status: CoverageStatus;
  /** expressed: the config or call that expresses it, in words a user can type. */
  readonly how?: string;
  /** expressed by a policy-loss config: the config itself (the coverage test runs it). */
  readonly config?: PolicyLossConfig;
  /** The test that pins the semantic (`file > describe > test`). */
  readonly enforcedBy?: string;
  /** out_of_scope: why; pending: the issue item that builds it. */
  readonly reason?: string;
}

const A = ALGORITHMS;
const T = {
  is: "test/losses/isCorrection.test.ts > importance-sampling correction",
  kl: "test/losses/klForms.test.ts > KL clamps and straight-through gradients",
  rs: "test/losses/rejection.test.ts > rejection sampling",
  gl: "test/losses/globalNormalizer.test.ts > global normalisers",
  er: "test/losses/emptyRows.test.ts > rows with no response token",
  gp: "test/advantages/groupPolicies.test.ts",
  ob: "test/advantages/outcomeBaselines.test.ts",
  nw: "test/losses/newSurrogates.test.ts > new surrogates and ratio clamps",
  fx: "test/conformance/frameworks/surrogates.fixtures.test.ts > newer surrogates vs verl and TRL > conformance: ",
} as const;

/** verl's default token-mean GRPO loss shape, the base the IS rows change. */
const tokenGrpo: PolicyLossConfig = { ...A.grpo.loss, aggregation: "token_mean", kl: null };

/** The coverage table, in the feature table's order. */
export const COVERAGE: readonly CoverageRow[] = Object.freeze([
  // Surrogates / ratios
  {
    id: "ppo-clip",
    section: "surrogates",
    semantic: "PPO token clip, ε_lo/ε_hi (clip-higher)",
    frameworks: { verl: "✔", openrlhf: "✔", trl: "✔" },
    status: "expressed",
    how: "surrogate pg_clip, clip {eps_low, eps_high} (registry: ppo, dapo)",
    config: A.dapo.loss,
  },
  {
    id: "dual-clip",
    section: "surrogates",
    semantic: "Dual-clip c",
    frameworks: { verl: "✔ always on (c=3)", openrlhf: "✔ opt", trl: "~ delta" },
    status: "expressed",
    how: "clip.ratio_cap c (verl: 3)",
    config: { ...A.ppo.loss, clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 } },
  },
  {
    id: "ratio-log-clamp",
    section: "surrogates",
    semantic: "Log-ratio clamp ±20 before exp",
    frameworks: { verl: "✔", openrlhf: "✔ (ppo only)", trl: "✗" },
    status: "expressed",
    how: "ratio_clamp {level: token, lower: -20, upper: 20}",
    config: { ...A.dapo.loss, ratioClamp: { level: "token", lower: -20, upper: 20 } },
    enforcedBy: `${T.nw} > golden: verl's ±20 clamp caps a log-ratio of 25 at e^20 with no gradient; GMPO's sign-aware clip binds only on the side of A`,
  },
  {
    id: "gspo",
    section: "surrogates",
    semantic: "GSPO true sequence ratio (grad through mean)",
    frameworks: { verl: "✗", openrlhf: "✔", trl: "✔" },
    status: "expressed",
    how: "ratio sequence (registry: gspo)",
    config: A.gspo.loss,
  },
  {
    id: "gspo-token",
    section: "surrogates",
    semantic: "GSPO-token (sg seq weight)",
    frameworks: { verl: "✔ (log clamp max 10)", openrlhf: "✗", trl: "~ experimental" },
    status: "expressed",
    how: "ratio sequence_token (registry: gspo_token); verl's clamp(log s, max=10): ratio_clamp {level: row, upper: 10}",
    config: { ...A.gspo_token.loss, ratioClamp: { level: "row", upper: 10 } },
    enforcedBy: `${T.fx}verl@1dda039b gspo:clamp-10 replays to 1e-12`,
  },
  {
    id: "reinforce",
    section: "surrogates",
    semantic: "REINFORCE / GPG `−A·logp`",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "surrogate reinforce",
    config: { ...A.grpo.loss, surrogate: "reinforce", clip: null, kl: null },
  },
  {
    id: "pg",
    section: "surrogates",
    semantic: "Unclipped IS PG `−r·A`",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "surrogate pg",
    config: { ...A.grpo.loss, surrogate: "pg", clip: null, kl: null },
  },
  {
    id: "cispo-two-sided",
    section: "surrogates",
    semantic: "CISPO, two-sided `clip(r, 1−ε_lo, 1+ε_hi)`",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "surrogate cispo with clip {eps_low, eps_high}",
    config: { ...A.cispo.loss, clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null } },
  },
  {
    id: "cispo-cap",
    section: "surrogates",
    semantic: "CISPO, absolute upper cap `min(r, ε_max)`",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "surrogate cispo, cispo {cap: ε_max}, clip null (TRL's default ε_max = epsilon = 0.2)",
    config: { ...A.cispo.loss, clip: null, cispo: { cap: 0.2 } },
    enforcedBy: `${T.fx}trl@f2cd5771 cispo:token replays to 1e-12`,
  },
  {
    id: "sapo",
    section: "surrogates",
    semantic: "SAPO soft gate",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "surrogate sapo, sapo {tau_pos, tau_neg} (registry: sapo); verl adds ratio_clamp ±20",
    config: A.sapo.loss,
    enforcedBy: `${T.fx}verl@1dda039b sapo replays to 1e-12`,
  },
  {
    id: "gmpo",
    section: "surrogates",
    semantic: "GMPO geo-mean (log-space sign-aware clip)",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "ratio sequence, surrogate pg, ratio_clamp {level: token, lower, upper, sign_aware: true} (registry: gmpo)",
    config: A.gmpo.loss,
    enforcedBy: `${T.fx}verl@1dda039b geo_mean replays to 1e-12`,
  },
  {
    id: "dro",
    section: "surrogates",
    semantic: "DRO quadratic log-ratio penalty",
    frameworks: { verl: "✔ (new)", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "surrogate dro, dro {beta} (β has no shipped default: verl requires it)",
    config: { ...tokenGrpo, surrogate: "dro", clip: null, dro: { beta: 0.1 } },
    enforcedBy: `${T.fx}verl@1dda039b dro:beta-0.1:token-mean replays to 1e-12`,
  },
  {
    id: "dppo",
    section: "surrogates",
    semantic: "DPPO-TV / DPPO-KL binary-divergence masks",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "surrogate dppo, dppo {divergence: tv | kl, low, high, truncation}, ratio_clamp ±20 (registry: dppo_tv, dppo_kl)",
    config: { ...A.dppo_tv.loss, normLen: 8 },
    enforcedBy: `${T.fx}verl@1dda039b dppo_kl:token-mean replays to 1e-12`,
  },
  {
    id: "ipo-mask",
    section: "surrogates",
    semantic: "IPO absolute-prob mask",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "surrogate ipo, ipo {threshold} (prime-rl's ipo_loss_fn at 559b4477: ε 0.1; old := the inference logprobs, its kl_tau·(log r)² as kl {kind: k2, coef: 2·kl_tau} against them, token_mean over the global token count)",
    config: {
      ratio: "token",
      surrogate: "ipo",
      clip: null,
      aggregation: "token_mean",
      normLen: null,
      isCorrection: null,
      ipo: { threshold: 0.1 },
      kl: { kind: "k2", coef: 0.002 },
    },
    enforcedBy:
      "test/conformance/frameworks/primeRlIpo.fixtures.test.ts > IPO vs prime-rl > conformance: prime-rl@559b4477 ipo default replays to 1e-12",
  },
  {
    id: "top-entropy",
    section: "surrogates",
    semantic: "Top-entropy-quantile token mask",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "top_entropy_quantile ρ with an entropies stream: the policy term keeps the tokens at or above the (1 − ρ) entropy quantile, the denominators and the KL term unmasked (topEntropyMask gives the kept tokens)",
    config: { ...tokenGrpo, topEntropyQuantile: 0.2 },
    enforcedBy:
      "test/conformance/frameworks/surrogates.fixtures.test.ts > entropy terms vs verl and TRL > conformance: trl@f2cd5771 top-entropy-0.2:dapo:token masks and replays to 1e-12",
  },
  {
    id: "entropy-bonus",
    section: "surrogates",
    semantic: "Entropy bonus in loss (static / adaptive)",
    frameworks: { verl: "✔ static", openrlhf: "✔ static", trl: "✔ static + adaptive" },
    status: "expressed",
    how: "entropy_bonus {coef, aggregation} with an entropies stream: loss − coef·agg(H) over the kept tokens, grad_entropies returned (verl: the loss's aggregation; TRL dapo: a global token count); adaptive: appliedEntropyCoef and entropyControllerStep (Skywork-OR1's controller as TRL runs it)",
    config: { ...tokenGrpo, entropyBonus: { coef: 0.01 } },
    enforcedBy:
      "test/conformance/frameworks/surrogates.fixtures.test.ts > entropy terms vs verl and TRL > conformance: trl@f2cd5771 entropy-bonus:adaptive:below-target:dapo:token masks and replays to 1e-12",
  },
  {
    id: "clip-cov",
    section: "surrogates",
    semantic: "Clip-Cov / KL-Cov",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "Clip-Cov: clipCovSelection(A, lp, old, mask, {clip, ratio, lb, ub, permutation | seed}) then surrogate pg_clip with is_correction {level: token, cap: null} on clipCovInputs(inputs, selected) (a weight of exactly 0 at the selected tokens, the denominators kept); KL-Cov: klCovSelection(A, lp, mask, {ratio}) then surrogate pg with kl {kind: abs, coef} against refLogprobs = old at the selected tokens and lp elsewhere",
    enforcedBy:
      "test/conformance/frameworks/surrogates.fixtures.test.ts > Clip-Cov vs verl > conformance: verl@1dda039b clip_cov:token-mean candidates and selections match with upstream's permutation, and the composed loss replays to 1e-12",
  },
  {
    id: "luspo",
    section: "surrogates",
    semantic: "LUSPO",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "ratio sequence, pg_clip, aggregation seq_mean_token_sum (TRL's importance_sampling_level=sequence); TRL's token level reads padding: the trl-luspo-padding row",
    config: {
      ...A.gspo.loss,
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "seq_mean_token_sum",
    },
    enforcedBy: `${T.fx}trl@f2cd5771 luspo:sequence replays to 1e-12`,
  },
  {
    id: "opsm",
    section: "surrogates",
    semantic: "OPSM (negative-A & high-KL rows dropped)",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "off_policy_mask {threshold: δ, sampling: old | rollout} on any surrogate",
    config: { ...A.dapo.loss, offPolicyMask: { threshold: 0.5 } },
    enforcedBy: `${T.fx}trl@f2cd5771 opsm-0.5:dapo:token:sampling-logps replays to 1e-12`,
  },
  {
    id: "vespo",
    section: "surrogates",
    semantic: "VESPO gamma weights",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "surrogate vespo, vespo {k_pos, lambda_pos, k_neg, lambda_neg} ; TRL's vLLM IS ratio: is_correction {level: token} folds Σ clamp(log ρ, ln 1e-8, 20) into the gamma weight (over response tokens; TRL's sum over padding is deviation trl-vespo-is-padding)",
    config: { ...tokenGrpo, surrogate: "vespo", clip: null },
    enforcedBy: `${T.fx}trl@f2cd5771 vespo:token replays to 1e-12`,
  },
  {
    id: "papo",
    section: "surrogates",
    semantic: "PAPO perception KL + double entropy",
    frameworks: {
      verl: "✗ (official code is a verl fork)",
      openrlhf: "✗",
      trl: "✔ v0.29.1–v1.7.1",
    },
    status: "expressed",
    how: "papoLoss with the trl or official form (registry: papo_g, papo_d)",
    enforcedBy:
      "test/losses/papo.golden.test.ts > papoLoss > golden: trl form on a 2x2 ragged batch",
  },
  {
    id: "value-loss",
    section: "surrogates",
    semantic: "Value loss, clipped, ½ factor",
    frameworks: { verl: "✔", openrlhf: "✔", trl: "—" },
    status: "expressed",
    how: "valueLoss(values, oldValues, returns, {clip, aggregation})",
    enforcedBy:
      "test/losses/valueLoss.test.ts > valueLoss > golden: clipped token_mean loss 0.7225",
  },
  // Aggregation
  {
    id: "token-mean",
    section: "aggregation",
    semantic: "token-mean (local)",
    frameworks: { verl: "✔ fallback", openrlhf: "✔ fallback", trl: "✔ `bnpo`" },
    status: "expressed",
    how: "aggregation token_mean",
    config: tokenGrpo,
  },
  {
    id: "token-mean-global",
    section: "aggregation",
    semantic: "token-mean over global mini-batch / GA window (dp_size·Σ/N_global)",
    frameworks: { verl: "✔ default", openrlhf: "✔ default (#1249)", trl: "✔ `dapo`" },
    status: "expressed",
    how: "aggregation token_mean with options.global {tokens: N_global, dpSize: D} (CLI --global-tokens, --dp-size)",
    config: tokenGrpo,
    enforcedBy: `${T.gl} > golden: verl's global token-mean on a shard: D·Σ objective / N_global`,
  },
  {
    id: "token-sum",
    section: "aggregation",
    semantic: "token-sum",
    frameworks: { verl: "✔ (new)", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "aggregation token_sum (D·Σ m·ℓ with options.global {dpSize: D})",
    config: { ...tokenGrpo, aggregation: "token_sum" },
    enforcedBy:
      "test/aggregate/effectiveTokenWeights.test.ts > effectiveTokenWeights > golden: weights of the five modes on lengths [2, 1]",
  },
  {
    id: "seq-mean-token-mean",
    section: "aggregation",
    semantic: "seq-mean-token-mean (`L_b + 1e-8`)",
    frameworks: { verl: "✔", openrlhf: "✔ sample mode", trl: "✔ `grpo`/`sapo`" },
    status: "expressed",
    how: "aggregation seq_mean_token_mean (exact L_b; verl's +1e-8 is a registered deviation)",
    config: A.grpo.loss,
  },
  {
    id: "seq-mean-token-sum",
    section: "aggregation",
    semantic: "seq-mean-token-sum",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "aggregation seq_mean_token_sum",
    config: { ...A.grpo.loss, aggregation: "seq_mean_token_sum" },
  },
  {
    id: "dr-grpo-divisor",
    section: "aggregation",
    semantic: "Dr.GRPO constant divisor",
    frameworks: { verl: "~ `loss_scale_factor`", openrlhf: "✗", trl: "✔ `dr_grpo`" },
    status: "expressed",
    how: "aggregation token_sum_norm with norm_len (registry: dr_grpo); verl's padded width and per-micro-batch longest row via microbatchTokenWeights normLenFrom padded_width / microbatch_max",
    config: { ...A.dr_grpo.loss, normLen: 8 },
  },
  {
    id: "seq-mean-global-rows",
    section: "aggregation",
    semantic: "Seq-mean denominator = configured global batch (masked rows count)",
    frameworks: { verl: "✔", openrlhf: "✔ (non-empty rows counted)", trl: "—" },
    status: "expressed",
    how: "empty_rows count, options.global {rows: B_global} (CLI --global-rows)",
    config: { ...A.grpo.loss, emptyRows: "count" },
    enforcedBy: `${T.er} > golden: seq_mean_token_mean counts the empty row in B (TRL's ((ℓ·m).sum(−1) / m.sum(−1).clamp(min=1)).mean()) or drops it`,
  },
  {
    id: "luspo-aggregation",
    section: "aggregation",
    semantic: "LUSPO `mean_b(L_b·ℓ_b)`",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "aggregation seq_mean_token_sum on a row-constant term (sequence ratio): (1/B)·Σ_b Σ_t ℓ = (1/B)·Σ_b L_b·ℓ_b",
    config: {
      ...A.gspo.loss,
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "seq_mean_token_sum",
    },
    enforcedBy: `${T.fx}trl@f2cd5771 luspo:sequence replays to 1e-12`,
  },
  {
    id: "gmpo-row-mean",
    section: "aggregation",
    semantic: "GMPO plain row mean (ignores global info)",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "aggregation seq_mean_token_mean with empty_rows count and no global context (registry: gmpo)",
    config: A.gmpo.loss,
    enforcedBy: `${T.fx}verl@1dda039b geo_mean:clip-0.4:row-advantages replays to 1e-12`,
  },
  {
    id: "microbatch-weights",
    section: "aggregation",
    semantic: "Closed-form micro-batch / GA weights",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "microbatchTokenWeights(mask, mode, sizes, {lossScale, global, emptyRows, normLenFrom})",
    enforcedBy:
      "test/aggregate/microbatchTokenWeights.test.ts > microbatchTokenWeights > identity: with a global context, equals the gradient of the accumulation loop of policyLoss shards, every mode",
  },
  // Advantages
  {
    id: "gae",
    section: "advantages",
    semantic: "GAE",
    frameworks: { verl: "✔ (skips observation tokens)", openrlhf: "✔", trl: "—" },
    status: "expressed",
    how: "gae(rewards, values, {gamma, lam}, mask) then whiten (verl) or whiten {unbiased: false, epsForm: floor} (OpenRLHF); interior spans: the gae-observation row",
    enforcedBy:
      "test/advantages/gae.test.ts > gae > golden: ragged batch at gamma = lam = 1/2 with junk in the padding",
  },
  {
    id: "gae-observation",
    section: "advantages",
    semantic: "GAE skipping observation tokens (interior mask spans)",
    frameworks: { verl: "✔", openrlhf: "~ (zeroed steps)", trl: "—" },
    status: "expressed",
    how: "gae(r, V, {gamma, lam}, m, {masked: carry}) then whiten (verl); {masked: zero} (OpenRLHF: masked steps with r = V = 0)",
    enforcedBy:
      "test/conformance/frameworks/gaeKlControl.fixtures.test.ts > gae and kl controllers vs verl and OpenRLHF > conformance: verl@1dda039b gae interior (0.99, 0.95) replays to 1e-12",
  },
  {
    id: "grpo",
    section: "advantages",
    semantic: "GRPO group mean/std",
    frameworks: { verl: "✔ ε=1e-6; singleton → R/(1+ε)", openrlhf: "✔ ε=1e-9", trl: "✔ ε=1e-4" },
    status: "expressed",
    how: "grpoAdvantages(r, g, {eps}) — verl {eps: 1e-6, singletons: unit}, OpenRLHF {eps: 1e-9}, TRL {eps: 1e-4}",
    enforcedBy: `${T.gp} > grpoAdvantages > golden: each singleton policy on a singleton group of reward 3`,
  },
  {
    id: "dr-grpo-adv",
    section: "advantages",
    semantic: "Dr.GRPO (no std)",
    frameworks: { verl: "✔", openrlhf: "✔ `dr_grpo`", trl: '✔ `scale_rewards="none"`' },
    status: "expressed",
    how: "grpoAdvantages(r, g, {scale: none})",
    enforcedBy:
      "test/advantages/grpo.test.ts > grpoAdvantages > golden: a singleton group gets 0 under scale none",
  },
  {
    id: "batch-std",
    section: "advantages",
    semantic: "Batch-std scaling with group-mean centering",
    frameworks: { verl: "✗", openrlhf: "✗", trl: '✔ `scale_rewards="batch"`' },
    status: "expressed",
    how: "grpoAdvantages(r, g, {scale: batch})",
    enforcedBy: `${T.gp} > grpoAdvantages > golden: batch scaling centres by the group mean and divides by the batch std`,
  },
  {
    id: "rloo",
    section: "advantages",
    semantic: "RLOO",
    frameworks: { verl: "✔ (loop: singleton = raw R; vectorized: 0)", openrlhf: "✔", trl: "✗" },
    status: "expressed",
    how: "rlooAdvantages(r, g, {singletons: raw | zero})",
    enforcedBy: `${T.gp} > rlooAdvantages > golden: singletons raw keep R and zero give 0, the other groups unchanged bitwise`,
  },
  {
    id: "loo-std",
    section: "advantages",
    semantic: 'LOO baseline + LOO std ("GRPO" in NeMo)',
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "looAdvantages(r, g, {eps: 1e-6}) (NeMo-RL's GRPO; without the leave-one-out baseline: grpoAdvantages {eps: 1e-6, singletons: zero})",
    enforcedBy:
      "test/conformance/frameworks/nemoLoo.fixtures.test.ts > NeMo-RL's GRPO advantages > conformance: nemo-rl@7ea279ab grpo:float64:leave_one_out=True:normalize=True replays within its tolerance",
  },
  {
    id: "reinforce-pp",
    section: "advantages",
    semantic: "REINFORCE++ (discounted RTG + token-weighted whitening)",
    frameworks: { verl: "✔", openrlhf: "✔", trl: "✗" },
    status: "expressed",
    how: "whiten(returnsToGo(R, m, {gamma, masked: carry}), m) (verl); whiten(returnsToGo(R, m, {gamma, masked: discount}), m, {unbiased: false, epsForm: floor}) (OpenRLHF)",
    enforcedBy:
      "test/advantages/returns.test.ts > returnsToGo > golden: an interior masked span under carry, reset and discount",
  },
  {
    id: "reinforce-pp-baseline",
    section: "advantages",
    semantic: "REINFORCE++-baseline (group mean then token whitening)",
    frameworks: { verl: "✔", openrlhf: "✔", trl: "✗" },
    status: "expressed",
    how: "whiten(broadcastToTokens(reinforcePPAdvantages(r, g, {batchNorm: false, singletons: raw}), m), m) (verl); OpenRLHF's whiten form {unbiased: false, epsForm: floor}",
    enforcedBy: `${T.gp} > whiten > golden: OpenRLHF's biased floor form and centring only on [1, 2, 3, 4]`,
  },
  {
    id: "remax",
    section: "advantages",
    semantic: "ReMax",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "remaxAdvantages(tokenRewards, m, greedyRewards)",
    enforcedBy: `${T.ob} > remaxAdvantages > golden: rewards [0, 0, 2] with baseline 0.5 give [1.5, 1.5, 1.5]`,
  },
  {
    id: "opo",
    section: "advantages",
    semantic: "OPO length-weighted baseline",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "opoAdvantages(r, g, lengths, {singletons: raw})",
    enforcedBy: `${T.ob} > opoAdvantages > golden: rewards [1, 0] with lengths [3, 1] give the baseline 3/4`,
  },
  {
    id: "pass-at-k",
    section: "advantages",
    semantic: "GRPO pass@k",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "passAtKAdvantages(r, g, {scale, eps: 1e-6})",
    enforcedBy: `${T.ob} > passAtKAdvantages > golden: group [1, 3, 2] credits only the 3, by (3 − 2)/(1 + 1e-6)`,
  },
  {
    id: "gpg",
    section: "advantages",
    semantic: "GPG (α = B/#nonzero)",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "gpgAdvantages(r, g, {singletons: raw})",
    enforcedBy: `${T.ob} > gpgAdvantages > golden: rewards [1, 0, 0, 0] in two groups give alpha 4 times the centred rewards`,
  },
  {
    id: "gdpo",
    section: "advantages",
    semantic: "GDPO / normalize-then-sum",
    frameworks: { verl: "✔ (token whitening after)", openrlhf: "✗", trl: "✔ (batch norm after)" },
    status: "expressed",
    how: "verl: whiten(broadcastToTokens(Σ_k w_k·grpoAdvantages(r_k, g, {eps: 1e-6, singletons: unit}), m), m); TRL: grpoAdvantages(Σ_k w_k·grpoAdvantages(r_k, g, {eps: 1e-4, nanRewards: unscorable, singletons: zero}), one group, the same options)",
    enforcedBy:
      "test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: trl@f2cd5771 normalize_then_sum replays within its tolerance",
  },
  {
    id: "optimal-token-baseline",
    section: "advantages",
    semantic: "Optimal token baseline (needs Σπ²)",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "out_of_scope",
    reason:
      "Needs Σ_v π(v)² at every position, a full-vocabulary statistic; polgrad's inputs are the logprobs of the sampled tokens, and full-vocabulary quantities are out of scope (as full-vocab KL is).",
  },
  {
    id: "kl-in-reward-rtg",
    section: "advantages",
    semantic: "KL-in-reward added to outcome advantage as return-to-go",
    frameworks: { verl: "✔ (reward path)", openrlhf: "✔ (default placement)", trl: "✗" },
    status: "expressed",
    how: "returnsToGo(klInReward(outcome at the last token, old, ref, kind, β, {responseMask, clamp}), m, {masked: discount}) (OpenRLHF: clamp {value: 10}, γ = 1 for group estimators; verl low_var_kl: clamp {delta: 20, value: 10})",
    enforcedBy:
      "test/kl/klInReward.test.ts > klInReward > identity: the clamped reward KL is the KL term policyLoss computes with the same clamp, every estimator",
  },
  {
    id: "unscorable",
    section: "advantages",
    semantic: "NaN/unscorable rewards → A=0",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔" },
    status: "expressed",
    how: "grpoAdvantages(r, g, {nanRewards: unscorable, singletons: zero})",
    enforcedBy: `${T.gp} > grpoAdvantages > golden: unscorable rewards are left out of every statistic and get 0`,
  },
  // KL estimators
  ...(["k1", "k2", "abs"] as const).map(
    (kind): CoverageRow => ({
      id: `kl-${kind}`,
      section: "kl",
      semantic: kind,
      frameworks:
        kind === "abs"
          ? { verl: "✔", openrlhf: "✗", trl: "✗" }
          : { verl: "✔", openrlhf: "✔", trl: "✗" },
      status: "expressed",
      how: `kl {kind: ${kind}, coef}`,
      config: { ...A.grpo.loss, kl: { kind, coef: 0.001 } },
    }),
  ),
  {
    id: "kl-k3",
    section: "kl",
    semantic: "k3",
    frameworks: {
      verl: "✔ `low_var_kl` (clamps ±20 / ±10)",
      openrlhf: "✔ (clamp ±10)",
      trl: "✔ unclamped",
    },
    status: "expressed",
    how: "kl {kind: k3, clamp: {delta: 20, value: 10}} (verl), {clamp: {value: 10}} (OpenRLHF), no clamp (TRL)",
    config: { ...A.grpo.loss, kl: { kind: "k3", coef: 0.001, clamp: { delta: 20, value: 10 } } },
    enforcedBy: `${T.kl} > golden: verl's k3 (δ clamped to ±20, the estimate to ±10): at δ = 3 the value is 10 and passes no gradient; at δ = 1 it is e − 2 with gradient 1 − e`,
  },
  {
    id: "kl-full",
    section: "kl",
    semantic: "full-vocab KL",
    frameworks: { verl: "✗ (raises)", openrlhf: "✗", trl: "✗" },
    status: "out_of_scope",
    reason:
      "No framework computes it (verl raises NotImplementedError), and it needs the full next-token distributions, which polgrad's per-token inputs do not carry (polgrad 0.2.0: out of scope too).",
  },
  {
    id: "kl-straight-through",
    section: "kl",
    semantic: "Straight-through `+` (value kX, grad k2)",
    frameworks: { verl: "✔", openrlhf: "PR #1101 (open)", trl: "✗" },
    status: "expressed",
    how: "kl {gradient: straight_through}",
    config: { ...A.grpo.loss, kl: { kind: "k3", coef: 0.001, gradient: "straight_through" } },
    enforcedBy: `${T.kl} > golden: verl's k3+ is k3's value with the gradient of ½δ², −δ = lp − ref`,
  },
  {
    id: "kl-is-weighted",
    section: "kl",
    semantic: 'IS-weighted ("unbiased") KL',
    frameworks: { verl: "✗", openrlhf: "#1309", trl: "✔ `use_bias_correction_kl`" },
    status: "expressed",
    how: "kl {weight: ratio} (TRL: the ratio not detached) or {weight: ratio_detached}",
    config: { ...A.grpo.loss, kl: { kind: "k3", coef: 0.04, weight: "ratio" } },
    enforcedBy: `${T.kl} > golden: TRL's bias-corrected KL is k3·r with the gradient through r: (k3′ + k3)·r at the token ratio`,
  },
  {
    id: "kl-adaptive",
    section: "kl",
    semantic: "Adaptive KL controller",
    frameworks: { verl: "✔", openrlhf: "✔", trl: "✗" },
    status: "expressed",
    how: "adaptiveKlCoef(coef, currentKl, nSteps, {target, horizon}) per step (fixed: the coefficient unchanged)",
    enforcedBy:
      "test/conformance/frameworks/gaeKlControl.fixtures.test.ts > gae and kl controllers vs verl and OpenRLHF > conformance: openrlhf@3c3be623 adaptive_kl_controller replays bitwise",
  },
  {
    id: "kl-placement",
    section: "kl",
    semantic: "KL as loss vs in reward",
    frameworks: { verl: "both", openrlhf: "both", trl: "loss only" },
    status: "expressed",
    how: "loss: config kl; reward: klInReward (registry klPlacement loss | reward)",
    config: A.grpo.loss,
  },
  // Rollout/trainer IS correction
  {
    id: "tis-token-upper",
    section: "is_correction",
    semantic: "Token TIS, upper only",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✔ `token_truncate`" },
    status: "expressed",
    how: "is_correction {level: token, cap}",
    config: { ...tokenGrpo, isCorrection: { level: "token", cap: 2 } },
  },
  {
    id: "tis-token-two-sided",
    section: "is_correction",
    semantic: "Token TIS, two-sided [lo, hi]",
    frameworks: { verl: "✗", openrlhf: "✔ default [0.5, 5]", trl: "✔ (clip_min)" },
    status: "expressed",
    how: "is_correction {level: token, lower: 0.5, cap: 5}",
    config: { ...tokenGrpo, isCorrection: { level: "token", lower: 0.5, cap: 5 } },
    enforcedBy: `${T.is} > golden: OpenRLHF's two-sided token TIS [0.5, 5] raises e^−1 to 0.5 and lowers e^2 to 5; IcePop zeroes both`,
  },
  {
    id: "tis-sequence",
    section: "is_correction",
    semantic: "Sequence TIS (product)",
    frameworks: { verl: "✔ (log clamp ±20)", openrlhf: "✗", trl: "✔ `sequence_truncate`" },
    status: "expressed",
    how: "is_correction {level: sequence, cap, log_clamp: 20 (verl)}",
    config: { ...tokenGrpo, isCorrection: { level: "sequence", cap: 2, logClamp: 20 } },
  },
  {
    id: "icepop",
    section: "is_correction",
    semantic: "IcePop token mask",
    frameworks: { verl: '✔ `"lo_hi"`', openrlhf: "✔", trl: "✔ `token_mask`" },
    status: "expressed",
    how: "is_correction {level: token, mode: mask, lower, cap}",
    config: { ...tokenGrpo, isCorrection: { level: "token", mode: "mask", lower: 0.5, cap: 5 } },
  },
  {
    id: "mis-sequence",
    section: "is_correction",
    semantic: "Sequence MIS (mask + keep weight)",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✔ `sequence_mask` (TRL default, cap 3)" },
    status: "expressed",
    how: "is_correction {level: sequence, mode: mask, cap: 3}",
    config: { ...tokenGrpo, isCorrection: { level: "sequence", mode: "mask", cap: 3 } },
    enforcedBy: `${T.is} > golden: TRL's default sequence_mask (cap 3) zeroes a row whose product of weights exceeds 3, and the row still counts in the token mean`,
  },
  {
    id: "seq-mask-tis",
    section: "is_correction",
    semantic: "seq-mask-tis (geometric-mean row filter, raw token ρ)",
    frameworks: { verl: "✗", openrlhf: "✔", trl: "✗" },
    status: "expressed",
    how: "is_correction {level: token, cap: null, row_mask: {level: geometric, lower: 0.5, cap: 5}}",
    config: {
      ...tokenGrpo,
      isCorrection: {
        level: "token",
        cap: null,
        rowMask: { level: "geometric", lower: 0.5, cap: 5 },
      },
    },
    enforcedBy: `${T.is} > golden: OpenRLHF's seq-mask-tis keeps a row whose geometric-mean weight is inside [0.5, 5] with its raw token weights, and zeroes the others`,
  },
  {
    id: "rejection-sampling",
    section: "is_correction",
    semantic: "Rejection sampling token/seq_sum/seq_mean/seq_max × k1/k2/k3",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "rejection [{statistic, estimator, lower, upper, log_clamp}] with empty_rows",
    config: {
      ...tokenGrpo,
      emptyRows: "count",
      rejection: [{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2, logClamp: null }],
    },
    enforcedBy: `${T.rs} > golden: a token whose k1 = −lr leaves [ln 0.5, ln 2] is taken out of its row's mean`,
  },
  {
    id: "is-batch-normalize",
    section: "is_correction",
    semantic: "IS batch-normalization to mean 1",
    frameworks: { verl: "✔", openrlhf: "✗", trl: "✗" },
    status: "expressed",
    how: "is_correction {normalize: true}",
    config: { ...tokenGrpo, isCorrection: { level: "token", cap: 2, normalize: true } },
    enforcedBy: `${T.is} > golden: verl's batch normalisation divides the token weights by their mean, and leaves them when the mean is at most 1e-8`,
  },
  {
    id: "bypass",
    section: "is_correction",
    semantic: "Bypass mode (old := rollout)",
    frameworks: { verl: "✔", openrlhf: "~ (GSPO+IS)", trl: "✗" },
    status: "expressed",
    how: "PPO-clip: pg_clip with oldLogprobs := rollout. REINFORCE: reinforce + is_correction + rejection with oldLogprobs := logprobs (data), options.global.tokens = the pre-rejection count. PPO-clip with rejection sampling is not expressible yet (docs/derivations/losses.md#bypass-mode)",
    config: {
      ...tokenGrpo,
      surrogate: "reinforce",
      clip: null,
      isCorrection: { level: "token", cap: 2 },
      emptyRows: "count",
      rejection: [{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2, logClamp: null }],
    },
    enforcedBy:
      "test/losses/bypass.test.ts > bypass mode > golden: verl's bypass REINFORCE is reinforce × sg[min(e^(lp − rollout), 2)] over the kept tokens, divided by the pre-rejection count",
  },
  {
    id: "top-p-keep-mask",
    section: "is_correction",
    semantic: "Top-p/top-k keep-mask replay",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✗ (PR #7269 closed)" },
    status: "out_of_scope",
    reason:
      "Shipped by none of verl, OpenRLHF and TRL (slime and prime-rl only), and the replay needs the sampler's per-position keep set over the vocabulary, which polgrad's per-token inputs do not carry.",
  },
  {
    id: "mismatch-diagnostics",
    section: "is_correction",
    semantic: "Mismatch diagnostics (KL/χ²/ESS/PPL)",
    frameworks: { verl: "✔", openrlhf: "~ vllm_kl", trl: "~ logp diff, IS min/mean/max" },
    status: "expressed",
    how: "logprobMismatch, diagnoseBatch (ESS, k1/k2/k3 drift); polgrad diagnose",
    enforcedBy:
      "test/diagnostics/mismatch.test.ts > logprobMismatch > golden: gaps [0.2, -0.6, 1.0] with catastrophic gap 0.7",
  },
  // Measured upstream beyond the table (issue 13, item 6)
  {
    id: "trl-luspo-padding",
    section: "aggregation",
    semantic: "TRL `luspo` at token level: padding reaches the loss and its gradient (deviation)",
    frameworks: { verl: "✗", openrlhf: "✗", trl: "✔ (deviation)" },
    status: "expressed",
    how: "trlLuspoTokenLoss (a framework model on the algebra: pg_clip over an all-ones mask with advantages A_b·L_b, token_mean; deviation trl-luspo-token-padding); our own LUSPO is ratio sequence with seq_mean_token_sum and keeps padding out",
    enforcedBy:
      "test/conformance/frameworks/surrogates.fixtures.test.ts > TRL luspo at token level > conformance: trl@f2cd5771 luspo:token replays to 1e-12 (padding included), and non-finite padding is a typed error where upstream is NaN",
  },
]);

/** The section titles, in table order. */
export const COVERAGE_SECTIONS: Readonly<Record<CoverageSection, string>> = Object.freeze({
  surrogates: "Surrogates / ratios",
  aggregation: "Aggregation",
  advantages: "Advantages",
  kl: "KL estimators",
  is_correction: "Rollout/trainer IS correction",
});
