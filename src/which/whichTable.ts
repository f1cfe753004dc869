import { fmtValue, mustBe } from "../core/message.js";
import { CompensatedSum } from "../core/sum.js";
import { rowLengths } from "../core/tensor.js";
import { toMask } from "../core/validate.js";
import { ConfigError } from "../errors.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";

/** One configuration of the disagreement table with its loss and per-sequence gradient mass. */
export interface WhichRow {
  /** Stable key, e.g. `token_mean`. */
  readonly key: string;
  /** Human label naming who uses this configuration. */
  readonly label: string;
  /** The policy-loss config evaluated. */
  readonly config: PolicyLossConfig;
  /** The loss on the batch. */
  readonly loss: number;
  /** Gradient mass per sequence, Σ_t |∂loss/∂logprobs[b, t]|, `[B]`. */
  readonly gradMass: Float64Array;
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

/**
 * Evaluate the four aggregation semantics that "GRPO" names in practice on one batch, so their
 * disagreement is visible: PG_CLIP (ε 0.2/0.2) under seq_mean_token_mean (GRPO paper), token_mean
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
 * @throws {ConfigError} E_CONFIG when normLen is not a positive integer.
 * @throws {ShapeError} E_SHAPE, {MaskError} E_MASK, {NonFiniteError} E_NONFINITE as policyLoss.
 * @derivation docs/derivations/variants.md#which-grpo-am-i-running
 * @enforcedBy test/which/whichTable.test.ts > whichTable > golden: built-in batch reproduces polgrad's printed table
 * @since 0.1.0
 */
export function whichTable(
  batch: PolicyLossInputs,
  options: { readonly normLen?: number | null } = {},
): WhichReport {
  const fn = "whichTable";
  const first = policyLoss(
    { ratio: "token", surrogate: "pg_clip", clip: PPO_CLIP, aggregation: "seq_mean_token_mean" },
    batch,
  );
  const { rows: B, cols: T } = first.gradLogprobs;
  const normLen = options.normLen ?? T;
  if (!Number.isInteger(normLen) || normLen < 1) {
    throw new ConfigError(
      fn,
      "normLen",
      mustBe(fn, "normLen", "a positive integer", fmtValue(normLen)),
    );
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
  let gspoRatios = new Float64Array(B);
  const rows: WhichRow[] = specs.map((s) => {
    const r = s.key === "seq_mean_token_mean" ? first : policyLoss(s.config, batch);
    const mass = new Float64Array(B);
    for (let b = 0; b < B; b++) {
      const acc = new CompensatedSum();
      for (let t = 0; t < T; t++) acc.add(Math.abs(r.gradLogprobs.data[b * T + t] as number));
      mass[b] = acc.value();
    }
    if (s.key === "gspo") {
      gspoRatios = new Float64Array(B);
      for (let b = 0; b < B; b++) gspoRatios[b] = r.ratio.data[b * T] as number;
    }
    return { key: s.key, label: s.label, config: s.config, loss: r.loss, gradMass: mass };
  });
  const byKey = (k: string): WhichRow => rows.find((r) => r.key === k) as WhichRow;
  const scale = N / (B * normLen);
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
    crossChecks: [
      {
        claim: `Dr.GRPO == token-mean x N/(B*norm_len) = x ${scale}`,
        lhs: "token_sum_norm",
        rhs: "token_mean",
        rhsScale: scale,
        absDiff: Math.abs(byKey("token_sum_norm").loss - byKey("token_mean").loss * scale),
        explanation: "proportional weights m/(B*norm_len) vs m/N on one batch",
      },
    ],
    gspo: { sequenceRatios: gspoRatios, band: [1 - 3e-4, 1 + 4e-4], killedRows, flowingRows },
  };
}
