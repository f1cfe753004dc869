/**
 * Enforces docs/derivations/losses.md#framework-conformance-of-the-newer-surrogates: the newer
 * surrogates recorded from verl (1dda039b) and TRL (f2cd5771) by tools/record-fixtures/surrogates.py
 * (the real upstream functions, torch autograd, float64) are reproduced by one policy-loss config
 * each, loss and gradient to 1e-12 relative (norm-wise over the gradient). Each variant's config is
 * written out in `CONFIGS` from the upstream semantics in the fixture's description; a variant not
 * mapped yet is listed in `PENDING` with the issue item that builds it, and the test fails when a
 * variant is in neither (no silent skip).
 *
 * Padding: cases whose NaN/Inf padding reaches upstream's outputs (`junk_reaches_output`) are a
 * registered upstream deviation (masks are sacred here): the test asserts that our outputs there are
 * finite and equal to the run with the padding zeroed, and that upstream's differ.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { PolicyLossConfig } from "../../../src/losses/config.js";
import { clipCovInputs, clipCovSelection, klCovSelection } from "../../../src/losses/covariance.js";
import { policyLoss } from "../../../src/losses/policyLoss.js";
import { expectNormwiseClose } from "../../_kit/index.js";

type Num = number | string;
interface Case {
  readonly seed: number;
  readonly junk_reaches_output: boolean;
  readonly inputs: Record<string, unknown>;
  readonly outputs: { readonly loss: Num; readonly grad_logprobs: Num[][] } & Record<
    string,
    unknown
  >;
}
interface Variant {
  readonly name: string;
  readonly framework: "verl" | "trl";
  readonly pin: string;
  readonly setting: Record<string, unknown>;
  readonly cases: readonly Case[];
}
const FX = JSON.parse(
  readFileSync(new URL("../../fixtures/frameworks/surrogates.json", import.meta.url), "utf8"),
) as { readonly variants: readonly Variant[] };

const num = (v: Num): number =>
  typeof v === "number"
    ? v
    : v === "NaN"
      ? Number.NaN
      : v === "Infinity"
        ? Number.POSITIVE_INFINITY
        : Number.NEGATIVE_INFINITY;
const mat = (x: unknown): number[][] => (x as Num[][]).map((r) => r.map(num));
/** `[B]` (TRL's per-sequence advantages) or `[B, T]` (verl's token advantages). */
const adv = (x: unknown): number[] | number[][] =>
  Array.isArray((x as unknown[])[0]) ? mat(x) : (x as Num[]).map(num);

const base = {
  ratio: "token",
  clip: null,
  normLen: null,
  isCorrection: null,
  kl: null,
} as const;
const V20 = { level: "token", lower: -20, upper: 20 } as const;
const aggOf = (v: Variant) =>
  v.name.endsWith(":seq-mean-token-mean") ? "seq_mean_token_mean" : "token_mean";
/** TRL holds the SAPO temperatures as float32 (torch.where over two Python floats). */
const f32 = Math.fround;

