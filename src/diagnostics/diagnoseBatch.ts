/**
 * Run every detector whose inputs a batch holds, and say which were skipped and why
 * (docs/diagnostics/run.md#one-batch). Each detector is independent: one that rejects the batch
 * (e.g. the length-bias probe on equal lengths) is reported as skipped with its error, and the
 * others still run.
 */

import type { Aggregation } from "../aggregate/aggregation.js";
import { oneOf } from "../core/names.js";
import { isMask, isMatrix, type Mask, type Matrix, maskCounts } from "../core/tensor.js";
import {
  advantagesOf,
  BATCH_STREAM_FIELDS,
  checkObject,
  checkSameShape,
  describeInput,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { type ErrorCode, fail, PolgradError, ShapeError } from "../errors.js";
import type { PartialBatch } from "../io/batch.js";
import type { ClipConfig } from "../losses/config.js";
import { type ClipReport, clipCensusOfLogprobs, clipReport } from "./clipping.js";
import { type EntropyReport, tokenEntropyEstimate } from "./entropy.js";
import { type ESSReport, importanceEss } from "./ess.js";
import { type LengthBiasReport, lengthBiasProbe } from "./lengthBias.js";
import { LOG_DETECTOR_NAMES, type LogDetectorName } from "./logs/detectors.js";
import { logprobMismatch, type MismatchReport } from "./mismatch.js";

/** The detectors, in report order. */
export const DETECTORS = ["ess", "mismatch", "clip", "entropy", "length_bias"] as const;
/** One detector name. */
export type DetectorName = (typeof DETECTORS)[number];

/** Options of {@link diagnoseBatch}. */
export interface DiagnoseOptions {
  /** Clip band of the census (default ε 0.2/0.2 with verl's dual-clip cap 3). */
  readonly clip?: ClipConfig;
  /** Aggregation under which the length-bias probe weighs tokens (default seq_mean_token_mean). */
  readonly aggregation?: Aggregation;
  readonly normLen?: number | null;
  /** |trainer − rollout| above which a token is catastrophic (default 5). */
  readonly catastrophicGap?: number;
  /**
   * Rows with no response token: `reject` (default: every detector that reads the mask skips with
   * the MaskError naming them) or `drop` (the rows are taken out of the batch before any detector
   * runs, and the diagnosis lists them in `droppedRows`). `count` has no meaning here: a
   * per-sequence statistic (sequence weight, length, row mean) has no value for such a row.
   */
  readonly emptyRows?: "reject" | "drop";
}

/** A detector that did not run, and why. */
export interface SkippedDetector {
  readonly detector: DetectorName;
  readonly reason: string;
  /** The error code when the detector ran and raised (`E_OVERFLOW`, …); null when a stream was missing. */
  readonly code: ErrorCode | null;
}

/** The clip census without its per-token mask (kept small for run-level storage). */
export type ClipSummary = Omit<ClipReport, "gradientKilledMask">;

/** Every detector's report on one batch (null when skipped). */
export interface BatchDiagnosis {
  readonly ess: ESSReport | null;
  readonly mismatch: MismatchReport | null;
  readonly clip: ClipSummary | null;
  readonly entropy: EntropyReport | null;
  readonly lengthBias: LengthBiasReport | null;
  readonly skipped: readonly SkippedDetector[];
  /** The alarms that fired (docs/diagnostics/run.md#alarms); `polgrad diagnose` exits 1 iff any. */
  readonly alarms: readonly Alarm[];
  /** With `emptyRows: "drop"`: the rows taken out (indices in the batch given). */
  readonly droppedRows?: readonly number[];
}

/**
 * The alarm codes that only per-step tensors raise; with the detectors' names
 * (LOG_DETECTOR_NAMES) and `non_finite_metric` (a logged metric that is NaN or ±∞) they are
 * every alarm code ({@link ALARM_CODES}).
 */
const TENSOR_ALARM_CODES = [
  "catastrophic_tokens",
  "mismatch_overflow",
  "ess_low",
  "length_bias",
  "non_finite_metric",
] as const;

/** Every alarm code (docs/diagnostics/run.md#alarms, docs/diagnostics/log-detectors.md). */
export const ALARM_CODES: readonly AlarmCode[] = [...LOG_DETECTOR_NAMES, ...TENSOR_ALARM_CODES];

/** What an alarm is about. */
export type AlarmCode = LogDetectorName | (typeof TENSOR_ALARM_CODES)[number];

/** One alarm: its code, a one-line reading, and the (first) step it concerns in a run. */
export interface Alarm {
  readonly code: AlarmCode;
  readonly message: string;
  /** The step the alarm points at (a run), or null (one batch). */
  readonly step: number | null;
}

/** The census band when options.clip is not given: ε 0.2/0.2 with verl's dual-clip cap 3. @internal */
export const DEFAULT_CLIP: ClipConfig = { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 };

/**
 * The skip reason of a detector whose streams the batch lacks ("needs old_logprobs and
 * rollout_logprobs"), or null when it has them all. @internal
 */
export function needs(batch: PartialBatch, names: readonly (keyof PartialBatch)[]): string | null {
  const missing = names.filter((n) => batch[n] === undefined);
  return missing.length === 0
    ? null
    : `needs ${missing.map((n) => n.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).join(" and ")}`;
}

/**
 * Diagnose one batch with every detector its tensors allow.
 *
 * Formula: ess = importanceEss(logprobs, old_logprobs) (sequence level); mismatch =
 * logprobMismatch(old_logprobs, rollout_logprobs) (trainer vs rollout); clip =
 * clipReport(exp(logprobs − old_logprobs), advantages); entropy = tokenEntropyEstimate from exact
 * `entropies`, else from the sampling policy's logprobs (`old_logprobs`, else `rollout_logprobs`,
 * else `logprobs`); length bias = lengthBiasProbe(advantages) under `aggregation`.
 * Null distributions: see each detector's page in docs/diagnostics/.
 *
 * @param batch - A partial batch (only the mask is required).
 * @param options - Clip band, aggregation, normLen, catastrophic gap, and `emptyRows` (`drop`:
 *   rows with no response token are taken out first and listed in `droppedRows`).
 * @returns Each detector's report, or null with the reason and error code in `skipped` (an
 *   OverflowError of a detector, e.g. a k3 mismatch mean past |Δ| ≈ 709.78, is a skip with code
 *   `E_OVERFLOW`; diagnoseRun and the CLI treat that mismatch skip as an alarm).
 * @throws {ConfigError} E_CONFIG when batch or options is not an object.
 * @derivation docs/diagnostics/run.md#one-batch
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseBatch > golden: every detector runs on a full batch and a missing stream skips exactly its detectors
 * @enforcedBy test/diagnostics/hardening.test.ts > diagnoseBatch > regression: a log-ratio of 800 keeps the clip census (the ratio overflowed before)
 * @enforcedBy test/diagnostics/emptyRows.test.ts > diagnoseBatch with rows of no response token > identity: drop gives the diagnosis of the batch without the empty row, and names it
 * @since 0.1.0
 */
export function diagnoseBatch(given: PartialBatch, options: DiagnoseOptions = {}): BatchDiagnosis {
  checkObject("diagnoseBatch", "batch", given);
  checkObject("diagnoseBatch", "options", options);
  checkPartialBatch("diagnoseBatch", given);
  const drop =
    options.emptyRows === undefined
      ? false
      : oneOf("diagnoseBatch", "options.emptyRows", options.emptyRows, [
          "reject",
          "drop",
        ] as const) === "drop";
  const { batch, dropped } = drop ? withoutEmptyRows(given) : { batch: given, dropped: null };
  const report = diagnoseRows(batch, options);
  return dropped === null ? report : { ...report, droppedRows: dropped };
}

/** The `[B, T]` streams a PartialBatch may hold besides its mask and advantages. */
const PARTIAL_STREAMS = BATCH_STREAM_FIELDS;

/**
 * Require a {@link PartialBatch} as toPartialBatch builds it: `responseMask` a Mask, each stream
 * that is present a Matrix of its shape, `advantages` `[B]` or `[B, T]`; a typed error naming the
 * field otherwise (the detectors read `.data` directly).
 */
function checkPartialBatch(fn: string, batch: PartialBatch): void {
  const m: unknown = batch.responseMask;
  if (!isMask(m))
    throw fail(
      ShapeError,
      fn,
      "batch.responseMask",
      "a Mask (toPartialBatch builds one)",
      describeInput(m),
    );
  const mask = toMask(fn, m, undefined, "batch.responseMask", "allow");
  const like = { rows: mask.rows, cols: mask.cols, arg: "batch.responseMask" };
  for (const k of PARTIAL_STREAMS) {
    const x: unknown = batch[k];
    if (x === undefined) continue;
    const arg = `batch.${k}`;
    if (!isMatrix(x))
      throw fail(
        ShapeError,
        fn,
        arg,
        "a Matrix (toPartialBatch builds one) or absent",
        describeInput(x),
      );
    checkSameShape(fn, like.arg, { ...like, data: new Float64Array(0) }, arg, toMatrix(fn, arg, x));
  }
  if (batch.advantages !== undefined)
    advantagesOf(fn, batch.advantages, like, like.arg, "batch.advantages");
}

/**
 * The batch without its rows of no response token (every `[B, T]` stream and `[B]` advantages
 * sliced to the kept rows, in order), and the dropped rows' indices. A mask that is not a valid
 * `[B, T]` mask is left as it is (the detectors name it).
 */
function withoutEmptyRows(batch: PartialBatch): { batch: PartialBatch; dropped: number[] } {
  const m = batch.responseMask;
  if (!isMask(m)) return { batch, dropped: [] };
  const { rows: B, cols: T } = m;
  const { L } = maskCounts(m);
  const keep: number[] = [];
  const dropped: number[] = [];
  for (let b = 0; b < B; b++) (L[b] === 0 ? dropped : keep).push(b);
  if (dropped.length === 0) return { batch, dropped };
  const rowsOf = <X extends Matrix | Mask>(x: X): X => {
    const out = new (x.data.constructor as new (n: number) => X["data"])(keep.length * x.cols);
    keep.forEach((b, j) => {
      out.set(x.data.subarray(b * x.cols, (b + 1) * x.cols) as never, j * x.cols);
    });
    return { rows: keep.length, cols: x.cols, data: out } as X;
  };
  const out: Record<string, unknown> = { ...batch, responseMask: rowsOf(m) };
  for (const [k, v] of Object.entries(batch)) {
    if (k === "responseMask" || k === "source" || v === undefined) continue;
    if (v instanceof Float64Array && v.length === B)
      out[k] = Float64Array.from(keep, (b) => v[b] as number);
    else if (isMatrix(v) && v.rows === B && v.cols === T) out[k] = rowsOf(v);
  }
  return { batch: out as unknown as PartialBatch, dropped };
}

function diagnoseRows(batch: PartialBatch, options: DiagnoseOptions): BatchDiagnosis {
  const skipped: SkippedDetector[] = [];
  const attempt = <R>(detector: DetectorName, missing: string | null, run: () => R): R | null => {
    if (missing !== null) {
      skipped.push({ detector, reason: missing, code: null });
      return null;
    }
    try {
      return run();
    } catch (e) {
      if (!(e instanceof PolgradError)) throw e;
      skipped.push({ detector, reason: e.message, code: e.code });
      return null;
    }
  };
  const m = batch.responseMask;
  const ess = attempt("ess", needs(batch, ["logprobs", "oldLogprobs"]), () =>
    importanceEss(batch.logprobs as Matrix, batch.oldLogprobs as Matrix, m, { level: "sequence" }),
  );
  const mismatch = attempt("mismatch", needs(batch, ["oldLogprobs", "rolloutLogprobs"]), () =>
    logprobMismatch(batch.oldLogprobs as Matrix, batch.rolloutLogprobs as Matrix, m, {
      catastrophicGap: options.catastrophicGap ?? 5,
    }),
  );
  const clip = attempt("clip", needs(batch, ["logprobs", "oldLogprobs", "advantages"]), () => {
    const lp = batch.logprobs as Matrix;
    const old = batch.oldLogprobs as Matrix;
    // One pass in the plain case; anything else through clipReport on the ratio array (its errors).
    const fast = clipCensusOfLogprobs(lp, old, batch.advantages, m, options.clip ?? DEFAULT_CLIP);
    if (fast !== null) return fast;
    const ratio = new Float64Array(lp.data.length).fill(1);
    // exp(lp − old) clamped into [MIN_VALUE, MAX_VALUE]: an overflowing (underflowing) ratio is
    // above (below) every band edge and cap either way, so the census is exact; NaN stays NaN.
    for (let i = 0; i < ratio.length; i++) {
      if (m.data[i] !== 1) continue;
      const r = Math.exp((lp.data[i] as number) - (old.data[i] as number));
      ratio[i] = r > Number.MAX_VALUE ? Number.MAX_VALUE : r === 0 ? Number.MIN_VALUE : r;
    }
    const { gradientKilledMask: _mask, ...rest } = clipReport(
      { rows: lp.rows, cols: lp.cols, data: ratio },
      batch.advantages as Matrix,
      m,
      options.clip ?? DEFAULT_CLIP,
    );
    return rest;
  });
  const sampling = batch.oldLogprobs ?? batch.rolloutLogprobs ?? batch.logprobs ?? null;
  const entropy = attempt(
    "entropy",
    batch.entropies === undefined && sampling === null
      ? "needs entropies or a sampled-token logprob stream"
      : null,
    () =>
      tokenEntropyEstimate(
        batch.entropies === undefined ? sampling : null,
        m,
        batch.entropies === undefined ? {} : { entropies: batch.entropies },
      ),
  );
  const lengthBias = attempt("length_bias", needs(batch, ["advantages"]), () =>
    lengthBiasProbe(batch.advantages as Matrix, m, {
      aggMode: options.aggregation ?? "seq_mean_token_mean",
      normLen: options.normLen ?? null,
    }),
  );
  const alarms: Alarm[] = [];
  if (mismatch !== null && mismatch.catastrophicCount > 0)
    alarms.push({
      code: "catastrophic_tokens",
      message: `${mismatch.catastrophicCount} catastrophic token(s) (|trainer − rollout| > ${options.catastrophicGap ?? 5} nats)`,
      step: null,
    });
  if (skipped.some((s) => s.detector === "mismatch" && s.code === "E_OVERFLOW"))
    alarms.push({
      code: "mismatch_overflow",
      message: "rollout/trainer logprob gap beyond 709 nats (the mismatch KL overflows float64)",
      step: null,
    });
  if (lengthBias !== null && (lengthBias.ciLow > 0 || lengthBias.ciHigh < 0))
    alarms.push({
      code: "length_bias",
      message: `length-bias slope ${lengthBias.slope} with a 95% CI [${lengthBias.ciLow}, ${lengthBias.ciHigh}] that excludes 0`,
      step: null,
    });
  return { ess, mismatch, clip, entropy, lengthBias, skipped, alarms };
}
