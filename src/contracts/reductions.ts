/**
 * The registered reduction contracts (docs/contracts.md#the-registered-reductions): each names a
 * child configuration, the parent it reduces to, and the parameter value where they coincide.
 */
import { oneOf } from "../core/names.js";
import type { PapoConfig } from "../losses/papoConfig.js";
import { cispo } from "../registry/algorithms/cispo.js";
import { dapo } from "../registry/algorithms/dapo.js";
import { drGrpo } from "../registry/algorithms/drGrpo.js";
import { grpo } from "../registry/algorithms/grpo.js";
import { gspo } from "../registry/algorithms/gspo.js";
import { gspoToken } from "../registry/algorithms/gspoToken.js";
import { papoDLoss, papoDTrlLoss } from "../registry/algorithms/papoD.js";
import { papoGLoss, papoGTrlLoss } from "../registry/algorithms/papoG.js";
import { ppo } from "../registry/algorithms/ppo.js";
import { defineReduction, type ReductionContract } from "./contract.js";

/** A stand-in for ∞ where validation rejects Infinity (every ratio of a real batch is below it). */
const HUGE = 1e300;

const grpoSide = { kind: "policy_loss", label: "grpo", config: grpo.loss } as const;
const dapoSide = { kind: "policy_loss", label: "dapo", config: dapo.loss } as const;
const ppoSide = {
  kind: "policy_loss",
  label: "ppo (token-mean PPO clip)",
  config: ppo.loss,
} as const;

function papoAtZero(base: PapoConfig): PapoConfig {
  return {
    ...base,
    perception: { ...base.perception, gamma: 0 },
    doubleEntropy: base.doubleEntropy === null ? null : { eta1: 0, eta2: 0 },
  };
}

const PAPO_NOTE =
  "papoLoss adds neither term when its value is exactly 0 (a zero coefficient), so the loss and " +
  "the logprob gradient are the parent's bitwise and the masked-stream gradient is exactly 0.";

function papo(
  name: string,
  label: string,
  base: PapoConfig,
  parent: typeof grpoSide | typeof dapoSide,
  trlEntropies: boolean,
): ReductionContract {
  return defineReduction({
    name,
    summary: `${label} at γ = 0${base.doubleEntropy === null ? "" : " and η1 = η2 = 0"} reduces to ${parent.label}`,
    parent,
    child: { kind: "papo", label, config: papoAtZero(base) },
    parameter: {
      name:
        base.doubleEntropy === null
          ? "perception.gamma"
          : "perception.gamma, doubleEntropy.eta1, doubleEntropy.eta2",
      value: 0,
      note: "every PAPO coefficient at zero",
    },
    condition: null,
    relation: "equal",
    exact: { loss: true, gradient: true },
    requires: trlEntropies
      ? ["maskedLogprobs", "entropies", "maskedEntropies"]
      : ["maskedLogprobs"],
    notes: PAPO_NOTE,
  });
}

const papoGToGrpo = papo("papo_g_to_grpo", "papo_g (official form)", papoGLoss, grpoSide, false);
const papoDToDapo = papo("papo_d_to_dapo", "papo_d (official form)", papoDLoss, dapoSide, false);
const papoGTrlToGrpo = papo(
  "papo_g_trl_to_grpo",
  "papo_g (trl form)",
  papoGTrlLoss,
  grpoSide,
  true,
);
const papoDTrlToDapo = papo(
  "papo_d_trl_to_dapo",
  "papo_d (trl form)",
  papoDTrlLoss,
  dapoSide,
  true,
);

const dapoSymmetricToPpo = defineReduction({
  name: "dapo_symmetric_to_ppo",
  summary: "dapo with epsHigh = epsLow reduces to token-mean PPO clip",
  parent: ppoSide,
  child: {
    kind: "policy_loss",
    label: "dapo with epsHigh = epsLow",
    config: { ...dapo.loss, clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: null } },
  },
  parameter: { name: "clip.epsHigh", value: 0.2, note: "equal to clip.epsLow: no Clip-Higher" },
  condition: null,
  relation: "equal",
  exact: { loss: true, gradient: true },
  requires: [],
  notes:
    "DAPO's token-level loss is PPO's clipped surrogate under token_mean; with a symmetric band the " +
    "two configurations are the same data, so every output is identical.",
});

