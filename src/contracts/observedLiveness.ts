/**
 * Liveness on a run's per-batch dumps (docs/contracts.md#liveness-on-a-run): the order of the
 * batch files in a folder, and the measure of one dumped batch — either the scalars the run
 * reported (`perception_kl`, `perception_gradient_norm`) or the perception term computed from
 * `logprobs`, `masked_logprobs` and `response_mask` with the measure {@link papoLivenessMeasure}.
 * Takes tensors already read, not files (contracts/ reads no files).
 */
import { fmtValue, mustBe, safeText } from "../core/message.js";
import { requireArrayOf } from "../core/validate.js";
import { ConfigError, fail, IoError } from "../errors.js";
import type { PapoConfig } from "../losses/papoConfig.js";
import { papoGLoss, papoGTrlLoss } from "../registry/algorithms/papoG.js";
import { type LivenessMeasure, papoLivenessMeasure } from "./liveness.js";
import type { ObservedTensor } from "./observedTensors.js";

/** One batch file in probe order. */
export interface BatchFile {
  readonly file: string;
  /** The step number read from the name (its last run of digits), or null. */
  readonly step: number | null;
}

const BATCH_FILE = /\.(safetensors|json)$/i;

/**
 * Order the batch files of a folder for the liveness probe.
 *
 * Formula: keep names ending in .safetensors or .json (case-insensitive); step = the last run of
 * decimal digits in the name before the extension. If every kept file has a step, order by step
 * (two files with the same step are an error: the order would be ambiguous); otherwise order by
 * name (UTF-16 code-unit order, as Array.prototype.sort).
 *
 * @param names - The folder's entry names.
 * @returns The files in probe order and which order was used.
 * @throws {IoError} E_IO when two files carry the same step number.
 * @derivation docs/contracts.md#liveness-on-a-run
 * @enforcedBy test/contracts/livenessCli.test.ts > orderBatchFiles > golden: step order when every name has a step, else name order
 * @since 0.1.0
 */
export function orderBatchFiles(names: readonly string[]): {
  readonly order: "step" | "name";
  readonly files: readonly BatchFile[];
} {
  requireArrayOf(
    "orderBatchFiles",
    "names",
    names,
    "an array of file names",
    (n) => typeof n === "string",
  );
  const kept = names.filter((n) => BATCH_FILE.test(n)).sort();
  const files = kept.map((file) => {
    const digits = file.replace(BATCH_FILE, "").match(/(\d+)(?!.*\d)/);
    return { file, step: digits === null ? null : Number(digits[1]) };
  });
  if (files.length === 0 || files.some((f) => f.step === null)) return { order: "name", files };
  const seen = new Map<number, string>();
  for (const f of files) {
    const other = seen.get(f.step as number);
    if (other !== undefined) {
      const fn = "orderBatchFiles";
      const got = `${safeText(other)} and ${safeText(f.file)} both have step ${f.step}`;
      throw fail(IoError, fn, "dir", "batch files with distinct step numbers", got);
    }
    seen.set(f.step as number, f.file);
  }
  return {
    order: "step",
    files: [...files].sort((a, b) => (a.step as number) - (b.step as number)),
  };
}

/** The PAPO forms the logprob measure computes the perception term in. */
export type LivenessForm = "trl" | "official";

/**
 * The PAPO-G configuration whose perception term the logprob measure computes: TRL v0.29.1's
 * (γ 0.1, clamp [0, 0.2], mean over every B×T position) or the official code's (γ 0.01, no clamp,
 * the parent's weights over response tokens); double entropy off (it cancels in the measure).
 */
function formConfig(form: LivenessForm): PapoConfig {
  return form === "trl" ? { ...papoGTrlLoss, doubleEntropy: null } : papoGLoss;
}

function bad(path: string, name: string, rule: string, got: string): IoError {
  const fn = "observedLivenessMeasure";
  return new IoError(fn, name, `${mustBe(fn, name, rule, got)} (in ${safeText(path)})`, path);
}

