/** Enforces docs/derivations/losses.md#config-validation: policyLoss rejects bad configs and inputs. */
import { describe, expect, test } from "vitest";
import {
  type ConfigError,
  MaskError,
  NonFiniteError,
  type PolicyLossConfig,
  policyLoss,
  ShapeError,
  UnknownNameError,
} from "../../src/index.js";

const inputs = {
  logprobs: [[-1, -2]],
  oldLogprobs: [[-1.1, -2.1]],
  advantages: [1],
  responseMask: [[true, true]],
};
const base: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
  aggregation: "token_mean",
};

function argOf(
  cfg: PolicyLossConfig,
  extra: Partial<typeof inputs> = {},
): { name: string; arg: string | undefined } {
  try {
    policyLoss(cfg, { ...inputs, ...extra });
  } catch (e) {
    return { name: (e as Error).name, arg: (e as ConfigError).arg };
  }
  throw new Error("expected an error");
}

describe("policyLoss", () => {
  test("rejects: each config rule in polgrad's order", () => {
    const cases: [PolicyLossConfig, string, string][] = [
      [{ ...base, clip: null }, "ConfigError", "config.clip"],
      [{ ...base, clip: { epsLow: null, epsHigh: 0.2 } }, "ConfigError", "config.clip"],
      [
        { ...base, clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 1 } },
        "ConfigError",
        "config.clip.ratioCap",
      ],
      [
        { ...base, clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: Number.POSITIVE_INFINITY } },
        "ConfigError",
        "config.clip.ratioCap",
      ],
      [
        { ...base, surrogate: "cispo", clip: { epsLow: 0.2, epsHigh: null } },
        "ConfigError",
        "config.clip",
      ],
      [
        { ...base, surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.2, ratioCap: 3 } },
        "ConfigError",
        "config.clip.ratioCap",
      ],
      [{ ...base, surrogate: "pg" }, "ConfigError", "config.clip"],
      [
        { ...base, surrogate: "reinforce", clip: null, ratio: "sequence" },
        "ConfigError",
        "config.ratio",
      ],
      [{ ...base, clip: { epsLow: 0, epsHigh: 0.2 } }, "ConfigError", "config.clip.epsLow"],
      [
        { ...base, clip: { epsLow: 0.2, epsHigh: Number.NaN } },
        "ConfigError",
        "config.clip.epsHigh",
      ],
      [
        { ...base, isCorrection: { cap: 0, level: "token" } },
        "ConfigError",
        "config.isCorrection.cap",
      ],
      [
        { ...base, isCorrection: { cap: 2, level: "row" as "token" } },
        "UnknownNameError",
        "config.isCorrection.level",
      ],
      [{ ...base, aggregation: "token_sum_norm" }, "ConfigError", "config.normLen"],
      [
        { ...base, kl: { kind: "k3", coef: 0.1, aggregation: "token_sum_norm" } },
        "ConfigError",
        "config.kl.normLen",
      ],
      [{ ...base, kl: { kind: "k5" as "k3", coef: 0.1 } }, "UnknownNameError", "config.kl.kind"],
      [{ ...base, ratio: "tokens" as "token" }, "UnknownNameError", "config.ratio"],
    ];
    for (const [cfg, name, arg] of cases)
      expect(argOf(cfg), JSON.stringify(cfg)).toEqual({ name, arg });
  });

  test("rejects: missing streams, bad shapes, bad masks and non-finite response values", () => {
    expect(argOf({ ...base, isCorrection: { cap: 2, level: "token" } })).toEqual({
      name: "ConfigError",
      arg: "rolloutLogprobs",
    });
    expect(argOf({ ...base, kl: { kind: "k1", coef: 0.1 } })).toEqual({
      name: "ConfigError",
      arg: "refLogprobs",
    });
    expect(() => policyLoss(base, { ...inputs, oldLogprobs: [[-1]] })).toThrow(ShapeError);
    expect(() => policyLoss(base, { ...inputs, advantages: [1, 2] })).toThrow(ShapeError);
    expect(() => policyLoss(base, { ...inputs, advantages: [[1, 2, 3]] })).toThrow(ShapeError);
    expect(() => policyLoss(base, { ...inputs, responseMask: [[false, false]] })).toThrow(
      MaskError,
    );
    expect(() => policyLoss(base, { ...inputs, logprobs: [[-1, Number.NaN]] })).toThrow(
      NonFiniteError,
    );
    expect(() => policyLoss(base, { ...inputs, advantages: [Number.POSITIVE_INFINITY] })).toThrow(
      NonFiniteError,
    );
    expect(() => policyLoss(base, { ...inputs, advantages: [[1, Number.NaN]] })).toThrow(
      NonFiniteError,
    );
    expect(() => policyLoss({ ...base, surrogate: "nope" as "pg" }, inputs)).toThrow(
      UnknownNameError,
    );
  });

  test("mask invariance: non-finite values at padding are accepted and ignored", () => {
    const r = policyLoss(base, {
      ...inputs,
      logprobs: [[-1, Number.NaN]],
      oldLogprobs: [[-1.1, Number.POSITIVE_INFINITY]],
      advantages: [[1, Number.NEGATIVE_INFINITY]],
      responseMask: [[true, false]],
    });
    expect(Number.isFinite(r.loss)).toBe(true);
    expect(Object.is(r.gradLogprobs.data[1], 0)).toBe(true);
    expect(r.ratio.data[1]).toBe(1);
  });
});
