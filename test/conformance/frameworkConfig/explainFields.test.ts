/**
 * Enforces docs/conformance/explain.md#nearest-algorithm: explain's comparison reads every field of
 * the field table, so two configs that differ in any single field — or in any single sub-field of
 * one — differ in a component (issue 32: it once ignored DRO, DPPO, IPO and VESPO settings and
 * printed a fixed CISPO cap).
 */
import { describe, expect, test } from "vitest";
import { compareConfigs, type PolicyLossConfig } from "../../../src/index.js";
import {
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type SubField,
  type ValueSpec,
} from "../../../src/losses/config.js";
import { validatePolicyLossConfig } from "../../../src/losses/configValidate.js";

const base: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.28 },
  aggregation: "token_mean",
};

/**
 * For each field: a valid config where it is set (its surrogate and aggregation chosen so that it
 * matters) and another that differs only in that field. Typed over every key of PolicyLossConfig:
 * a new field without a case here does not compile.
 */
const CASES: { readonly [K in keyof PolicyLossConfig]-?: [PolicyLossConfig, PolicyLossConfig] } = {
  ratio: [base, { ...base, ratio: "sequence" }],
  surrogate: [base, { ...base, surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.28 } }],
  clip: [base, { ...base, clip: { epsLow: 0.2, epsHigh: 0.2 } }],
  aggregation: [base, { ...base, aggregation: "seq_mean_token_mean" }],
  normLen: [
    { ...base, aggregation: "token_sum_norm", normLen: 1024 },
    { ...base, aggregation: "token_sum_norm", normLen: 4096 },
  ],
  isCorrection: [base, { ...base, isCorrection: { cap: 2, level: "token" } }],
  kl: [base, { ...base, kl: { kind: "k3", coef: 0.04 } }],
  emptyRows: [base, { ...base, emptyRows: "count" }],
  rejection: [
    base,
    { ...base, rejection: [{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2 }] },
  ],
  ratioClamp: [base, { ...base, ratioClamp: { level: "token", lower: -20, upper: 20 } }],
  offPolicyMask: [base, { ...base, offPolicyMask: { threshold: 0.5 } }],
  cispo: [
    { ...base, surrogate: "cispo", clip: null, cispo: { cap: 5 } },
    { ...base, surrogate: "cispo", clip: null, cispo: { cap: 4 } },
  ],
  sapo: [
    { ...base, surrogate: "sapo", clip: null },
    { ...base, surrogate: "sapo", clip: null, sapo: { tauPos: 2 } },
  ],
  vespo: [
    { ...base, surrogate: "vespo", clip: null },
    { ...base, surrogate: "vespo", clip: null, vespo: { kPos: 1 } },
  ],
  dro: [
    { ...base, surrogate: "dro", clip: null, dro: { beta: 0.1 } },
    { ...base, surrogate: "dro", clip: null, dro: { beta: 0.2 } },
  ],
  dppo: [
    { ...base, surrogate: "dppo", clip: null, dppo: { divergence: "tv", low: 0.1, high: 0.2 } },
    { ...base, surrogate: "dppo", clip: null, dppo: { divergence: "tv", low: 0.1, high: 0.3 } },
  ],
  ipo: [
    { ...base, surrogate: "ipo", clip: null },
    { ...base, surrogate: "ipo", clip: null, ipo: { threshold: 0.2 } },
  ],
  rowEpsilon: [
    { ...base, aggregation: "seq_mean_token_mean" },
    { ...base, aggregation: "seq_mean_token_mean", rowEpsilon: 1e-8 },
  ],
  topEntropyQuantile: [base, { ...base, topEntropyQuantile: 0.2 }],
  entropyBonus: [base, { ...base, entropyBonus: { coef: 0.01 } }],
};

/** Second bases, for sub-fields no single change of the first can vary validly. */
const ALT: Partial<Record<keyof PolicyLossConfig, PolicyLossConfig>> = {
  rejection: { ...base, rejection: [{ statistic: "seq_max", estimator: "k3", upper: 0.1 }] },
  ratioClamp: { ...base, ratio: "sequence", ratioClamp: { level: "row", upper: 10 } },
};

/** Another value of the same kind (a few candidates; the test keeps those that validate). */
function others(spec: ValueSpec, v: unknown): unknown[] {
  switch (spec.kind) {
    case "name":
      return spec.names.filter((n) => n !== v);
    case "number": {
      const x = typeof v === "number" ? v : 0.5;
      return [x * 2 + 1, x / 2, x + 0.25, 1, 0.5, 3, -x - 1].filter((y) => y !== x);
    }
    case "boolean":
      return [v !== true];
    default:
      return [];
  }
}

describe("compareConfigs", () => {
  test("property: two configs that differ in any single field differ in a component", () => {
    for (const k of POLICY_LOSS_FIELD_KEYS) {
      const [a, b] = CASES[k];
      validatePolicyLossConfig("test", a);
      validatePolicyLossConfig("test", b);
      expect(compareConfigs(a, b).differences.length, k).toBeGreaterThan(0);
    }
  });

  test("property: two configs that differ in any single sub-field of a field differ in a component", () => {
    let checked = 0;
    for (const k of POLICY_LOSS_FIELD_KEYS) {
      const spec = POLICY_LOSS_FIELDS[k].value as ValueSpec;
      const obj = spec.kind === "object" ? spec : spec.kind === "list" ? spec.item : null;
      if (obj === null) continue;
      const bases = [CASES[k][1], ...(ALT[k] === undefined ? [] : [ALT[k]])];
      for (const [sub, f] of Object.entries(obj.fields) as [string, SubField][]) {
        if (f.value.kind === "object") continue; // its own sub-fields are varied where it is a field
        let valid = 0;
        for (const b of bases) {
          const value = b[k] as Record<string, unknown> | readonly Record<string, unknown>[];
          const item = (Array.isArray(value) ? value[0] : value) as Record<string, unknown>;
          for (const x of others(f.value, item[sub] ?? f.default)) {
            const changed = { ...item, [sub]: x };
            const c = { ...b, [k]: Array.isArray(value) ? [changed] : changed } as PolicyLossConfig;
            try {
              validatePolicyLossConfig("test", c);
            } catch {
              continue;
            }
            valid++;
            expect(
              compareConfigs(b, c).differences.length,
              `${k}.${sub} = ${JSON.stringify(c[k])}`,
            ).toBeGreaterThan(0);
          }
        }
        expect(valid, `${k}.${sub}: no valid variation`).toBeGreaterThan(0);
        checked += valid;
      }
    }
    expect(checked).toBeGreaterThan(60);
  });
});