/**
 * Build the measure of one dumped batch for {@link probeLiveness}.
 *
 * Formula: reported scalars — term = perception_kl, gradNorm = perception_gradient_norm (both
 * required when either is present). Logprobs — with lp = logprobs, lpm = masked_logprobs and the
 * mask, the batch {logprobs: lp, oldLogprobs: lp, refLogprobs: lp, advantages: 0, maskedLogprobs:
 * lpm} (on-policy, no advantage: the parent's gradient is 0 and drops out) is measured by
 * papoLivenessMeasure(form's config): term = γ·P, gradNorm = ‖∇(γ·P)‖₂ over both streams.
 * Gradient / stop-gradient: as papoLoss in the form.
 *
 * @param form - `"trl"` (TRL v0.29.1, the vendored adapter's form) or `"official"`.
 * @returns A measure over `{ path, tensors }` sets.
 * @throws {ConfigError} E_CONFIG for an unknown form.
 * @throws {IoError} E_IO (when it runs) for a set with neither kind of tensors, one scalar without
 *   the other, a non-scalar scalar, a mask value other than 0/1 or a shape mismatch; and the
 *   errors of papoLoss (e.g. NonFiniteError for junk padding in the trl form, which reads it).
 * @derivation docs/contracts.md#liveness-on-a-run
 * @enforcedBy test/contracts/livenessCli.test.ts > observedLivenessMeasure > golden: reported scalars are the measure and logprobs give the papo perception term
 * @enforcedBy test/contracts/livenessCli.test.ts > observedLivenessMeasure > rejects: a lone scalar, a file without either kind, a fractional mask
 * @since 0.1.0
 */
export function observedLivenessMeasure(
  form: LivenessForm = "trl",
): (set: {
  readonly path: string;
  readonly tensors: ReadonlyMap<string, ObservedTensor>;
}) => LivenessMeasure {
  if (form !== "trl" && form !== "official") {
    const fn = "observedLivenessMeasure";
    throw fail(ConfigError, fn, "form", '"trl" or "official"', fmtValue(form));
  }
  const papo = papoLivenessMeasure(formConfig(form));
  return ({ path, tensors }) => {
    const kl = tensors.get("perception_kl");
    const gn = tensors.get("perception_gradient_norm");
    if (kl !== undefined || gn !== undefined) {
      const one = (name: string, t: ObservedTensor | undefined): number => {
        if (t === undefined)
          throw bad(path, name, "given with the other reported scalar", "missing");
        if (t.data.length !== 1) throw bad(path, name, "one value", `shape [${t.shape}]`);
        return t.data[0] as number;
      };
      return { term: one("perception_kl", kl), gradNorm: one("perception_gradient_norm", gn) };
    }
    const need = (name: string): ObservedTensor => {
      const t = tensors.get(name);
      if (t === undefined) {
        const rule =
          "present (a batch dump holds perception_kl and perception_gradient_norm, or logprobs, masked_logprobs and response_mask)";
        throw bad(path, name, rule, "missing");
      }
      return t;
    };
    const lp = need("logprobs");
    const lpm = need("masked_logprobs");
    const m = need("response_mask");
    if (lp.shape.length !== 2)
      throw bad(path, "logprobs", "of rank 2 [B, T]", `shape [${lp.shape}]`);
    const [rows, cols] = lp.shape as [number, number];
    for (const [name, t] of [
      ["masked_logprobs", lpm],
      ["response_mask", m],
    ] as const) {
      if (t.shape.length !== 2 || t.shape[0] !== rows || t.shape[1] !== cols)
        throw bad(path, name, `the shape of logprobs [${rows}, ${cols}]`, `shape [${t.shape}]`);
    }
    const mask = new Uint8Array(rows * cols);
    for (let i = 0; i < mask.length; i++) {
      const v = m.data[i];
      if (v !== 0 && v !== 1) {
        const at = `${fmtValue(v)} at [${Math.floor(i / cols)}, ${i % cols}]`;
        throw bad(path, "response_mask", "0 or 1 everywhere", at);
      }
      mask[i] = v;
    }
    const f64 = (t: ObservedTensor): Float64Array =>
      t.data instanceof Float64Array ? t.data : Float64Array.from(t.data);
    const lpMatrix = { rows, cols, data: f64(lp) };
    return papo({
      logprobs: lpMatrix,
      oldLogprobs: lpMatrix,
      refLogprobs: lpMatrix,
      advantages: new Float64Array(rows),
      responseMask: { rows, cols, data: mask },
      maskedLogprobs: { rows, cols, data: f64(lpm) },
    });
  };
}
