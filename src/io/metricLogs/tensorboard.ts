/**
 * A from-scratch reader of TensorBoard event files (docs/diagnostics/logs.md#tensorboard-event-files):
 * TFRecord framing, each record `u64 length (LE) · masked CRC32C of the length · data · masked
 * CRC32C of the data`, both CRCs checked (CRC32C written here: a 256-entry table), and in each
 * record's data one protobuf `Event`, whose scalars are read (./tensorboardEvent.ts). A record
 * whose data CRC fails is listed and skipped; a record whose length CRC fails is listed and the
 * reader resyncs at the next offset whose record header checks (its length CRC, a length within
 * the file); a truncated last
 * record, as a live writer leaves it, ends the data with a note. Pure (no `node:` import): it
 * runs in a browser.
 */
import { fmtValue } from "../../core/message.js";
import { requireBytes, requireString } from "../../core/validate.js";
import { fmtBytes, ioError } from "../_internal/ioError.js";
import { type Limits, Problems, resolveLimits, SeriesBuilder } from "./_series.js";
import { maskedCrc32c } from "./crc32c.js";
import { decodeEvent, Malformed } from "./tensorboardEvent.js";
import type { MetricLog, MetricLogFile, MetricLogLimits } from "./types.js";

/** Bytes of a record's header (u64 length, u32 masked CRC) and of its footer (u32 masked CRC). */
const HEADER = 12;
const FOOTER = 4;

function u32(b: Uint8Array, at: number): number {
  return (
    ((b[at] as number) |
      ((b[at + 1] as number) << 8) |
      ((b[at + 2] as number) << 16) |
      ((b[at + 3] as number) << 24)) >>>
    0
  );
}

/** The u64 length at `at`, or Infinity when it is 2^53 or more (past any file). */
function u64(b: Uint8Array, at: number): number {
  const hi = u32(b, at + 4);
  return hi >= 2 ** 21 ? Number.POSITIVE_INFINITY : hi * 2 ** 32 + u32(b, at);
}

/** Whether the header at `at` carries a length whose masked CRC matches. */
function lengthChecks(b: Uint8Array, at: number): boolean {
  return maskedCrc32c(b, at, at + 8) === u32(b, at + 8);
}

/**
 * The first offset at or after `from` whose 12-byte header checks (its length CRC matches and
 * the record fits in the file), or -1. One pass over the bytes, 8 bytes CRC'd per offset; the
 * data CRC is left to the caller, which then skips the record by its length if it fails, so the
 * whole read stays linear in the file's size (requiring the data CRC here too would CRC up to
 * the whole file at every offset a hostile file makes match). A chance match is 1 in 2^32 per
 * offset.
 */
function resync(b: Uint8Array, from: number): number {
  for (let p = from; p + HEADER + FOOTER <= b.length; p++) {
    if (lengthChecks(b, p) && u64(b, p) <= b.length - p - HEADER - FOOTER) return p;
  }
  return -1;
}

/** What reading one file gives besides its points: the file entry and the values it skipped. @internal */
export interface EventFileScan {
  readonly file: MetricLogFile;
  /** Summary values that are not scalars (images, histograms, text, audio, other tensors). */
  readonly skippedValues: number;
  /**
   * Bytes read to the end of the last whole record: the file's length, or where a truncated
   * last record starts (a follower reads on from there once the writer has written it).
   */
  readonly consumed: number;
  /** Records framed before `consumed` (for the record numbers of the next chunk). */
  readonly framedRecords: number;
}

/**
 * Read one event file's bytes into `run`: every record framed and CRC-checked, every scalar
 * added as `(tag, step, value)`, every skipped record listed as a problem. `plugins` carries each
 * tag's plugin (from its first metadata) from file to file of a run. Throws an IoError when the
 * bytes hold no record at all that checks (not a TFRecord file) or a limit is exceeded. @internal
 */
