import { checkFlag, isNumberArray, requireArrayOf, toVector } from "../core/validate.js";
import { fail, ShapeError } from "../errors.js";

/** Require `groupIds` to be integer labels, one per reward (the production estimators' rule). */
function checkGroupIdsOf(fn: string, rewards: unknown, groupIds: unknown): void {
  const n = isNumberArray(rewards)
    ? rewards.length
    : toVector(fn, "rewards", rewards as number[]).length;
  requireArrayOf(
    fn,
    "groupIds",
    groupIds,
    `an array of ${n} integer group labels (one per reward)`,
    Number.isInteger,
  );
  if ((groupIds as unknown[]).length !== n)
    throw fail(
      ShapeError,
      fn,
      "groupIds",
      `of length ${n} (one per reward)`,
      `length ${(groupIds as unknown[]).length}`,
    );
}

function groupsOf(ids: readonly number[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  ids.forEach((g, i) => {
    groups.set(g, [...(groups.get(g) ?? []), i]);
  });
  return groups;
}

/**
 * verl's GRPO outcome advantage (ε = 1e-6, Bessel std; singleton: mean 0, std 1).
 *
 * Formula: A_i = (R_i − μ_g)/(σ_g + ε) for |g| ≥ 2; A_i = R_i/(1 + ε) for a singleton.
 *
 * @param rewards - `[B]` rewards.
 * @param groupIds - `[B]` group labels.
 * @returns `[B]` advantages.
 * @derivation docs/conformance/deviations.md#advantage-singletons
 * @enforcedBy test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-grpo-singleton
 * @since 0.1.0
 */
export function verlGrpoAdvantages(
  rewards: readonly number[],
  groupIds: readonly number[],
): Float64Array {
  checkGroupIdsOf("verlGrpoAdvantages", rewards, groupIds);
  const r = toVector("verlGrpoAdvantages", "rewards", rewards);
  const out = new Float64Array(r.length);
  for (const members of groupsOf(groupIds).values()) {
    if (members.length === 1) {
      const i = members[0] as number;
      out[i] = ((r[i] as number) - 0) / (1 + 1e-6);
      continue;
    }
    const mean = members.reduce((a, i) => a + (r[i] as number), 0) / members.length;
    const sd = Math.sqrt(
      members.reduce((a, i) => a + ((r[i] as number) - mean) ** 2, 0) / (members.length - 1),
    );
    for (const i of members) out[i] = ((r[i] as number) - mean) / (sd + 1e-6);
  }
  return out;
}

/**
 * verl's RLOO outcome advantage, loop (`rloo`) or vectorized (`rloo_vectorized`) form.
 *
 * Formula: loop A_i = (G/(G−1))·(R_i − μ_g), a singleton keeps R_i; vectorized
 * A_i = (G·R_i − Σ_g R)/max(G − 1, 1)·1[G > 1], a singleton gets 0.
 *
 * @param rewards - `[B]` rewards.
 * @param groupIds - `[B]` group labels.
 * @param vectorized - The vectorized form (default the loop).
 * @returns `[B]` advantages.
 * @derivation docs/conformance/deviations.md#advantage-singletons
 * @enforcedBy test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-rloo-singleton
 * @since 0.1.0
 */
export function verlRlooAdvantages(
  rewards: readonly number[],
  groupIds: readonly number[],
  vectorized = false,
): Float64Array {
  checkGroupIdsOf("verlRlooAdvantages", rewards, groupIds);
  checkFlag("verlRlooAdvantages", "vectorized", vectorized);
  const r = toVector("verlRlooAdvantages", "rewards", rewards);
  const out = new Float64Array(r.length);
  for (const members of groupsOf(groupIds).values()) {
    const G = members.length;
    const S = members.reduce((a, i) => a + (r[i] as number), 0);
    for (const i of members) {
      const x = r[i] as number;
      if (vectorized) out[i] = G > 1 ? (G * x - S) / Math.max(G - 1, 1) : 0;
      else out[i] = G > 1 ? (G / (G - 1)) * (x - S / G) : x;
    }
  }
  return out;
}