const gspoTokenToGspo = defineReduction({
  name: "gspo_token_to_gspo",
  summary: "gspo_token with one advantage per sequence reduces to gspo",
  parent: { kind: "policy_loss", label: "gspo", config: gspo.loss },
  child: { kind: "policy_loss", label: "gspo_token", config: gspoToken.loss },
  parameter: {
    name: "advantage spread within a row",
    value: 0,
    note: "advantages constant per row",
  },
  condition: "row_constant_advantages",
  relation: "equal",
  exact: { loss: true, gradient: false },
  requires: [],
  notes:
    "The sequence_token ratio's value is sg[s]·exp(z)/sg[exp(z)] = s bitwise, so the loss equals " +
    "gspo's for any advantages. The gradients agree only when ∂L/∂r is constant along the row: " +
    "gspo spreads (Σ_τ ∂L/∂r_τ)·s/L over the row, gspo_token keeps ∂L/∂r_t·s at its token; the " +
    "row sum makes them differ by roundoff, not bitwise.",
});

const dualClipToPgClip = defineReduction({
  name: "dual_clip_to_pg_clip",
  summary: "dual clip with ratioCap → ∞ reduces to pg_clip",
  parent: ppoSide,
  child: {
    kind: "policy_loss",
    label: "ppo with dual clip",
    config: { ...ppo.loss, clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: HUGE } },
  },
  parameter: {
    name: "clip.ratioCap",
    value: HUGE,
    note: "→ ∞; 1e300 stands in, as validation rejects ∞",
  },
  condition: null,
  relation: "equal",
  exact: { loss: true, gradient: true },
  requires: [],
  notes:
    "The cap acts only where c·A > the clipped objective with A < 0, i.e. where r > c; with c = " +
    "1e300 no finite-batch ratio reaches it (that needs logprobs − oldLogprobs > 690), so the " +
    "branch never fires and the arithmetic is the same.",
});

function tis(level: "token" | "sequence"): ReductionContract {
  return defineReduction({
    name: `tis_${level}_to_none`,
    summary: `${level}-level TIS with cap → ∞ on rollout = old reduces to no correction`,
    parent: grpoSide,
    child: {
      kind: "policy_loss",
      label: `grpo with ${level}-level TIS`,
      config: { ...grpo.loss, isCorrection: { cap: HUGE, level } },
    },
    parameter: { name: "isCorrection.cap", value: HUGE, note: "→ ∞; 1e300 stands in" },
    condition: "rollout_equals_old",
    relation: "equal",
    exact: { loss: true, gradient: true },
    requires: [],
    notes:
      "With rolloutLogprobs = oldLogprobs every TIS weight is min(exp(0), cap) = 1 exactly, and " +
      "multiplying by 1 is exact; any cap ≥ 1 would do on this condition, the unbounded cap is " +
      "the published limit.",
  });
}

const tisTokenToNone = tis("token");
const tisSequenceToNone = tis("sequence");

const cispoToReinforce = defineReduction({
  name: "cispo_to_reinforce",
  summary: "cispo on-policy (ratio exactly 1) reduces to REINFORCE",
  parent: {
    kind: "policy_loss",
    label: "reinforce (token_mean)",
    config: { ratio: "token", surrogate: "reinforce", clip: null, aggregation: "token_mean" },
  },
  child: { kind: "policy_loss", label: "cispo", config: cispo.loss },
  parameter: {
    name: "oldLogprobs − logprobs",
    value: 0,
    note: "on-policy: every ratio is exp(0) = 1",
  },
  condition: "on_policy",
  relation: "equal",
  exact: { loss: true, gradient: true },
  requires: [],
  notes:
    "CISPO's weight is sg[clamp(r, ·, 1 + ε_high)]; at r = 1 it is 1 exactly, and 1·A = A, so the " +
    "per-token terms −sg[ŵ]·A·lp and their gradients are REINFORCE's −A·lp bitwise.",
});