/** Our config for each recorded variant (verl: `name`, TRL: `trl:name`). */
const CONFIGS: Readonly<Record<string, (v: Variant) => PolicyLossConfig>> = {
  // verl sapo: ±20 log-ratio clamp, seq-mean-token-mean hard-coded, τ from the config.
  sapo: (v) => {
    const c = v.setting.config as { tau_pos: number; tau_neg: number };
    return {
      ...base,
      surrogate: "sapo",
      aggregation: "seq_mean_token_mean",
      ratioClamp: V20,
      sapo: { tauPos: c.tau_pos, tauNeg: c.tau_neg },
    };
  },
  // verl gspo (GSPO-token): z_b unclamped, log s clamped at 10 (max only), seq-mean-token-mean.
  gspo: () => ({
    ...base,
    ratio: "sequence_token",
    surrogate: "pg_clip",
    clip: { epsLow: 0.2, epsHigh: 0.2 },
    aggregation: "seq_mean_token_mean",
    ratioClamp: { level: "row", upper: 10 },
  }),
  // verl geo_mean (GMPO): sign-aware log-space clip, plain mean over every row.
  geo_mean: (v) => {
    const c = v.setting.config as { clip_ratio_low: number; clip_ratio_high: number };
    return {
      ...base,
      ratio: "sequence",
      surrogate: "pg",
      aggregation: "seq_mean_token_mean",
      emptyRows: "count",
      ratioClamp: {
        level: "token",
        lower: -c.clip_ratio_low,
        upper: c.clip_ratio_high,
        signAware: true,
      },
    };
  },
  dro: (v) => ({
    ...base,
    surrogate: "dro",
    aggregation: aggOf(v),
    dro: { beta: (v.setting.config as { policy_loss: { dro_beta: number } }).policy_loss.dro_beta },
  }),
  dppo_tv: (v) => dppo(v, "tv"),
  dppo_kl: (v) => dppo(v, "kl"),
  // verl gpg: −lp·A.
  gpg: (v) => ({ ...base, surrogate: "reinforce", aggregation: aggOf(v) }),
  // TRL sapo: no ratio clamp, float32 temperatures, the grpo normaliser (max(L, 1) rows).
  "trl:sapo": (v) => {
    const g = v.setting.grpo_config as {
      importance_sampling_level: "token" | "sequence";
      sapo_temperature_pos: number;
      sapo_temperature_neg: number;
    };
    return {
      ...base,
      ratio: g.importance_sampling_level,
      surrogate: "sapo",
      aggregation: "seq_mean_token_mean",
      sapo: { tauPos: f32(g.sapo_temperature_pos), tauNeg: f32(g.sapo_temperature_neg) },
    };
  },
  // TRL luspo at sequence level: the clipped surrogate on the sequence ratio, mean_b(L_b·ℓ_b),
  // which is seq_mean_token_sum (ℓ is constant along a row).
  "trl:luspo:sequence": (v) => {
    const g = v.setting.grpo_config as { epsilon: number; epsilon_high: number | null };
    return {
      ...base,
      ratio: "sequence",
      surrogate: "pg_clip",
      clip: { epsLow: g.epsilon, epsHigh: g.epsilon_high ?? g.epsilon },
      aggregation: "seq_mean_token_sum",
    };
  },
  // TRL OPSM on dapo (token_mean) or grpo (seq-mean-token-mean) clipped losses: the sampling
  // logprobs are vLLM's when given (our rollout stream), else the old ones.
  "trl:opsm-0.5": (v) => {
    const g = v.setting.grpo_config as {
      epsilon: number;
      epsilon_high: number | null;
      loss_type: string;
      importance_sampling_level: "token" | "sequence";
      off_policy_mask_threshold: number;
    };
    return {
      ...base,
      ratio: g.importance_sampling_level,
      surrogate: "pg_clip",
      clip: { epsLow: g.epsilon, epsHigh: g.epsilon_high ?? g.epsilon },
      aggregation: g.loss_type === "grpo" ? "seq_mean_token_mean" : "token_mean",
      offPolicyMask: {
        threshold: g.off_policy_mask_threshold,
        sampling: v.name.endsWith("sampling-logps") ? "rollout" : "old",
      },
    };
  },
  // TRL vespo without an IS ratio: −sg[φ]·A·lp, the dapo normaliser (token_mean).
  "trl:vespo:token": (v) => {
    const g = v.setting.grpo_config as {
      vespo_k_pos: number;
      vespo_lambda_pos: number;
      vespo_k_neg: number;
      vespo_lambda_neg: number;
    };
    return {
      ...base,
      surrogate: "vespo",
      aggregation: "token_mean",
      vespo: {
        kPos: g.vespo_k_pos,
        lambdaPos: g.vespo_lambda_pos,
        kNeg: g.vespo_k_neg,
        lambdaNeg: g.vespo_lambda_neg,
      },
    };
  },
  // TRL cispo: the absolute cap epsilon_high (None → epsilon), the dapo normaliser (N tokens).
  "trl:cispo": (v) => {
    const g = v.setting.grpo_config as { epsilon: number; epsilon_high: number | null };
    return {
      ...base,
      surrogate: "cispo",
      aggregation: "token_mean",
      cispo: { cap: g.epsilon_high ?? g.epsilon },
    };
  },
};

