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
import { trlLuspoTokenLoss } from "../../../src/conformance/frameworks/trlLuspo.js";
import { NonFiniteError } from "../../../src/errors.js";
import type { PolicyLossConfig } from "../../../src/losses/config.js";
import { clipCovInputs, clipCovSelection, klCovSelection } from "../../../src/losses/covariance.js";
import { appliedEntropyCoef, entropyControllerStep } from "../../../src/losses/entropyControl.js";
import { topEntropyMask } from "../../../src/losses/entropyMask.js";
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
const PENDING: Readonly<Record<string, string>> = {};

/** Variants replayed by composition in their own describe block below (not one config). */
const COMPOSED: ReadonlySet<string> = new Set([
  "kl_cov",
  "clip_cov",
  "entropy_bonus",
  "trl:top-entropy-0.2",
  "trl:top-entropy-0.5",
  "trl:entropy-bonus",
  "trl:luspo:token",
  "trl:vespo:token:is-ratio",
]);

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

describe("entropy terms vs verl and TRL", () => {
  // verl: ppo_loss's `policy_loss -= entropy_coeff · agg_loss(H, m, loss_agg_mode)` on the vanilla
  // loss (±20 clamp, dual clip 3): entropyBonus {coef, aggregation: the loss's}. TRL: the top-entropy
  // mask on the policy term (topEntropyQuantile), the bonus as the mean per-token entropy of the
  // kept tokens (grpo) or their Σ over num_items_in_batch (dapo: a global token count of N).
  const variants = FX.variants.filter((v) =>
    ["entropy_bonus", "trl:top-entropy-0.2", "trl:top-entropy-0.5", "trl:entropy-bonus"].includes(
      keyOf(v),
    ),
  );
  test("identity: the nine recorded variants are here", () => {
    expect(variants.length).toBe(9);
  });
  type Grpo = {
    loss_type: string;
    epsilon: number;
    epsilon_high: number | null;
    top_entropy_quantile: number;
    entropy_coef: number;
    use_adaptive_entropy: boolean;
    entropy_target: number;
    entropy_coef_delta: number;
    entropy_coef_min: number;
    entropy_coef_max: number;
  };
  for (const v of variants) {
    test(`conformance: ${v.framework}@${v.pin} ${v.name} masks and replays to 1e-12`, () => {
      for (const [k, c] of v.cases.entries()) {
        const what = `${v.name} case ${k} (seed ${c.seed})`;
        const { mask, lp, old, A } = caseStreams(c);
        const H = mat(c.inputs.entropies);
        const N = mask.flat().filter(Boolean).length;
        let config: PolicyLossConfig;
        let global: { tokens: number } | undefined;
        let controller: { coef: number; lastEntropy: number; g: Grpo } | null = null;
        if (v.framework === "verl") {
          const u = v.setting.config as {
            clip_ratio_low: number;
            clip_ratio_high: number;
            clip_ratio_c: number;
            entropy_coeff: number;
          };
          config = {
            ...base,
            surrogate: "pg_clip",
            clip: {
              epsLow: u.clip_ratio_low,
              epsHigh: u.clip_ratio_high,
              ratioCap: u.clip_ratio_c,
            },
            aggregation: aggOf(v),
            ratioClamp: V20,
            entropyBonus: { coef: u.entropy_coeff, aggregation: aggOf(v) },
          };
        } else {
          const g = v.setting.grpo_config as Grpo;
          const st = v.setting.trainer_state as {
            entropy_coef: number;
            _last_world_entropy: Num;
          };
          const dapo = g.loss_type === "dapo";
          const bonus = g.entropy_coef !== 0 || g.use_adaptive_entropy;
          const settings = {
            target: g.entropy_target,
            delta: g.entropy_coef_delta,
            min: g.entropy_coef_min,
            max: g.entropy_coef_max,
          };
          const state = { coef: st.entropy_coef, lastEntropy: num(st._last_world_entropy) };
          const coef = g.use_adaptive_entropy ? appliedEntropyCoef(state, settings) : state.coef;
          if (g.use_adaptive_entropy) controller = { ...state, g };
          config = {
            ...base,
            surrogate: "pg_clip",
            clip: { epsLow: g.epsilon, epsHigh: g.epsilon_high ?? g.epsilon },
            aggregation: dapo ? "token_mean" : "seq_mean_token_mean",
            emptyRows: "count",
            ...(g.top_entropy_quantile < 1 && { topEntropyQuantile: g.top_entropy_quantile }),
            ...(bonus && { entropyBonus: { coef } }),
          };
          if (dapo) global = { tokens: N };
        }
        const inputs = { logprobs: lp, oldLogprobs: old, advantages: A, responseMask: mask };
        const got = policyLoss(config, { ...inputs, entropies: H }, global && { global });
        if (c.outputs.entropy_mask !== undefined) {
          const kept = topEntropyMask(H, mask, config.topEntropyQuantile as number);
          expect(Array.from(kept.data, Boolean), `${what}: entropy mask`).toEqual(
            (c.outputs.entropy_mask as boolean[][]).flat(),
          );
        }
        if (c.junk_reaches_output) {
          expectUpstreamPoisoned(c, what);
          expect(Number.isFinite(got.loss), what).toBe(true);
          continue;
        }
        expectReplayed(got, c, what);
        if (c.outputs.grad_entropies !== undefined) {
          const g = mat(c.outputs.grad_entropies);
          expectNormwiseClose(
            got.gradEntropies as NonNullable<typeof got.gradEntropies>,
            { rows: g.length, cols: g[0]?.length ?? 0, data: Float64Array.from(g.flat()) },
            1e-12,
            `${what}: grad entropies`,
          );
        }
        if (c.outputs.entropy_loss !== undefined) {
          expectNormwiseClose(
            got.entropyLoss as number,
            num(c.outputs.entropy_loss as Num),
            1e-12,
            `${what}: entropy_loss`,
          );
        }
        if (controller !== null) {
          // The step's window: Σ H·eff and Σ eff over this one micro-batch (one process, GA 1).
          const keep =
            config.topEntropyQuantile == null
              ? null
              : topEntropyMask(H, mask, config.topEntropyQuantile);
          let sum = 0;
          let count = 0;
          mask.forEach((row, b) =>
            row.forEach((on, t) => {
              if (on && (keep === null || keep.data[b * row.length + t] === 1)) {
                sum += H[b]?.[t] as number;
                count++;
              }
            }),
          );
          const { g } = controller;
          const next = entropyControllerStep(
            controller,
            { entropySum: sum, tokenCount: count },
            {
              target: g.entropy_target,
              delta: g.entropy_coef_delta,
              min: g.entropy_coef_min,
              max: g.entropy_coef_max,
            },
          );
          const after = c.outputs.state_after as {
            entropy_coef: number;
            _last_world_entropy: number;
          };
          expect(next.coef, `${what}: coef after`).toBe(after.entropy_coef);
          expectNormwiseClose(
            next.lastEntropy,
            after._last_world_entropy,
            1e-12,
            `${what}: entropy`,
          );
        }
      }
    });
  }
});

