/**
 * The algorithm registry: ten published algorithms (ppo, grpo, dr_grpo, dapo, gspo, gspo_token,
 * cispo, rloo, reinforce_pp, grpo_tis) pinned to exact polgrad configs, each constant traced to
 * its paper or released code, with the knobs a paper leaves unstated named in the entry's notes
 * (docs/derivations/variants.md).
 */
export type { Citation } from "./citation.js";
export { describeAlgorithm } from "./describe.js";
export { ALGORITHM_NAMES, ALGORITHMS, type AlgorithmName, getAlgorithm } from "./registry.js";
export {
  type AdvantageConfig,
  type AdvantageKind,
  type AlgorithmSpec,
  defineAlgorithm,
  type KLPlacement,
} from "./spec.js";
