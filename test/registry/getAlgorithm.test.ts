/**
 * Enforces docs/derivations/variants.md#the-registry: lookup returns the registered object and
 * unknown names fail with the sorted known names and a did-you-mean suggestion.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { UnknownNameError } from "../../src/errors.js";
import { ALGORITHM_NAMES, ALGORITHMS, getAlgorithm } from "../../src/registry/index.js";

const SORTED = [
  "cispo",
  "dapo",
  "dppo_kl",
  "dppo_tv",
  "dr_grpo",
  "gmpo",
  "grpo",
  "grpo_tis",
  "gspo",
  "gspo_token",
  "luspo",
  "papo_d",
  "papo_g",
  "ppo",
  "reinforce_pp",
  "rloo",
  "sapo",
  "top_entropy",
  "vespo",
];

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

describe("getAlgorithm", () => {
  test("identity: returns the registered object itself", () => {
    for (const [key, spec] of Object.entries(ALGORITHMS)) expect(getAlgorithm(key)).toBe(spec);
  });

  test("identity: algorithm_names lists the nineteen keys sorted", () => {
    expect(ALGORITHM_NAMES).toEqual(SORTED);
    expect(Object.isFrozen(ALGORITHM_NAMES)).toBe(true);
  });

  test("rejects: an unknown name with the closest known name suggested", () => {
    const e = caught(() => getAlgorithm("gropo"));
    expect(e).toBeInstanceOf(UnknownNameError);
    expect(e).toMatchObject({ code: "E_UNKNOWN_NAME", fn: "getAlgorithm", arg: "name" });
    expect((e as UnknownNameError).suggestions[0]).toBe("grpo");
    // The message lists every known name, in sorted order.
    const message = (e as Error).message;
    const positions = SORTED.map((k) => message.indexOf(`"${k}"`));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  test("property: rejects every string that is not a registered name", () => {
    const known = new Set<string>(ALGORITHM_NAMES);
    const names = fc.oneof(
      fc.string(),
      fc.constantFrom("__proto__", "toString", "constructor", "GRPO", "grpo ", "hasOwnProperty"),
    );
    fc.assert(
      fc.property(
        names.filter((s) => !known.has(s)),
        (s) => {
          expect(caught(() => getAlgorithm(s))).toBeInstanceOf(UnknownNameError);
        },
      ),
      { seed: 20260718, numRuns: 200 },
    );
  });

  test("rejects: a non-string name", () => {
    const e = caught(() => getAlgorithm(42 as unknown as string));
    expect(e).toBeInstanceOf(UnknownNameError);
    expect(e).toMatchObject({ code: "E_UNKNOWN_NAME", arg: "name", suggestions: [] });
  });
});