const drGrpoToTokenMean = defineReduction({
  name: "dr_grpo_to_token_mean",
  summary: "dr_grpo is token-mean PPO clip rescaled by N/(B·normLen)",
  parent: ppoSide,
  child: { kind: "policy_loss", label: "dr_grpo", config: drGrpo.loss },
  parameter: {
    name: "N/(B·normLen)",
    value: 1,
    note: "the two coincide at normLen = N/B; at any other budget the child is the rescaled parent",
  },
  condition: null,
  relation: "token_sum_norm_rescale",
  exact: { loss: false, gradient: false },
  requires: [],
  notes:
    "token_sum_norm weights are 1/(B·normLen), token_mean's 1/N, so the child equals the parent " +
    "times N/(B·normLen). The two weights are rounded separately, so the comparison is within the " +
    "calibrated tolerance, not bitwise (bitwise when B·normLen = N). normLen defaults to the " +
    "batch's padded width T.",
});

/**
 * The name of a registered reduction contract.
 *
 * @derivation docs/contracts.md#the-registered-reductions
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > identity: names are the keys and entries are deeply frozen
 * @since 0.1.0
 */
export type ReductionName =
  | "papo_g_to_grpo"
  | "papo_d_to_dapo"
  | "papo_g_trl_to_grpo"
  | "papo_d_trl_to_dapo"
  | "dapo_symmetric_to_ppo"
  | "gspo_token_to_gspo"
  | "dual_clip_to_pg_clip"
  | "tis_token_to_none"
  | "tis_sequence_to_none"
  | "cispo_to_reinforce"
  | "dr_grpo_to_token_mean";

/**
 * Every registered reduction contract by name, deeply frozen.
 *
 * @derivation docs/contracts.md#the-registered-reductions
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > identity: names are the keys and entries are deeply frozen
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > property: every registered reduction holds on generated batches in every precision
 * @since 0.1.0
 */
export const REDUCTIONS: Readonly<Record<ReductionName, ReductionContract>> = Object.freeze({
  papo_g_to_grpo: papoGToGrpo,
  papo_d_to_dapo: papoDToDapo,
  papo_g_trl_to_grpo: papoGTrlToGrpo,
  papo_d_trl_to_dapo: papoDTrlToDapo,
  dapo_symmetric_to_ppo: dapoSymmetricToPpo,
  gspo_token_to_gspo: gspoTokenToGspo,
  dual_clip_to_pg_clip: dualClipToPgClip,
  tis_token_to_none: tisTokenToNone,
  tis_sequence_to_none: tisSequenceToNone,
  cispo_to_reinforce: cispoToReinforce,
  dr_grpo_to_token_mean: drGrpoToTokenMean,
});

/**
 * The registered reduction names in registry order.
 *
 * @derivation docs/contracts.md#the-registered-reductions
 * @enforcedBy test/contracts/reductions.test.ts > REDUCTIONS > identity: names are the keys and entries are deeply frozen
 * @since 0.1.0
 */
export const REDUCTION_NAMES: readonly ReductionName[] = Object.freeze(
  Object.keys(REDUCTIONS) as ReductionName[],
);

/**
 * Look up a registered reduction contract by name.
 *
 * @param name - A key of {@link REDUCTIONS}.
 * @returns The registered, frozen contract itself.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `name` is not registered (with suggestions).
 * @derivation docs/contracts.md#the-registered-reductions
 * @enforcedBy test/contracts/reductions.test.ts > getReduction > rejects: an unknown name with the closest registered name suggested
 * @since 0.1.0
 */
export function getReduction(name: string): ReductionContract {
  return REDUCTIONS[oneOf("getReduction", "name", name, REDUCTION_NAMES)];
}
