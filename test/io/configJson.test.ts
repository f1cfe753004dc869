/**
 * Enforces docs/io.md#config-json: polgrad's snake_case config JSON maps to PolicyLossConfig and
 * back; unknown keys (with did-you-mean), missing keys and wrong JSON types are rejected naming
 * the field path; every config recorded in the polgrad fixtures round-trips.
 */
import { describe, expect, test } from "vitest";
import { ConfigError, UnknownNameError } from "../../src/errors.js";
import { parsePolicyLossConfig, policyLossConfigToJson } from "../../src/io/index.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { loadPolgradFixture } from "../_kit/polgradFixtures.js";
import { expectPolgradError } from "./_kit.js";

const EXAMPLE = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { eps_low: 0.2, eps_high: 0.28, ratio_cap: null },
  aggregation: "token_mean",
  norm_len: null,
  is_correction: { cap: 2.0, level: "token" },
  kl: { kind: "k3", coef: 0.04, aggregation: null, norm_len: null },
};

function withKey(path: readonly string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(EXAMPLE) as Record<string, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[path[path.length - 1] as string] = value;
  return copy;
}

describe("parsePolicyLossConfig", () => {
  test("golden: the example config maps to camelCase", () => {
    const c = parsePolicyLossConfig(EXAMPLE, "example.json");
    expect(c).toEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.28, ratioCap: null },
      aggregation: "token_mean",
      normLen: null,
      isCorrection: { cap: 2, level: "token" },
      kl: { kind: "k3", coef: 0.04, aggregation: null, normLen: null },
    });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.clip)).toBe(true);
  });

  test("golden: omitted nullable fields become null and is_correction.level defaults to token", () => {
    const c = parsePolicyLossConfig(
      {
        ratio: "sequence",
        surrogate: "cispo",
        clip: { eps_high: 4 },
        aggregation: "token_sum_norm",
        is_correction: { cap: 3 },
        kl: { kind: "k1", coef: 0.1 },
      },
      "min.json",
    );
    expect(c).toEqual({
      ratio: "sequence",
      surrogate: "cispo",
      clip: { epsLow: null, epsHigh: 4, ratioCap: null },
      aggregation: "token_sum_norm",
      normLen: null,
      isCorrection: { cap: 3, level: "token" },
      kl: { kind: "k1", coef: 0.1, aggregation: null, normLen: null },
    });
    expect(
      parsePolicyLossConfig({ ratio: "token", surrogate: "pg", aggregation: "token_mean" }, "x")
        .clip,
    ).toBeNull();
  });

  test("rejects: an unknown key with a suggestion", () => {
    const e = expectPolgradError(
      () => parsePolicyLossConfig(withKey(["clip", "eps_hihg"], 0.3), "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.clip.eps_hihg",
    );
    expect(e.message).toContain('did you mean "eps_high"');
    expect(e.message).toContain("c.json");
    const top = expectPolgradError(
      () => parsePolicyLossConfig(withKey(["norm_length"], 4), "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.norm_length",
    );
    expect(top.message).toContain('did you mean "norm_len"');
    expectPolgradError(
      () => parsePolicyLossConfig(withKey(["kl", "coeff"], 1), "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.kl.coeff",
    );
  });

  test("rejects: a wrong json type naming the field path", () => {
    const cases: [string[], unknown, string][] = [
      [["clip", "eps_high"], "0.28", "config.clip.eps_high"],
      [["clip"], [0.2, 0.28], "config.clip"],
      [["norm_len"], "512", "config.norm_len"],
      // (cap null is "no upper bound" since the IS correction generalised; a string is wrong.)
      [["is_correction", "cap"], "2", "config.is_correction.cap"],
      [["is_correction", "mode"], 3, "config.is_correction.mode"],
      [["is_correction", "lower"], "0.5", "config.is_correction.lower"],
      [["kl", "coef"], true, "config.kl.coef"],
      [["kl", "kind"], 3, "config.kl.kind"],
      [["ratio"], null, "config.ratio"],
    ];
    for (const [path, value, arg] of cases) {
      expectPolgradError(
        () => parsePolicyLossConfig(withKey(path, value), "c.json"),
        ConfigError,
        "E_CONFIG",
        arg,
      );
    }
    expectPolgradError(
      () => parsePolicyLossConfig([EXAMPLE], "c.json"),
      ConfigError,
      "E_CONFIG",
      "config",
    );
  });

  test("rejects: a missing required key", () => {
    const { surrogate: _, ...rest } = EXAMPLE;
    const e = expectPolgradError(
      () => parsePolicyLossConfig(rest, "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.surrogate",
    );
    expect(e.message).toContain("missing");
    expectPolgradError(
      () => parsePolicyLossConfig(withKey(["kl"], { coef: 1 }), "c.json"),
      ConfigError,
      "E_CONFIG",
      "config.kl.kind",
    );
  });

  test("rejects: an unknown mode name with a suggestion", () => {
    const e = expectPolgradError(
      () => parsePolicyLossConfig(withKey(["aggregation"], "token_men"), "c.json"),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.aggregation",
    );
    expect(e.suggestions).toContain("token_mean");
    expect(e.message).toContain("c.json");
    expectPolgradError(
      () => parsePolicyLossConfig(withKey(["is_correction", "level"], "seq"), "c.json"),
      UnknownNameError,
      "E_UNKNOWN_NAME",
      "config.is_correction.level",
    );
  });

  test("identity: value rules are left to the losses", () => {
    // eps_high = −1 and norm_len = 2.5 are type-correct; policyLoss's validation rejects them.
    const c = parsePolicyLossConfig(withKey(["clip", "eps_high"], -1), "c.json");
    expect(c.clip?.epsHigh).toBe(-1);
    expect(parsePolicyLossConfig(withKey(["norm_len"], 2.5), "c.json").normLen).toBe(2.5);
  });
});

describe("policyLossConfigToJson", () => {
  test("identity: parse after toJson returns the config", () => {
    const c = parsePolicyLossConfig(EXAMPLE, "example.json");
    expect(policyLossConfigToJson(c)).toEqual(EXAMPLE);
    expect(parsePolicyLossConfig(policyLossConfigToJson(c), "again")).toEqual(c);
  });

  test("golden: omitted optional fields become explicit nulls", () => {
    const c: PolicyLossConfig = {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "token_mean",
    };
    expect(policyLossConfigToJson(c)).toEqual({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { eps_low: 0.2, eps_high: 0.2, ratio_cap: null },
      aggregation: "token_mean",
      norm_len: null,
      is_correction: null,
      kl: null,
    });
  });

  test("identity: round-trips every recorded polgrad fixture config", () => {
    const { cases } = loadPolgradFixture<{ cases: { name: string; config: unknown }[] }>(
      "policy_loss.json",
    );
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases)
      expect(policyLossConfigToJson(parsePolicyLossConfig(c.config, c.name))).toEqual(c.config);
  });
});
