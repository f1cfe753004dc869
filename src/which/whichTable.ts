import { sharingPreparedBatches } from "../conformance/frameworks/batch.js";
import { getFrameworkModel } from "../conformance/frameworks/registry.js";
import { finiteOr } from "../core/finite.js";
import { fmtValue } from "../core/message.js";
import { robustSum } from "../core/sum.js";
import { rowLengths } from "../core/tensor.js";
import { requireRecord, toMask } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { POLICY_LOSS_INPUTS, type PolicyLossInputs, policyLossAs } from "../losses/policyLoss.js";

/** One configuration of the disagreement table with its loss and per-sequence gradient mass. */
export interface WhichRow {
  /** Stable key, e.g. `token_mean` or a framework model id. */
  readonly key: string;
  /** A polgrad configuration, or a framework model (docs/conformance/frameworks.md). */
  readonly source: "polgrad" | "framework";
  /** Human label naming who uses this configuration. */
  readonly label: string;
  /** The policy-loss config evaluated (polgrad rows), or null for a framework model. */
  readonly config: PolicyLossConfig | null;
  /** The loss on the batch. */
  readonly loss: number;
  /** Gradient mass per sequence, Σ_t |∂loss/∂logprobs[b, t]|, `[B]`. */
  readonly gradMass: Float64Array;
  /** ∂loss/∂logprobs, row-major `[B, T]`: only with the option `keepGradients` (the HTML report draws it). */
  readonly gradLogprobs?: Float64Array;
}

/** A measured identity between two rows: lhs == scale·rhs, with the measured |difference|. */
export interface WhichCrossCheck {
  readonly claim: string;
  readonly lhs: string;
  readonly rhs: string;
  readonly rhsScale: number;
  readonly absDiff: number;
  readonly explanation: string;
}

/** The disagreement table: one batch, four aggregation semantics, their losses and gradient masses. */
export interface WhichReport {
  readonly batchSize: number;
  readonly width: number;
  readonly numTokens: number;
  readonly lengths: readonly number[];
  /** Budget ℓ used by the token_sum_norm row (defaults to the padded width T). */
  readonly normLen: number;
  readonly rows: readonly WhichRow[];
  /** The batch's response mask, row-major `[B, T]` 0/1: only with `keepGradients` (where each gradient's padding is). */
  readonly responseMask?: Uint8Array;
  readonly crossChecks: readonly WhichCrossCheck[];
  /** GSPO's per-row sequence ratios s_b, its clip band, and which rows lose their whole gradient. */
  readonly gspo: {
    readonly sequenceRatios: Float64Array;
    readonly band: readonly [number, number];
    readonly killedRows: readonly number[];
    readonly flowingRows: readonly number[];
  };
}

const PPO_CLIP = { epsLow: 0.2, epsHigh: 0.2, ratioCap: null } as const;

/** The framework models shown beside polgrad's rows (current heads), in cross-check order. */
const FRAMEWORK_ROWS = [
  { id: "verl@1dda039b:vanilla:token-mean", label: "verl@1dda039b 'token-mean'" },
  { id: "verl@1dda039b:vanilla:seq-mean-token-mean", label: "verl@1dda039b 'seq-mean-token-mean'" },
  { id: "openrlhf@3c3be623:ppo:token", label: "OpenRLHF@3c3be623 token_level_loss=True" },
  { id: "openrlhf@3c3be623:ppo:sample", label: "OpenRLHF@3c3be623 token_level_loss=False" },
  { id: "trl@f2cd5771:grpo:token", label: "TRL@f2cd5771 loss_type='grpo'" },
  { id: "trl@f2cd5771:dr_grpo:token", label: "TRL@f2cd5771 loss_type='dr_grpo' (budget T)" },
] as const;

/**
 * Σ_t |g[b, t]| per row, compensated, robust to a partial sum that overflows; a mass that exceeds
 * float64 itself is an OverflowError naming `gradMass` and the row. The which table's, and the
 * playground's bars and list. @internal
 */
