/**
 * Which metric-log format a file is, from its name and its first bytes
 * (docs/diagnostics/logs.md#detection): TensorBoard event files (by name, or by the TFRecord
 * framing of their first record), `trainer_state.json`, JSON lines (verl's file logger, flat
 * logs), and W&B exports (CSV, JSON records). Pure: no `node:` import.
 */

import { requireBytes, requireString } from "../../core/validate.js";
import { parsePythonJson } from "./_series.js";
import { maskedCrc32c } from "./crc32c.js";
import { CsvReader } from "./csv.js";
import type { MetricLogFormat } from "./types.js";

/** Bytes of a file's head that detection looks at (a caller may pass more; the rest is ignored). */
export const DETECT_HEAD_BYTES = 4096;

/** The outcome of {@link detectMetricLogFormat}: the format (null when none fits) and why. */
export interface MetricLogDetection {
  readonly format: MetricLogFormat | null;
  /** What decided it, or what was looked for and not found. */
  readonly reasons: readonly string[];
  /** Only the extension decided (`.jsonl`, `.csv`): the head was inconclusive. */
  readonly byExtension: boolean;
}

/** The TFRecord framing of a first record: a little-endian u64 length (1 to 2^30) and its masked CRC. */
function tfRecordHead(head: Uint8Array): string | null {
  if (head.length < 12) return null;
  const v = new DataView(head.buffer, head.byteOffset, 12);
  const low = v.getUint32(0, true);
  if (v.getUint32(4, true) !== 0 || low === 0 || low > 2 ** 30) return null;
  if (maskedCrc32c(head, 0, 8) !== v.getUint32(8, true)) return null;
  return `TFRecord framing: a first record of ${low} bytes whose length carries its masked CRC-32C`;
}

const TEXT = new TextDecoder("utf-8", { fatal: false });

function jsonKeysFormat(value: unknown): MetricLogFormat | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  if (Object.hasOwn(value, "log_history")) return "trainer_state";
  if (Object.hasOwn(value, "step") || Object.hasOwn(value, "global_step")) return "jsonl";
  if (Object.hasOwn(value, "_step")) return "wandb";
  return null;
}

/**
 * Tell a metric log's format from its file name and first bytes.
 *
 * Rules, first match wins: a name `events.out.tfevents.*`, or a head framed as a TFRecord (a
 * little-endian u64 length of 1 byte to 1 GiB followed by its masked CRC-32C) → `tensorboard`;
 * the name `trainer_state.json`, or a JSON object head with a `"log_history"` key →
 * `trainer_state`; a first JSON line holding `step` or `global_step` (verl's
 * `{"step": …, "data": …}` included) → `jsonl`, holding `_step` → `wandb`; a JSON array whose
 * records hold `_step` → `wandb`; a CSV header with a `_step` column or a first column holding
 * "step" (a chart export's `Step`) → `wandb`. When the head is inconclusive (empty, or cut inside
 * the first line) the extension decides: `.jsonl` → `jsonl`, `.csv` → `wandb`.
 *
 * @param name - The file name or path (only its last part is read).
 * @param head - The file's first bytes ({@link DETECT_HEAD_BYTES} are enough).
 * @returns The format, or null, with the reasons.
 * @throws {ConfigError} E_CONFIG when `name` is not a string or `head` not a Uint8Array.
 * @derivation docs/diagnostics/logs.md#detection
 * @enforcedBy test/io/metricLogs/textLogs.test.ts > detection > golden: every fixture is detected as its format, by content alone too
 * @since 0.1.0
 */
export function detectMetricLogFormat(name: string, head: Uint8Array): MetricLogDetection {
  requireString("detectMetricLogFormat", "name", name);
  requireBytes("detectMetricLogFormat", "head", head);
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
  if (base.startsWith("events.out.tfevents."))
    return {
      format: "tensorboard",
      reasons: ["the name of a TensorBoard event file (events.out.tfevents.*)"],
      byExtension: false,
    };
  const framing = tfRecordHead(head);
  if (framing !== null) return { format: "tensorboard", reasons: [framing], byExtension: false };
  if (base === "trainer_state.json")
    return {
      format: "trainer_state",
      reasons: ["the name trainer_state.json (the HF Trainer's state)"],
      byExtension: false,
    };
  const text = TEXT.decode(head.subarray(0, DETECT_HEAD_BYTES)).replace(/^\ufeff?\s*/, "");
  const ext = base.toLowerCase().endsWith(".jsonl")
    ? "jsonl"
    : base.toLowerCase().endsWith(".csv")
      ? "wandb"
      : null;
  const byExt = (why: string): MetricLogDetection =>
    ext === null
      ? { format: null, reasons: [why], byExtension: false }
      : {
          format: ext,
          reasons: [why, `the extension ${ext === "jsonl" ? ".jsonl" : ".csv"}`],
          byExtension: true,
        };
  if (text === "") return byExt("an empty head");
  if (text.includes("\u0000"))
    return {
      format: null,
      reasons: ["binary bytes (NUL), not TFRecord-framed"],
      byExtension: false,
    };
  if (text[0] === "{") {
    if (/"log_history"\s*:/.test(text))
      return {
        format: "trainer_state",
        reasons: ['a JSON object with a "log_history" key'],
        byExtension: false,
      };
    const nl = text.indexOf("\n");
    if (nl >= 0) {
      const parsed = parsePythonJson(text.slice(0, nl));
      const f = parsed.ok ? jsonKeysFormat(parsed.value) : null;
      if (f === "jsonl")
        return { format: f, reasons: ['a first JSON line with a "step" key'], byExtension: false };
      if (f === "wandb")
        return {
          format: f,
          reasons: ['a first JSON line with W&B\'s "_step" key'],
          byExtension: false,
        };
      if (parsed.ok) return byExt("a first JSON line without a step key");
    }
    if (/^\{"(step|global_step)"\s*:/.test(text))
      return {
        format: "jsonl",
        reasons: ['a first JSON line starting with a "step" key'],
        byExtension: false,
      };
    if (/^\{"_step"\s*:/.test(text) || /"_step"\s*:/.test(text.slice(0, nl < 0 ? text.length : nl)))
      return {
        format: "wandb",
        reasons: ['a first JSON line with W&B\'s "_step" key'],
        byExtension: false,
      };
    return byExt("a JSON head whose first line holds no step key");
  }
  if (text[0] === "[") {
    if (/"_step"\s*:/.test(text))
      return {
        format: "wandb",
        reasons: ['a JSON array of records with W&B\'s "_step" key'],
        byExtension: false,
      };
    return byExt('a JSON array without W&B\'s "_step" key');
  }
  const nl = text.indexOf("\n");
  if (nl < 0 && head.length >= DETECT_HEAD_BYTES) return byExt("a first line longer than the head");
  const header = new CsvReader(nl < 0 ? text : text.slice(0, nl + 1), 100_000).next();
  const fields = header?.fields ?? [];
  if (fields.includes("_step"))
    return {
      format: "wandb",
      reasons: ["a CSV header with W&B's _step column (run.history() saved with pandas)"],
      byExtension: false,
    };
  if (fields.length > 1 && /step/i.test(fields[0] ?? ""))
    return {
      format: "wandb",
      reasons: [
        `a CSV header whose first column is a step axis (${JSON.stringify(fields[0]).slice(0, 80)}): a W&B chart export`,
      ],
      byExtension: false,
    };
  return byExt("no JSON object, JSON array or CSV header with a step column");
}