describe("TRL luspo at token level", () => {
  // A registered deviation (trl-luspo-token-padding): upstream's mean of L_b·ℓ runs over every
  // [B, T] entry, so the padding's own logprobs enter; trlLuspoTokenLoss models it on the algebra.
  const variants = FX.variants.filter((v) => keyOf(v) === "trl:luspo:token");
  test(`conformance: trl@f2cd5771 luspo:token replays to 1e-12 (padding included), and non-finite padding is a typed error where upstream is NaN`, () => {
    expect(variants.length).toBe(1);
    const v = variants[0] as Variant;
    const g = v.setting.grpo_config as { epsilon: number; epsilon_high: number | null };
    let finiteJunk = 0;
    for (const [k, c] of v.cases.entries()) {
      const what = `${v.name} case ${k} (seed ${c.seed})`;
      const { mask, lp, old, A } = caseStreams(c);
      const run = () =>
        trlLuspoTokenLoss(
          { logprobs: lp, oldLogprobs: old, advantages: A, responseMask: mask },
          { epsilon: g.epsilon, epsilonHigh: g.epsilon_high },
        );
      const up = [num(c.outputs.loss), ...c.outputs.grad_logprobs.flat().map(num)];
      if (up.some((x) => !Number.isFinite(x))) {
        expect(run, what).toThrow(NonFiniteError);
        continue;
      }
      if (c.junk_reaches_output) finiteJunk++;
      expectReplayed(run(), c, what);
    }
    // The deviation shows: finite junk at padding reached upstream's loss, and ours.
    expect(finiteJunk).toBeGreaterThan(0);
  });
});

