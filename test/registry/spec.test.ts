/**
 * Enforces docs/derivations/variants.md#what-an-entry-holds: the KL-placement invariant of an
 * algorithm spec, its check order, and the deep freeze.
 */
import { describe, expect, test } from "vitest";
import { ConfigError, UnknownNameError } from "../../src/errors.js";
import type { KLLossConfig } from "../../src/kl/estimator.js";
import { type AlgorithmSpec, defineAlgorithm, type KLPlacement } from "../../src/registry/index.js";

const KL: KLLossConfig = { kind: "k1", coef: 0.1, aggregation: null, normLen: null };

function synthetic(
  placement: KLPlacement,
  lossKl: KLLossConfig | null,
  klReward: KLLossConfig | null,
): AlgorithmSpec {
  return {
    name: "synthetic",
    loss: { ratio: "token", surrogate: "pg", clip: null, aggregation: "token_mean", kl: lossKl },
    advantage: "rloo",
    advantageConfig: null,
    klPlacement: placement,
    klReward,
    citation: { title: "synthetic", arxiv: null, url: "https://example.invalid", notes: "test" },
    notes: "test",
  };
}

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

function expectConfigError(f: () => unknown, arg: string): void {
  const e = caught(f);
  expect(e).toBeInstanceOf(ConfigError);
  expect(e).toMatchObject({ code: "E_CONFIG", fn: "defineAlgorithm", arg });
}

describe("defineAlgorithm", () => {
  test("rejects: placement loss without loss.kl", () => {
    expectConfigError(() => defineAlgorithm(synthetic("loss", null, null)), "spec.loss.kl");
  });

  test("rejects: placement none with loss.kl set", () => {
    expectConfigError(() => defineAlgorithm(synthetic("none", KL, null)), "spec.loss.kl");
  });

  test("rejects: placement reward without klReward", () => {
    expectConfigError(() => defineAlgorithm(synthetic("reward", null, null)), "spec.klReward");
  });

  test("rejects: placement none with klReward set", () => {
    expectConfigError(() => defineAlgorithm(synthetic("none", null, KL)), "spec.klReward");
  });

  test("rejects: placement loss with both kl configs set fails the reward check", () => {
    // The loss check passes (placement loss, loss.kl set); the second, reward check then fires.
    expectConfigError(() => defineAlgorithm(synthetic("loss", KL, KL)), "spec.klReward");
  });

  test("property: exactly the three consistent placement combinations are accepted", () => {
    // Exhaustive over 3 placements × (loss.kl set?) × (klReward set?) = 12 combinations.
    const placements: KLPlacement[] = ["loss", "reward", "none"];
    let accepted = 0;
    for (const placement of placements) {
      for (const lossKl of [null, KL]) {
        for (const klReward of [null, KL]) {
          const lossOk = (placement === "loss") === (lossKl !== null);
          const rewardOk = (placement === "reward") === (klReward !== null);
          const f = () => defineAlgorithm(synthetic(placement, lossKl, klReward));
          if (!lossOk) expectConfigError(f, "spec.loss.kl");
          else if (!rewardOk) expectConfigError(f, "spec.klReward");
          else {
            expect(f().klPlacement).toBe(placement);
            accepted++;
          }
        }
      }
    }
    expect(accepted).toBe(3);
  });

  test("rejects: an unknown kl placement", () => {
    const e = caught(() => defineAlgorithm(synthetic("in-loss" as KLPlacement, null, null)));
    expect(e).toBeInstanceOf(UnknownNameError);
    expect(e).toMatchObject({ code: "E_UNKNOWN_NAME", arg: "spec.klPlacement" });
  });

  test("rejects: an unknown advantage family", () => {
    const spec = {
      ...synthetic("none", null, null),
      advantage: "rlo" as AlgorithmSpec["advantage"],
    };
    const e = caught(() => defineAlgorithm(spec));
    expect(e).toBeInstanceOf(UnknownNameError);
    expect(e).toMatchObject({ code: "E_UNKNOWN_NAME", arg: "spec.advantage" });
    expect((e as UnknownNameError).suggestions[0]).toBe("rloo");
  });

  test("identity: the result is a deeply frozen copy", () => {
    const input = synthetic("reward", null, KL);
    const out = defineAlgorithm(input);
    expect(out).toStrictEqual(input);
    expect(out).not.toBe(input);
    expect(Object.isFrozen(input)).toBe(false);
    expect(Object.isFrozen(KL)).toBe(false);
    for (const part of [out, out.loss, out.citation, out.klReward])
      expect(Object.isFrozen(part)).toBe(true);
    // ES modules run in strict mode, so writing to a frozen property throws a TypeError.
    expect(() => {
      (out.klReward as { coef: number }).coef = 1;
    }).toThrow(TypeError);
  });
});
