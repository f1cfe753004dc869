/**
 * The HF Trainer's `trainer_state.json` (docs/diagnostics/logs.md#trainer_statejson):
 * `TrainerState.save_to_json` (transformers `trainer_callback.py`) writes
 * `json.dumps(dataclasses.asdict(state), indent=2, sort_keys=True)`, whose `log_history` is the
 * list `Trainer.log` appends to: each entry is the logged metrics plus `epoch` and `step`
 * (the global step). TRL's trainers log through it (GRPOTrainer's `loss`, `entropy`,
 * `clip_ratio/low_mean`, `reward`, `kl`, …; `eval_`-prefixed in evaluation). Pure: no `node:`
 * import.
 */

import { fmtValue } from "../../core/message.js";
import { requireBytes, requireString } from "../../core/validate.js";
import { decodeUtf8, ioError } from "../_internal/ioError.js";
import {
  checkBytes,
  isStep,
  kindOf,
  metricValue,
  Problems,
  parsePythonJson,
  resolveLimits,
  SeriesBuilder,
} from "./_series.js";
import type { MetricLog, MetricLogLimits } from "./types.js";

/**
 * Read an HF Trainer `trainer_state.json`: the series of its `log_history`.
 *
 * Format: one JSON object (Python's dialect: bare `NaN`, `Infinity`, `-Infinity` accepted, as
 * `json.dumps` writes a NaN `grad_norm`; duplicate keys rejected) with a `log_history` array.
 * Each entry needs an integer `step`; every other key is a series under its own name (`epoch`,
 * `loss`, `eval_loss`, `train_runtime`, …). A `null` value is no point (TRL logs None for a
 * metric with no valid value in the logging window); strings, booleans, arrays and objects are
 * not metrics (skipped, one problem per key). An entry without an integer step is a problem
 * (`log_history[i]`). The other fields of the state (`global_step`, `best_metric`, …) are not read.
 *
 * @param bytes - The whole file.
 * @param path - The name to report in problems and errors (default `"<bytes>"`).
 * @param options - Limits: `maxBytes` (1 GiB), `maxSeries`, `maxPoints`.
 * @returns One run (`run` is `""`); `records` counts the `log_history` entries.
 * @throws {IoError} E_IO when the bytes are not UTF-8 JSON (line and column given), not an object
 *   with a `log_history` array, or a limit is exceeded.
 * @throws {ConfigError} E_CONFIG when a limit is not a positive integer.
 * @derivation docs/diagnostics/logs.md#trainer_statejson
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > trainer_state > golden: transformers' TrainerState file reads to the values logged
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > trainer_state > rejects: not an object with a log_history array
 * @since 0.1.0
 */
export function parseTrainerState(
  bytes: Uint8Array,
  path = "<bytes>",
  options: MetricLogLimits = {},
): MetricLog {
  requireBytes("parseTrainerState", "bytes", bytes);
  requireString("parseTrainerState", "path", path);
  return readTrainerStateAs("parseTrainerState", bytes, path, options);
}

/** {@link parseTrainerState} reporting errors as `fn`. @internal */
export function readTrainerStateAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  options: MetricLogLimits | undefined,
): MetricLog {
  const limits = resolveLimits(fn, options);
  checkBytes(fn, path, bytes, limits);
  const parsed = parsePythonJson(decodeUtf8(fn, path, "bytes", bytes));
  if (!parsed.ok)
    throw ioError(
      fn,
      path,
      "bytes",
      "a trainer_state.json (JSON)",
      `${parsed.reason} at line ${parsed.line}, column ${parsed.column}`,
    );
  const state = parsed.value;
  if (typeof state !== "object" || state === null || Array.isArray(state))
    throw ioError(fn, path, "bytes", "a trainer_state.json (a JSON object)", kindOf(state));
  const history = (state as Record<string, unknown>).log_history;
  if (!Array.isArray(history))
    throw ioError(
      fn,
      path,
      "log_history",
      "an array (the HF Trainer's logged metrics)",
      Object.hasOwn(state, "log_history") ? kindOf(history) : "no log_history key",
    );
  const builder = new SeriesBuilder(fn, path, limits);
  const problems = new Problems();
  for (let i = 0; i < history.length; i++) {
    const at = `log_history[${i}]`;
    const entry: unknown = history[i];
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      problems.add(path, at, `${kindOf(entry)}, not an object: skipped`);
      continue;
    }
    const e = entry as Record<string, unknown>;
    if (!isStep(e.step)) {
      const got = Object.hasOwn(e, "step") ? fmtValue(e.step) : "no step key";
      problems.add(path, at, `"step" must be an integer; got ${got}: skipped`);
      continue;
    }
    const step = e.step;
    for (const k of Object.keys(e)) {
      if (k === "step") continue;
      const v = e[k];
      if (v === null) continue;
      const x = metricValue(v);
      if (x === undefined) builder.skip(k, at, kindOf(v));
      else builder.add(k, step, x);
    }
  }
  const file = { path, bytes: bytes.length, records: history.length };
  return builder.finish("trainer_state", "", [file], problems);
}