export function massOf(
  fn: string,
  key: string,
  g: Float64Array,
  B: number,
  T: number,
): Float64Array {
  const mass = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const v = robustSum(T, (t) => Math.abs(g[b * T + t] as number));
    mass[b] = finiteOr(fn, "gradMass", v, [b], `Σ_t |∂loss/∂lp| of row ${key} exceeds float64`);
  }
  return mass;
}

/**
 * Evaluate the four aggregation semantics that "GRPO" names in practice on one batch, plus the
 * shipped framework losses that implement them (verl, OpenRLHF, TRL models at their heads), so
 * their disagreement is visible: PG_CLIP (ε 0.2/0.2) under seq_mean_token_mean (GRPO paper), token_mean
 * (DAPO, verl and TRL defaults), token_sum_norm with budget ℓ (Dr.GRPO), and GSPO's sequence ratio
 * (ε 3e-4/4e-4, seq_mean_token_mean).
 *
 * Formula: per row, loss = policyLoss(config, batch).loss and mass_b = Σ_t |∂loss/∂lp[b, t]|;
 * cross-check token_sum_norm == token_mean · N/(B·ℓ) (proportional weights m/(B·ℓ) vs m/N).
 * Gradient / stop-gradient: as in {@link policyLoss}.
 *
 * @param batch - The policy-loss inputs (see PolicyLossInputs).
 * @param options - `normLen`: the Dr.GRPO budget ℓ (default: the padded width T).
 * @returns Plain readonly data; rendering lives in report/.
 * @throws {ConfigError} E_CONFIG when normLen is not a positive integer or options is not an object.
 * @throws {ShapeError} E_SHAPE, {MaskError} E_MASK, {NonFiniteError} E_NONFINITE as policyLoss
 *   (a batch that is not an object is an E_SHAPE naming `batch`).
 * @throws {OverflowError} E_OVERFLOW when a loss, a gradient mass or a cross-check difference is
 *   not representable (advantages near 1.8e308 whose results exceed float64); finite otherwise.
 * @derivation docs/derivations/variants.md#which-grpo-am-i-running
 * @enforcedBy test/which/whichTable.test.ts > whichTable > golden: built-in batch reproduces polgrad's printed table
 * @enforcedBy test/which/hardening.test.ts > whichTable > golden: advantages 1e308 give finite losses and masses, computed stably
 * @since 0.1.0
 */