function dppo(v: Variant, divergence: "tv" | "kl"): PolicyLossConfig {
  const c = v.setting.config as {
    clip_ratio_low: number;
    clip_ratio_high: number;
    clip_ratio_c: number;
  };
  return {
    ...base,
    surrogate: "dppo",
    aggregation: aggOf(v),
    ratioClamp: V20,
    dppo: {
      divergence,
      low: c.clip_ratio_low,
      high: c.clip_ratio_high,
      truncation: c.clip_ratio_c,
    },
  };
}

/** A case's streams as the replays read them: the mask as booleans, the float streams decoded. */
function caseStreams(c: Case) {
  return {
    mask: (c.inputs.response_mask as (boolean | number)[][]).map((r) => r.map(Boolean)),
    lp: mat(c.inputs.logprobs),
    old: mat(c.inputs.old_logprobs),
    A: adv(c.inputs.advantages),
  };
}

/** The (b, t) cells of a mask's ones, row-major. */
function cells(mask: { cols: number; data: Uint8Array }): [number, number][] {
  const out: [number, number][] = [];
  mask.data.forEach((x, i) => {
    if (x === 1) out.push([Math.floor(i / mask.cols), i % mask.cols]);
  });
  return out;
}

/** Our loss and gradient against upstream's recorded ones, normwise to 1e-12. */
function expectReplayed(
  got: {
    readonly loss: number;
    readonly gradLogprobs: { rows: number; cols: number; data: Float64Array };
  },
  c: Case,
  what: string,
): void {
  expectNormwiseClose(got.loss, num(c.outputs.loss), 1e-12, `${what}: loss`);
  const g = mat(c.outputs.grad_logprobs);
  expectNormwiseClose(
    got.gradLogprobs,
    { rows: g.length, cols: g[0]?.length ?? 0, data: Float64Array.from(g.flat()) },
    1e-12,
    `${what}: grad`,
  );
}

/** A registered padding deviation: upstream's recorded loss or gradient is not finite. */
function expectUpstreamPoisoned(c: Case, what: string): void {
  const up = [num(c.outputs.loss), ...c.outputs.grad_logprobs.flat().map(num)];
  expect(
    up.some((x) => !Number.isFinite(x)),
    `${what}: upstream is not poisoned`,
  ).toBe(true);
}

/** Variants not replayed yet, each with the issue item that builds its semantics. */
const PENDING: Readonly<Record<string, string>> = {
  entropy_bonus: "issue 13 item 5: the entropy bonus (an entropies input and its gradient)",
  "trl:luspo:token":
    "issue 13 item 6: TRL's token-level luspo averages L_b·ℓ over every [B, T] entry, padding included (a framework-model deviation; our LUSPO keeps padding out)",
  "trl:vespo:token:is-ratio":
    "issue 13 item 5: VESPO with TRL's IS ratio folded into the gamma weight, summed over padding too",
  "trl:top-entropy-0.2": "issue 13 item 5: the top-entropy-quantile token mask",
  "trl:top-entropy-0.5": "issue 13 item 5: the top-entropy-quantile token mask",
  "trl:entropy-bonus": "issue 13 item 5: the entropy bonus, static and adaptive",
};

/** Variants replayed by composition in their own describe block below (not one config). */
const COMPOSED: ReadonlySet<string> = new Set(["kl_cov", "clip_cov"]);

