/**
 * Advantage estimators (docs/derivations/advantages.md): per-sequence advantages from grouped
 * rewards — GRPO / Dr.GRPO / batch-scaled group normalization, RLOO leave-one-out, REINFORCE++
 * mean baselines, OPO, GRPO pass@k, GPG — and per-token tools — GAE over right-padded responses,
 * returns-to-go, ReMax, broadcasting `[B]` to `[B, T]`, and masked whitening in verl's and
 * OpenRLHF's forms.
 *
 * Conventions: `[B]` outputs are Float64Array, `[B, T]` outputs are Matrix, exactly 0 at padding.
 * Grouped rewards and GAE/whiten inputs must be finite everywhere (padding included, as in
 * polgrad); every reduction is a compensated sum in a fixed order (ascending batch order within a
 * group; row-major over response positions). Advantages are never differentiated: every loss uses
 * them as constants, sg[A].
 */
export { broadcastToTokens } from "./broadcast.js";
export { type GAEConfig, type GAEOptions, type GAEResult, gae } from "./gae.js";
export { gpgAdvantages } from "./gpg.js";
export type { GroupIdsLike } from "./groups.js";
export {
  DEFAULT_GROUP_NORM,
  GROUP_NORM_SCALES,
  type GroupNormConfig,
  GroupNormScale,
  grpoAdvantages,
  NAN_REWARDS,
  NanRewards,
} from "./grpo.js";
export { type LOOConfig, looAdvantages } from "./loo.js";
export { opoAdvantages } from "./opo.js";
export { type PassAtKConfig, passAtKAdvantages } from "./passAtK.js";
export {
  DEFAULT_REINFORCE_PP_EPS,
  type ReinforcePPConfig,
  reinforcePPAdvantages,
} from "./reinforcePP.js";
export { remaxAdvantages } from "./remax.js";
export {
  MASKED_RETURNS,
  MaskedReturn,
  type ReturnsToGoOptions,
  returnsToGo,
} from "./returns.js";
export { rlooAdvantages } from "./rloo.js";
export { SINGLETON_POLICIES, SingletonPolicy } from "./singletons.js";
export { type WhitenOptions, whiten } from "./whiten.js";