export function scanEventFile(
  fn: string,
  bytes: Uint8Array,
  path: string,
  run: SeriesBuilder,
  problems: Problems,
  plugins: Map<string, string>,
  base: { readonly byte: number; readonly record: number } = { byte: 0, record: 0 },
): EventFileScan {
  run.path = path;
  const n = bytes.length;
  let pos = 0;
  let index = 0; // records framed, good or bad (1-based in messages)
  let records = 0; // records whose data was decoded
  let framed = false; // some header's length CRC matched
  let skippedValues = 0;
  let note: string | undefined;
  let consumed = n;
  const at = (k: number, p: number): string => `record ${base.record + k} (byte ${base.byte + p})`;
  while (pos < n) {
    index++;
    if (n - pos < HEADER) {
      note = `a truncated last record (a live writer): ${n - pos} bytes of a 12-byte record header at byte ${pos}; the data ends there`;
      consumed = pos;
      break;
    }
    if (!lengthChecks(bytes, pos)) {
      const next = resync(bytes, pos + 1);
      problems.add(
        path,
        at(index, pos),
        next < 0
          ? `the masked CRC32C of the record's length does not match: the length cannot be trusted, and no record header checks after it (bytes ${pos} to ${n} skipped)`
          : `the masked CRC32C of the record's length does not match: the length cannot be trusted; bytes ${pos} to ${next} skipped to the next record header that checks`,
      );
      if (next < 0) break;
      pos = next;
      continue;
    }
    framed = true;
    const len = u64(bytes, pos);
    if (len > n - pos - HEADER - FOOTER) {
      const need =
        len === Number.POSITIVE_INFINITY ? "2^53 or more" : `${pos + HEADER + len + FOOTER}`;
      note = `a truncated last record (a live writer): record ${index} at byte ${pos} needs bytes up to ${need}, the data ends at byte ${n}`;
      consumed = pos;
      break;
    }
    const start = pos + HEADER;
    const end = start + len;
    pos = end + FOOTER;
    if (maskedCrc32c(bytes, start, end) !== u32(bytes, end)) {
      problems.add(
        path,
        at(index, start - HEADER),
        "the masked CRC32C of the record's data does not match: the record is skipped",
      );
      continue;
    }
    records++;
    let event: ReturnType<typeof decodeEvent>;
    try {
      event = decodeEvent(bytes.subarray(start, end), plugins);
    } catch (e) {
      if (!(e instanceof Malformed)) throw e;
      problems.add(path, at(index, start - HEADER), e.message);
      continue;
    }
    for (const v of event.values) {
      if (v.kind === "scalar") run.add(v.tag, event.step, v.value);
      else if (v.kind === "skipped") skippedValues++;
      else problems.add(path, at(index, start - HEADER), v.what);
    }
  }
  if (!framed && n >= HEADER) {
    throw ioError(
      fn,
      path,
      "path",
      "a TensorBoard event file: TFRecord records (u64 length, masked CRC32C of the length, data, masked CRC32C of the data)",
      `${fmtBytes(n)} in which no record's length CRC matches (the first 8 bytes: ${fmtValue(hexOf(bytes.subarray(0, 8)))})`,
    );
  }
  const file: MetricLogFile =
    note === undefined ? { path, bytes: n, records } : { path, bytes: n, records, note };
  return {
    file,
    skippedValues,
    consumed,
    framedRecords: note === undefined ? index : index - 1,
  };
}

function hexOf(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(" ");
}

/** Parse one event file's bytes as a one-run log (run `""`), limits resolved. @internal */
export function parseEventsAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  limits: Limits,
): MetricLog {
  if (bytes.length > limits.maxBytes) {
    throw ioError(
      fn,
      path,
      "bytes",
      `at most ${fmtBytes(limits.maxBytes)} (raise options.maxBytes to read it)`,
      fmtBytes(bytes.length),
    );
  }
  const run = new SeriesBuilder(fn, path, limits);
  const problems = new Problems();
  const { file } = scanEventFile(fn, bytes, path, run, problems, new Map());
  return run.finish("tensorboard", "", [file], problems);
}

/**
 * Parse the bytes of one TensorBoard event file held in memory (`events.out.tfevents.*`): the
 * scalars it logged, one series per tag, as a one-run {@link MetricLog} (run `""`).
 *
 * Format: TFRecord records, each `u64 length (LE) · masked CRC32C of the 8 length bytes · data ·
 * masked CRC32C of the data` (mask `((crc >>> 15) | (crc << 17)) + 0xa282ead8`), each data a
 * protobuf `Event`. Scalars are read written both ways: `Summary.Value.simple_value` (a float32:
 * tf.compat.v1, tensorboardX, torch.utils.tensorboard) and a rank-0 numeric `tensor` (TF2
 * `tf.summary.scalar`, torch's `new_style=True`) in `float_val`, `double_val`, `int_val`,
 * `int64_val`, `half_val`, `uint32_val`, `uint64_val` or `tensor_content`, unless its tag's
 * metadata names another plugin than `scalars`. Images, histograms, audio, text and other
 * tensors are skipped. float32 values are widened exactly; NaN and ±∞ are kept as logged; the
 * last value read at a step wins and is counted in `rewrites`.
 *
 * A record whose data CRC fails, or that is not a valid Event, is listed in `problems` and
 * skipped; one whose length CRC fails is listed and the reader resyncs at the next offset whose
 * record header checks. A truncated last record (a live writer) ends the data: the file's
 * `note` says so. An empty file is an empty log.
 *
 * @param bytes - The whole file.
 * @param path - The name to report in errors and problems (default `"<bytes>"`).
 * @param limits - `maxBytes` (default 1 GiB), `maxSeries` (100,000), `maxPoints` (10,000,000).
 * @returns The log: one file, every series sorted by name, problems, rewrites.
 * @throws {IoError} E_IO when the bytes are over `maxBytes`, hold no record whose length CRC
 *   matches (12 bytes or more: not a TFRecord file), or hold more series or points than the limits.
 * @throws {ConfigError} E_CONFIG when a limit is not a positive integer.
 * @derivation docs/diagnostics/logs.md#tensorboard-event-files
 * @enforcedBy test/io/metricLogs/tensorboard.test.ts > parseTensorboardEvents > golden: recorded tensorboardX, torch and tensorboard files read back the values their writers logged
 * @enforcedBy test/io/metricLogs/tensorboard.test.ts > parseTensorboardEvents > rejects: a flipped byte in the length CRC and in the data CRC
 * @enforcedBy test/io/metricLogs/tensorboard.test.ts > parseTensorboardEvents > property: any byte mutation of a recorded file gives a log or a typed error
 * @since 0.1.0
 */
export function parseTensorboardEvents(
  bytes: Uint8Array,
  path = "<bytes>",
  limits: MetricLogLimits = {},
): MetricLog {
  const fn = "parseTensorboardEvents";
  requireBytes(fn, "bytes", bytes);
  requireString(fn, "path", path);
  return parseEventsAs(fn, bytes, path, resolveLimits(fn, limits));
}