const keyOf = (v: Variant): string => {
  const parts = v.name.split(":");
  // LUSPO's two levels are different semantics: keyed by level.
  const head =
    parts[0] === "luspo"
      ? `luspo:${parts[1]}`
      : parts[0] === "vespo"
        ? parts.join(":")
        : (parts[0] as string);
  return v.framework === "trl" ? `trl:${head}` : head;
};

describe("newer surrogates vs verl and TRL", () => {
  test("identity: every recorded variant is replayed or pending with its issue item (none silent)", () => {
    const silent = FX.variants.filter(
      (v) => !(keyOf(v) in CONFIGS) && !(keyOf(v) in PENDING) && !COMPOSED.has(keyOf(v)),
    );
    expect(silent.map((v) => `${v.framework} ${v.name}`)).toEqual([]);
    expect(FX.variants.filter((v) => keyOf(v) in CONFIGS).length).toBeGreaterThan(15);
  });

  for (const v of FX.variants.filter((x) => keyOf(x) in CONFIGS)) {
    test(`conformance: ${v.framework}@${v.pin} ${v.name} replays to 1e-12`, () => {
      const config = (CONFIGS[keyOf(v)] as (v: Variant) => PolicyLossConfig)(v);
      for (const [k, c] of v.cases.entries()) {
        const mask = (c.inputs.response_mask as (boolean | number)[][]).map((r) => r.map(Boolean));
        const inputs = {
          logprobs: mat(c.inputs.logprobs),
          oldLogprobs: mat(c.inputs.old_logprobs),
          advantages: adv(c.inputs.advantages),
          responseMask: mask,
          rolloutLogprobs:
            c.inputs.sampling_logprobs === undefined ? null : mat(c.inputs.sampling_logprobs),
        };
        const got = policyLoss(config, inputs);
        const what = `${v.name} case ${k} (seed ${c.seed})`;
        if (c.junk_reaches_output) {
          // Registered deviation: upstream lets the NaN/Inf padding through; ours is the
          // zeroed-padding result, finite.
          const zero = (x: number[][]) => x.map((r, b) => r.map((y, t) => (mask[b]?.[t] ? y : 0)));
          const a = inputs.advantages;
          const clean = policyLoss(config, {
            ...inputs,
            logprobs: zero(inputs.logprobs),
            oldLogprobs: zero(inputs.oldLogprobs),
            advantages: Array.isArray(a[0]) ? zero(a as number[][]) : a,
          });
          expect(got.loss, what).toBe(clean.loss);
          expect(Array.from(got.gradLogprobs.data), what).toEqual(
            Array.from(clean.gradLogprobs.data),
          );
          expectUpstreamPoisoned(c, what);
          continue;
        }
        expectReplayed(got, c, what);
      }
    });
  }
});

describe("KL-Cov vs verl", () => {
  // verl kl_cov: −A·r everywhere, + ppo_kl_coef·|lp − old| at the top-k covariance tokens, one
  // aggregation. Ours: the selection (klCovSelection), then pg with a KL term {abs, coef} against
  // ref = old at the selection and lp elsewhere (docs/derivations/losses.md#kl-cov).
  const variants = FX.variants.filter((v) => keyOf(v) === "kl_cov");
  test("identity: the three recorded variants are here", () => {
    expect(variants.map((v) => v.name).sort()).toEqual([
      "kl_cov:ratio-0.2:token-mean",
      "kl_cov:seq-mean-token-mean",
      "kl_cov:token-mean",
    ]);
  });
  for (const v of variants) {
    test(`conformance: ${v.framework}@${v.pin} ${v.name} selections match and the composed loss replays to 1e-12`, () => {
      const pl = (
        v.setting.config as { policy_loss: { kl_cov_ratio: number; ppo_kl_coef: number } }
      ).policy_loss;
      const config: PolicyLossConfig = {
        ...base,
        surrogate: "pg",
        aggregation: aggOf(v),
        kl: { kind: "abs", coef: pl.ppo_kl_coef },
      };
      for (const [k, c] of v.cases.entries()) {
        const what = `${v.name} case ${k} (seed ${c.seed})`;
        const { mask, lp, old, A } = caseStreams(c);
        const sel = klCovSelection(A, lp, mask, { ratio: pl.kl_cov_ratio });
        const T = lp[0]?.length ?? 0;
        expect(cells(sel), `${what}: selection`).toEqual(c.outputs.kl_cov_selected);
        const ref = lp.map((r, b) =>
          r.map((x, t) => (sel.data[b * T + t] === 1 ? (old[b]?.[t] as number) : x)),
        );
        const got = policyLoss(config, {
          logprobs: lp,
          oldLogprobs: old,
          advantages: A,
          responseMask: mask,
          refLogprobs: ref,
        });
        if (c.junk_reaches_output) {
          // Registered deviation, as above: upstream lets the padding through; ours is finite.
          expectUpstreamPoisoned(c, what);
          expect(Number.isFinite(got.loss), what).toBe(true);
          continue;
        }
        expectReplayed(got, c, what);
      }
    });
  }
});