export function whichTable(
  batch: PolicyLossInputs,
  options: {
    readonly normLen?: number | null;
    /**
     * More rows beside the paper variants and framework models, each evaluated on the batch (the
     * CLI's `--framework-config` row: a user's framework config resolved at a release).
     */
    readonly extraRows?: readonly {
      readonly key: string;
      readonly label: string;
      readonly evaluate: (batch: PolicyLossInputs) => {
        readonly loss: number;
        readonly gradLogprobs: { readonly data: Float64Array };
      };
    }[];
    /** Keep each row's gradient in `gradLogprobs` (not in the `which` output; the HTML report's heat maps). */
    readonly keepGradients?: boolean;
  } = {},
): WhichReport {
  const fn = "whichTable";
  requireRecord(fn, "batch", batch, POLICY_LOSS_INPUTS);
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw fail(
      ConfigError,
      fn,
      "options",
      "an options object { normLen } or undefined",
      fmtValue(options),
    );
  }
  // The table reads each row's loss and gradient, and the ratio of the first and the GSPO rows:
  // only those are computed (fields, docs/performance.md#fields).
  const policyLoss = (config: PolicyLossConfig, b: PolicyLossInputs) =>
    policyLossAs(fn, config, b, { fields: ["loss", "gradLogprobs", "ratio"] });
  const lossAndGrad = (config: PolicyLossConfig, b: PolicyLossInputs) =>
    policyLossAs(fn, config, b, { fields: ["loss", "gradLogprobs"] });
  const first = policyLoss(
    { ratio: "token", surrogate: "pg_clip", clip: PPO_CLIP, aggregation: "seq_mean_token_mean" },
    batch,
  );
  const { rows: B, cols: T } = first.gradLogprobs;
  const normLen = options.normLen ?? T;
  if (!Number.isInteger(normLen) || normLen < 1) {
    throw fail(ConfigError, fn, "normLen", "a positive integer", fmtValue(normLen));
  }
  const mask = toMask(fn, batch.responseMask);
  const lengths = Array.from(rowLengths(mask));
  const N = lengths.reduce((a, L) => a + L, 0);
  const specs: { key: string; label: string; config: PolicyLossConfig }[] = [
    {
      key: "seq_mean_token_mean",
      label: "seq-mean-token-mean (GRPO paper; TRL <= 0.15)",
      config: {
        ratio: "token",
        surrogate: "pg_clip",
        clip: PPO_CLIP,
        aggregation: "seq_mean_token_mean",
      },
    },
    {
      key: "token_mean",
      label: "token-mean (DAPO; verl default; TRL >= 0.16)",
      config: { ratio: "token", surrogate: "pg_clip", clip: PPO_CLIP, aggregation: "token_mean" },
    },
    {
      key: "token_sum_norm",
      label: `token-sum-norm (Dr.GRPO, budget ${normLen})`,
      config: {
        ratio: "token",
        surrogate: "pg_clip",
        clip: PPO_CLIP,
        aggregation: "token_sum_norm",
        normLen,
      },
    },
    {
      key: "gspo",
      label: "GSPO sequence ratio (eps 3e-4/4e-4)",
      config: {
        ratio: "sequence",
        surrogate: "pg_clip",
        clip: { epsLow: 3e-4, epsHigh: 4e-4, ratioCap: null },
        aggregation: "seq_mean_token_mean",
      },
    },
  ];
  const grad = (g: Float64Array) => (options.keepGradients === true ? { gradLogprobs: g } : {});
  let gspoRatios = new Float64Array(B);
  const rows: WhichRow[] = specs.map((s) => {
    const withRatio =
      s.key === "seq_mean_token_mean"
        ? first
        : s.key === "gspo"
          ? policyLoss(s.config, batch)
          : null;
    const r = withRatio ?? lossAndGrad(s.config, batch);
    const mass = massOf(fn, s.key, r.gradLogprobs.data, B, T);
    if (s.key === "gspo" && withRatio !== null) {
      gspoRatios = new Float64Array(B);
      for (let b = 0; b < B; b++) {
        let t = 0;
        while (t < T - 1 && mask.data[b * T + t] !== 1) t++;
        gspoRatios[b] = withRatio.ratio.data[b * T + t] as number;
      }
    }
    return {
      key: s.key,
      source: "polgrad" as const,
      label: s.label,
      config: s.config,
      loss: r.loss,
      gradMass: mass,
      ...grad(r.gradLogprobs.data),
    };
  });
  let maxRatio = 0;
  for (let i = 0; i < first.ratio.data.length; i++)
    if (mask.data[i] === 1) maxRatio = Math.max(maxRatio, first.ratio.data[i] as number);
  // One batch, many models: validated and zero-filled once (sharingPreparedBatches).
  const otherRows = sharingPreparedBatches((): WhichRow[] => {
    const frameworkRows: WhichRow[] = FRAMEWORK_ROWS.map((f) => {
      const r = getFrameworkModel(f.id).evaluate(batch);
      return {
        key: f.id,
        source: "framework" as const,
        label: f.label,
        config: null,
        loss: r.loss,
        gradMass: massOf(fn, f.id, r.gradLogprobs.data, B, T),
        ...grad(r.gradLogprobs.data),
      };
    });
    const extraRows: WhichRow[] = (options.extraRows ?? []).map((x) => {
      const r = x.evaluate(batch);
      return {
        key: x.key,
        source: "framework" as const,
        label: x.label,
        config: null,
        loss: r.loss,
        gradMass: massOf(fn, x.key, r.gradLogprobs.data, B, T),
        ...grad(r.gradLogprobs.data),
      };
    });
    return [...frameworkRows, ...extraRows];
  });
  rows.push(...otherRows);
  const byKey = (k: string): WhichRow => rows.find((r) => r.key === k) as WhichRow;
  const scale = N / (B * normLen);
  // |lhs − scale·rhs|: losses near ±1.8e308 of opposite signs differ by more than float64 holds.
  const diffOf = (lhs: string, rhs: string, rhsScale: number): number =>
    finiteOr(
      fn,
      "crossChecks.absDiff",
      Math.abs(byKey(lhs).loss - byKey(rhs).loss * rhsScale),
      undefined,
      `|loss(${lhs}) − ${rhsScale}·loss(${rhs})| exceeds float64`,
    );
  const check = (
    lhs: string,
    rhs: string,
    claim: string,
    explanation: string,
    rhsScale = 1,
  ): WhichCrossCheck => ({
    claim,
    lhs,
    rhs,
    rhsScale,
    absDiff: diffOf(lhs, rhs, rhsScale),
    explanation,
  });
  const frameworkChecks: WhichCrossCheck[] = [
    check(
      FRAMEWORK_ROWS[0].id,
      "token_mean",
      "verl 'token-mean' == polgrad token-mean",
      maxRatio <= 3
        ? `same semantics; verl's always-on dual-clip cap c = 3 cannot bind here (max ratio ${maxRatio.toFixed(3)})`
        : `verl's always-on dual clip (c = 3) binds: max ratio ${maxRatio.toFixed(3)} > 3 (a registered deviation)`,
    ),
    check(
      FRAMEWORK_ROWS[1].id,
      "seq_mean_token_mean",
      "verl 'seq-mean-token-mean' == polgrad seq-mean-token-mean",
      "verl divides each row by L_b + 1e-8, which is exactly L_b under the bool mask its engine passes",
    ),
    check(
      FRAMEWORK_ROWS[2].id,
      "token_mean",
      "OpenRLHF token_level_loss=True == polgrad token-mean",
      "OpenRLHF's token-level aggregation is the masked token mean",
    ),
    check(
      FRAMEWORK_ROWS[3].id,
      "seq_mean_token_mean",
      "OpenRLHF token_level_loss=False == polgrad seq-mean-token-mean",
      "same (L_b + 1e-8) row divisor, exactly L_b under OpenRLHF's long mask",
    ),
    check(
      FRAMEWORK_ROWS[4].id,
      "seq_mean_token_mean",
      "TRL loss_type='grpo' == polgrad seq-mean-token-mean",
      "TRL divides each row by max(L_b, 1) and averages the rows",
    ),
    check(
      FRAMEWORK_ROWS[5].id,
      "token_sum_norm",
      `TRL loss_type='dr_grpo' == polgrad token-sum-norm (norm_len=${normLen})`,
      normLen === T
        ? `both divide token sums by B*budget = ${B * T}`
        : `TRL's budget is max_completion_length = T = ${T}; polgrad's norm_len = ${normLen}: factor T/norm_len`,
      normLen === T ? 1 : normLen / T,
    ),
  ];
  const gspoMass = byKey("gspo").gradMass;
  const killedRows: number[] = [];
  const flowingRows: number[] = [];
  for (let b = 0; b < B; b++) (gspoMass[b] === 0 ? killedRows : flowingRows).push(b);
  return {
    batchSize: B,
    width: T,
    numTokens: N,
    lengths,
    normLen,
    rows,
    ...(options.keepGradients === true ? { responseMask: mask.data } : {}),
    crossChecks: [
      {
        claim: `Dr.GRPO == token-mean x N/(B*norm_len) = x ${scale}`,
        lhs: "token_sum_norm",
        rhs: "token_mean",
        rhsScale: scale,
        absDiff: diffOf("token_sum_norm", "token_mean", scale),
        explanation: "proportional weights m/(B*norm_len) vs m/N on one batch",
      },
      ...frameworkChecks,
    ],
    gspo: { sequenceRatios: gspoRatios, band: [1 - 3e-4, 1 + 4e-4], killedRows, flowingRows },
  };
}
