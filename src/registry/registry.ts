/**
 * The nineteen registered algorithms, keyed by their snake_case names
 * (docs/derivations/variants.md).
 */
import { oneOf } from "../core/names.js";
import { cispo } from "./algorithms/cispo.js";
import { dapo } from "./algorithms/dapo.js";
import { dppoKl, dppoTv } from "./algorithms/dppo.js";
import { drGrpo } from "./algorithms/drGrpo.js";
import { gmpo } from "./algorithms/gmpo.js";
import { grpo } from "./algorithms/grpo.js";
import { grpoTis } from "./algorithms/grpoTis.js";
import { gspo } from "./algorithms/gspo.js";
import { gspoToken } from "./algorithms/gspoToken.js";
import { papoD } from "./algorithms/papoD.js";
import { papoG } from "./algorithms/papoG.js";
import { ppo } from "./algorithms/ppo.js";
import { reinforcePP } from "./algorithms/reinforcePP.js";
import { rloo } from "./algorithms/rloo.js";
import { sapo } from "./algorithms/sapo.js";
import { luspo, topEntropy, vespo } from "./algorithms/trlNewer.js";
import type { AlgorithmSpec } from "./spec.js";

/**
 * The name of a registered algorithm.
 *
 * @derivation docs/derivations/variants.md#the-registry
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: exactly the nineteen registered keys
 * @since 0.1.0
 */
export type AlgorithmName =
  | "ppo"
  | "grpo"
  | "dr_grpo"
  | "dapo"
  | "gspo"
  | "gspo_token"
  | "cispo"
  | "rloo"
  | "reinforce_pp"
  | "grpo_tis"
  | "papo_g"
  | "papo_d"
  | "sapo"
  | "gmpo"
  | "dppo_tv"
  | "dppo_kl"
  | "luspo"
  | "vespo"
  | "top_entropy";

/**
 * Every registered algorithm spec by name: exactly nineteen frozen entries, each with `name` equal to
 * its key. The record and every entry are deeply frozen.
 *
 * @derivation docs/derivations/variants.md#the-registry
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: exactly the nineteen registered keys
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: every key equals its entry's name
 * @enforcedBy test/registry/algorithms.test.ts > ALGORITHMS > identity: the record and every entry are deeply frozen
 * @since 0.1.0
 */
export const ALGORITHMS: Readonly<Record<AlgorithmName, AlgorithmSpec>> = Object.freeze({
  ppo,
  grpo,
  dr_grpo: drGrpo,
  dapo,
  gspo,
  gspo_token: gspoToken,
  cispo,
  rloo,
  reinforce_pp: reinforcePP,
  grpo_tis: grpoTis,
  papo_g: papoG,
  papo_d: papoD,
  sapo,
  gmpo,
  dppo_tv: dppoTv,
  dppo_kl: dppoKl,
  luspo,
  vespo,
  top_entropy: topEntropy,
});

/**
 * The registered algorithm names in ascending code-unit order.
 *
 * @derivation docs/derivations/variants.md#the-registry
 * @enforcedBy test/registry/getAlgorithm.test.ts > getAlgorithm > identity: algorithm_names lists the nineteen keys sorted
 * @since 0.1.0
 */
export const ALGORITHM_NAMES: readonly AlgorithmName[] = Object.freeze(
  (Object.keys(ALGORITHMS) as AlgorithmName[]).sort(),
);

/**
 * Look up a registered algorithm spec by name.
 *
 * @param name - The registry key, one of {@link ALGORITHM_NAMES}.
 * @returns The registered spec itself (`getAlgorithm(k) === ALGORITHMS[k]`), deeply frozen.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `name` is not registered; the message lists the
 *   sorted known names and `suggestions` holds the closest ones (e.g. "gropo" → "grpo").
 * @derivation docs/derivations/variants.md#the-registry
 * @enforcedBy test/registry/getAlgorithm.test.ts > getAlgorithm > identity: returns the registered object itself
 * @enforcedBy test/registry/getAlgorithm.test.ts > getAlgorithm > rejects: an unknown name with the closest known name suggested
 * @enforcedBy test/registry/getAlgorithm.test.ts > getAlgorithm > rejects: a non-string name
 * @since 0.1.0
 */
export function getAlgorithm(name: string): AlgorithmSpec {
  return ALGORITHMS[oneOf("getAlgorithm", "name", name, ALGORITHM_NAMES)];
}