describe("Clip-Cov vs verl", () => {
  // verl clip_cov: pg_clip (no dual clip) with corr = 0 at min(k, n) candidates taken in
  // torch.randperm's order. Ours: clipCovSelection with upstream's recorded permutation (its RNG is
  // torch's), then policyLoss on clipCovInputs with a token IS weight of exactly 1 or 0.
  const variants = FX.variants.filter((v) => keyOf(v) === "clip_cov");
  test("identity: the three recorded variants are here", () => {
    expect(variants.map((v) => v.name).sort()).toEqual([
      "clip_cov:ratio-0.2:token-mean",
      "clip_cov:seq-mean-token-mean",
      "clip_cov:token-mean",
    ]);
  });
  for (const v of variants) {
    test(`conformance: ${v.framework}@${v.pin} ${v.name} candidates and selections match with upstream's permutation, and the composed loss replays to 1e-12`, () => {
      const cfgU = v.setting.config as {
        clip_ratio_low: number;
        clip_ratio_high: number;
        policy_loss: { clip_cov_ratio: number; clip_cov_lb: number; clip_cov_ub: number };
      };
      const clip = { epsLow: cfgU.clip_ratio_low, epsHigh: cfgU.clip_ratio_high };
      const config: PolicyLossConfig = {
        ...base,
        surrogate: "pg_clip",
        clip,
        aggregation: aggOf(v),
        isCorrection: { level: "token", cap: null },
      };
      for (const [k, c] of v.cases.entries()) {
        const what = `${v.name} case ${k} (seed ${c.seed})`;
        const { mask, lp, old, A } = caseStreams(c);
        const perm = c.outputs.clip_cov_randperm as { n: number; perm: number[] };
        const sel = clipCovSelection(A, lp, old, mask, {
          clip,
          ratio: cfgU.policy_loss.clip_cov_ratio,
          lb: cfgU.policy_loss.clip_cov_lb,
          ub: cfgU.policy_loss.clip_cov_ub,
          permutation: perm.perm,
        });
        expect(cells(sel.candidates), `${what}: candidates`).toEqual(c.outputs.clip_cov_candidates);
        // Upstream lists the selection in the permutation's order; ours is a mask (row-major).
        const rowMajor = (xs: [number, number][]) =>
          [...xs].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
        expect(cells(sel.selected), `${what}: selection`).toEqual(
          rowMajor(c.outputs.clip_cov_selected as [number, number][]),
        );
        const got = policyLoss(
          config,
          clipCovInputs(
            { logprobs: lp, oldLogprobs: old, advantages: A, responseMask: mask },
            sel.selected,
          ),
        );
        if (c.junk_reaches_output) {
          expectUpstreamPoisoned(c, what);
          expect(Number.isFinite(got.loss), what).toBe(true);
          continue;
        }
        expectReplayed(got, c, what);
      }
    });
  }
});