describe("TRL vespo with its IS ratio", () => {
  // Ours: vespo with isCorrection {level: token}: lw adds Σ_t clamp(log ρ_t, ln 1e-8, 20) over the
  // response tokens and the IS weight is not multiplied in. TRL sums that log over all T positions,
  // padding included (its own IS block writes 1 there, log 1 = 0; these cases hold junk 123): a
  // registered deviation (trl-vespo-is-padding). The replay shows it is the only difference:
  // upstream equals ours once the padding's clamped log sum P_b is moved into the row's log-ratio
  // sum (the old logprob of its first response token lowered by P_b, no clamp binding).
  const variants = FX.variants.filter((v) => keyOf(v) === "trl:vespo:token:is-ratio");
  test("conformance: trl@f2cd5771 vespo:token:is-ratio replays to 1e-12 once the padding's log-IS sum is moved into the row, and differs without", () => {
    expect(variants.length).toBe(1);
    const v = variants[0] as Variant;
    const config: PolicyLossConfig = {
      ...base,
      surrogate: "vespo",
      aggregation: "token_mean",
      isCorrection: { level: "token", cap: null },
    };
    const LOW = Math.log(1e-8);
    let shown = 0;
    for (const [k, c] of v.cases.entries()) {
      const what = `${v.name} case ${k} (seed ${c.seed})`;
      const { mask, lp, old, A } = caseStreams(c);
      const isr = mat(c.inputs.importance_sampling_ratio);
      if (
        [num(c.outputs.loss), ...c.outputs.grad_logprobs.flat().map(num)].some(
          (x) => !Number.isFinite(x),
        )
      ) {
        expectUpstreamPoisoned(c, what);
        continue;
      }
      const P = mask.map((row, b) =>
        row.reduce(
          (acc, on, t) =>
            on ? acc : acc + Math.min(Math.max(Math.log(isr[b]?.[t] as number), LOW), 20),
          0,
        ),
      );
      const zero = (x: number[][]) => x.map((r, b) => r.map((y, t) => (mask[b]?.[t] ? y : 0)));
      const moved = old.map((r, b) => {
        const t0 = mask[b]?.indexOf(true) ?? -1;
        return r.map((y, t) => (t === t0 ? y - (P[b] as number) : y));
      });
      const run = (o: number[][]) =>
        policyLoss(config, {
          logprobs: zero(lp),
          oldLogprobs: zero(o),
          advantages: A,
          responseMask: mask,
          rolloutLogprobs: zero(o).map((r, b) =>
            r.map((y, t) => (mask[b]?.[t] ? y - Math.log(isr[b]?.[t] as number) : 0)),
          ),
        });
      expectReplayed(run(moved), c, what);
      if (P.some((x) => x !== 0)) {
        expect(
          Math.abs(run(old).loss - num(c.outputs.loss)),
          `${what}: the padding term shows`,
        ).toBeGreaterThan(1e-9);
        shown++;
      }
    }
    expect(shown).toBeGreaterThan(0);
  });
});
