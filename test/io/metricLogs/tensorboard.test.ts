/**
 * Enforces docs/diagnostics/logs.md#tensorboard-event-files: event files written by the real
 * writers (tensorboardX, torch.utils.tensorboard, tensorboard's own EventFileWriter; recorded by
 * tools/record-fixtures/tensorboardLogs.py into test/fixtures/logs/tensorboard/) read back the
 * exact values their writers logged, both scalar styles; a truncated tail is the end of the data;
 * a bad length CRC or data CRC is a listed problem; limits, an empty file and a file that is not
 * TFRecord; hand-built events for the tensor forms no recorded writer uses; and a property: any
 * byte mutation gives a log or a typed error.
 */
import { createHash } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ConfigError, IoError, PolgradError } from "../../../src/errors.js";
import { Problems, resolveLimits, SeriesBuilder } from "../../../src/io/metricLogs/_series.js";
import { crc32c } from "../../../src/io/metricLogs/crc32c.js";
import { readMetricLogs } from "../../../src/io/metricLogs/files.js";
import { parseTensorboardEvents, scanEventFile } from "../../../src/io/metricLogs/tensorboard.js";
import type { MetricLog } from "../../../src/io/metricLogs/types.js";
import {
  checkLog,
  dims,
  dtype,
  event,
  expectedOf,
  FILES,
  FIX,
  f32,
  fixture,
  frame,
  LD,
  plugin,
  prov,
  raw,
  recordStarts,
  root,
  runOf,
  seriesOf,
  simple,
  tag,
  tensor,
} from "./_tensorboardKit.js";

describe("parseTensorboardEvents", () => {
  test("golden: recorded tensorboardX, torch and tensorboard files read back the values their writers logged", () => {
    for (const rel of FILES) {
      const bytes = fixture(rel);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(prov.files[rel]?.sha256);
      const log = parseTensorboardEvents(bytes, rel);
      checkLog(log);
      expect(log.problemCount).toBe(0);
      expect(log.files).toEqual([{ path: rel, bytes: bytes.length, records: expect.any(Number) }]);
      if (runOf(rel) === "restarted") continue; // its two files are merged in readMetricLogs
      // Exact: Object.is per value (NaN, ±∞ and the float32 widening included).
      expect(seriesOf(log)).toStrictEqual(expectedOf(runOf(rel)));
    }
  });

  test("golden: simple_value and tensor-style scalars (float_val, double_val, int_val, int64_val, tensor_content) read alike", () => {
    const torch = seriesOf(
      parseTensorboardEvents(fixture("torch/events.out.tfevents.1700000000.host.0")),
    );
    expect(Object.keys(torch)).toEqual(["simple", "tensor/double", "tensor/float"]);
    expect(torch["tensor/float"]?.[0]).toEqual([0, f32(-1 / 3)]);
    expect(torch["tensor/double"]?.[0]).toEqual([0, Math.PI / 7]);
    const tb = seriesOf(
      parseTensorboardEvents(fixture("tensorboard/events.out.tfevents.1700000000.host.0")),
    );
    expect(tb["content/f32"]?.[3]).toEqual([3, f32(f32(1.1 ** 3))]);
    expect(tb["content/f64"]?.[1]).toEqual([1, Math.exp(-1)]);
    expect(tb["made/i64"]?.map((p) => p[1])).toEqual([-7, 993, 1993, 2993]);
    expect(tb["made/i32"]?.map((p) => p[1])).toEqual([0, -3, -6, -9]);
  });

  test("golden: histograms, images and text are skipped and counted", () => {
    const rel = "tbx/events.out.tfevents.1700000000.host.0";
    const run = new SeriesBuilder("t", rel, resolveLimits("t", {}));
    const problems = new Problems();
    const scan = scanEventFile("t", fixture(rel), rel, run, problems, new Map());
    expect(scan.skippedValues).toBe(5); // 3 histograms, 1 image, 1 text
    expect(run.finish("tensorboard", "", [scan.file], problems).series.map((s) => s.name)).toEqual([
      "train/entropy",
      "train/loss",
    ]);
  });

  test("golden: hand-built tensors: packed and unpacked float_val, small ints, half, other plugins, other ranks", () => {
    const bytes = frame(
      event(
        1,
        [
          tag("packed"),
          plugin("scalars"),
          tensor(
            dtype(1),
            dims(),
            raw((w) => w.tag(5, LD).fork().float(0.1).join()),
          ),
        ],
        [
          tag("unpacked"),
          tensor(
            dtype(1),
            raw((w) => w.tag(5, WireType.Bit32).float(0.2)),
          ),
        ],
        [
          tag("i8"),
          tensor(
            dtype(6),
            raw((w) => w.tag(7, WireType.Varint).int32(-5)),
          ),
        ],
        [
          tag("half"),
          tensor(
            dtype(19),
            raw((w) => w.tag(13, WireType.Varint).int32(0x3c00)),
          ),
        ],
        [
          tag("u64"),
          tensor(
            dtype(23),
            raw((w) => w.tag(17, WireType.Varint).uint64(2n ** 53n)),
          ),
        ],
        [tag("zero"), tensor(dtype(2))],
        [
          tag("pr"),
          plugin("pr_curves"),
          tensor(
            dtype(1),
            raw((w) => w.tag(5, WireType.Bit32).float(9)),
          ),
        ],
        [
          tag("vector"),
          tensor(
            dtype(1),
            dims(2),
            raw((w) => w.tag(5, LD).fork().float(1).float(2).join()),
          ),
        ],
        [
          tag("text"),
          tensor(
            dtype(7),
            raw((w) => w.tag(8, LD).string("hi")),
          ),
        ],
      ),
      // The plugin of a tag is remembered from its first metadata: "pr" stays skipped.
      event(
        2,
        [
          tag("pr"),
          tensor(
            dtype(1),
            raw((w) => w.tag(5, WireType.Bit32).float(9)),
          ),
        ],
        [tag("packed"), simple(0.5)],
      ),
    );
    const log = parseTensorboardEvents(bytes);
    expect(log.problemCount).toBe(0);
    expect(seriesOf(log)).toStrictEqual({
      half: [[1, 1]],
      i8: [[1, -5]],
      packed: [
        [1, f32(0.1)],
        [2, 0.5],
      ],
      u64: [[1, 2 ** 53]],
      unpacked: [[1, f32(0.2)]],
      zero: [[1, 0]],
    });
  });

  test("rejects: malformed values are listed and the rest of the record is read", () => {
    const bytes = frame(
      event(
        3,
        [
          tensor(
            dtype(1),
            raw((w) => w.tag(5, WireType.Bit32).float(1)),
          ),
        ],
        [
          tag("two"),
          tensor(
            dtype(1),
            raw((w) => w.tag(5, LD).fork().float(1).float(2).join()),
          ),
        ],
        [
          tag("content"),
          tensor(
            dtype(2),
            raw((w) => w.tag(4, LD).bytes(new Uint8Array(4))),
          ),
        ],
        [tag("ok"), simple(4)],
      ),
      event(2n ** 60n, [tag("ok"), simple(5)]),
      new Uint8Array([0x10, 0xff]), // Event.step: a varint cut short
      event(4, [raw((w) => w.tag(1, LD).bytes(new Uint8Array([0xff, 0xfe]))), simple(1)]),
    );
    const log = parseTensorboardEvents(bytes, "x.tfevents");
    expect(seriesOf(log)).toStrictEqual({ ok: [[3, 4]] });
    expect(log.problemCount).toBe(6);
    expect(log.problems.map((p) => p.at)).toEqual([
      "record 1 (byte 0)",
      "record 1 (byte 0)",
      "record 1 (byte 0)",
      expect.stringMatching(/^record 2 /),
      expect.stringMatching(/^record 3 /),
      expect.stringMatching(/^record 4 /),
    ]);
    expect(log.problems.map((p) => p.what).join("\n")).toMatchInlineSnapshot(`
      "a Summary.Value without a tag
      tag "two": a rank-0 DT_FLOAT tensor of 2 values
      tag "content": a rank-0 DT_DOUBLE tensor_content of 4 bytes, not 8
      Event.step 1152921504606846976 is beyond ±2^53
      not a valid Event protobuf (premature EOF)
      Value.tag is not valid UTF-8"
    `);
  });

  test("golden: a file cut mid-record (a live writer) reads the records before the cut, with a note", () => {
    const rel = "tbx/events.out.tfevents.1700000000.host.0";
    const bytes = fixture(rel);
    const starts = recordStarts(bytes);
    expect(starts.length).toBe(18);
    for (const k of [1, 5, 17]) {
      const whole = parseTensorboardEvents(bytes.subarray(0, starts[k]));
      for (const cut of [
        1,
        11,
        12,
        13,
        (starts[k + 1] ?? bytes.length) - (starts[k] as number) - 1,
      ]) {
        const log = parseTensorboardEvents(bytes.subarray(0, (starts[k] as number) + cut), rel);
        expect(log.problemCount).toBe(0);
        expect(log.files[0]?.records).toBe(k);
        expect(log.files[0]?.note).toMatch(/^a truncated last record \(a live writer\)/);
        expect(seriesOf(log)).toStrictEqual(seriesOf(whole));
      }
    }
    expect(parseTensorboardEvents(bytes.subarray(0, 5)).files[0]?.note).toMatch(
      /5 bytes of a 12-byte/,
    );
  });

  test("property: every cut of a recorded file reads without an error", () => {
    const bytes = fixture("torch/events.out.tfevents.1700000000.host.0");
    for (let n = 0; n <= bytes.length; n++) checkLog(parseTensorboardEvents(bytes.subarray(0, n)));
  });

  test("rejects: a flipped byte in the length CRC and in the data CRC", () => {
    const rel = "torch/events.out.tfevents.1700000000.host.0";
    const bytes = fixture(rel);
    const starts = recordStarts(bytes);
    const whole = parseTensorboardEvents(bytes);
    const at = starts[4] as number; // an event with one value (simple, step 1)
    // The length's CRC: the record is lost (its length cannot be trusted); the reader resyncs
    // at the next record whose CRCs check, and reads every other record.
    const lenFlip = Uint8Array.from(bytes);
    lenFlip[at + 9] = (lenFlip[at + 9] as number) ^ 0x10;
    const a = parseTensorboardEvents(lenFlip, rel);
    expect(a.problemCount).toBe(1);
    expect(a.problems[0]).toEqual({
      file: rel,
      at: `record 5 (byte ${at})`,
      what: `the masked CRC32C of the record's length does not match: the length cannot be trusted; bytes ${at} to ${starts[5]} skipped to the next record header that checks`,
    });
    // The data's CRC: that record is skipped, the length is trusted, the next one is read.
    const end = (starts[5] as number) - 1;
    const dataFlip = Uint8Array.from(bytes);
    dataFlip[end] = (dataFlip[end] as number) ^ 0x01;
    const b = parseTensorboardEvents(dataFlip, rel);
    expect(b.problems).toEqual([
      {
        file: rel,
        at: `record 5 (byte ${at})`,
        what: "the masked CRC32C of the record's data does not match: the record is skipped",
      },
    ]);
    // Both lose exactly the one value of record 5 (simple at step 1).
    const lost = (log: MetricLog) => {
      const s = seriesOf(log);
      const w = seriesOf(whole);
      return Object.keys(w).flatMap((k) => (w[k]?.length !== s[k]?.length ? [k] : []));
    };
    expect([lost(a), lost(b)]).toEqual([["simple"], ["simple"]]);
    expect(seriesOf(a).simple?.map((p) => p[0])).toEqual([0, 2, 3, 4]);
    expect(a.files[0]?.records).toBe(
      whole.files[0]?.records === undefined ? -1 : whole.files[0].records - 1,
    );
  });

  test("golden: an empty file is an empty log; crc32c of the standard check string", () => {
    const log = parseTensorboardEvents(new Uint8Array(0), "empty");
    expect(log).toEqual({
      format: "tensorboard",
      run: "",
      files: [{ path: "empty", bytes: 0, records: 0 }],
      series: [],
      problems: [],
      problemCount: 0,
      rewrites: 0,
    });
    expect(crc32c(new TextEncoder().encode("123456789"))).toBe(0xe3069283);
  });

  test("rejects: a file that is not TFRecord", () => {
    const text = new TextEncoder().encode('{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.4}\n');
    const e = (() => {
      try {
        parseTensorboardEvents(text, "metrics.jsonl");
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(IoError);
    expect(e).toMatchObject({
      code: "E_IO",
      fn: "parseTensorboardEvents",
      arg: "path",
      path: "metrics.jsonl",
    });
    expect((e as Error).message).toMatchInlineSnapshot(
      `"parseTensorboardEvents: path must be a TensorBoard event file: TFRecord records (u64 length, masked CRC32C of the length, data, masked CRC32C of the data); got 50 bytes in which no record's length CRC matches (the first 8 bytes: "7b 22 73 74 65 70 22 3a") (in metrics.jsonl)"`,
    );
  });

  test("rejects: limits exceeded (bytes, series, points) and limits that are not positive integers", () => {
    const rel = "tbx/events.out.tfevents.1700000000.host.0";
    const bytes = fixture(rel);
    expect(() => parseTensorboardEvents(bytes, rel, { maxBytes: 1000 })).toThrow(
      /bytes must be at most 1000 bytes \(raise options.maxBytes to read it\); got 16559 bytes/,
    );
    expect(() => parseTensorboardEvents(bytes, rel, { maxSeries: 1 })).toThrow(
      /options.maxSeries must be at most 1 series in one run \(raise options.maxSeries to read it\); got another series, "train\/entropy" \(in tbx\/events/,
    );
    expect(() => parseTensorboardEvents(bytes, rel, { maxPoints: 5 })).toThrow(
      /options.maxPoints must be at most 5 points in one series .*; got more than 5 distinct steps of "train\/loss"/,
    );
    expect(parseTensorboardEvents(bytes, rel, { maxPoints: 6, maxSeries: 2 }).series).toHaveLength(
      2,
    );
    for (const bad of [0, -1, 1.5, Number.NaN, "10"])
      expect(() => parseTensorboardEvents(bytes, rel, { maxPoints: bad as number })).toThrow(
        ConfigError,
      );
  });

  test("property: any byte mutation of a recorded file gives a log or a typed error", () => {
    const seeds = FILES.map(fixture);
    fc.assert(
      fc.property(
        fc.nat({ max: seeds.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.option(fc.nat(), { nil: undefined }),
        (s, edits, cut) => {
          const seed = seeds[s] as Uint8Array;
          const b = Uint8Array.from(
            seed.subarray(0, cut === undefined ? seed.length : cut % (seed.length + 1)),
          );
          for (const [i, v] of edits) if (b.length > 0) b[i % b.length] = v;
          let log: MetricLog;
          try {
            log = parseTensorboardEvents(b, "<m>");
          } catch (e) {
            expect(e).toBeInstanceOf(PolgradError);
            return;
          }
          checkLog(log);
        },
      ),
      { numRuns: 400, seed: 34 },
    );
  });

  test("identity: the parser modules import nothing from node: (they run in a browser)", () => {
    for (const f of [
      "tensorboard.ts",
      "tensorboardEvent.ts",
      "_series.ts",
      "crc32c.ts",
      "types.ts",
    ]) {
      const src = readFileSync(join(root, "src/io/metricLogs", f), "utf8");
      expect({ f, node: /from "node:/.test(src) }).toEqual({ f, node: false });
    }
  });
});

describe("readMetricLogs", () => {
  test("golden: the recorded log folder reads as five runs, the restarted run's rewrites counted", () => {
    const logs = readMetricLogs(FIX);
    expect(logs.map((l) => l.run)).toEqual(["", "restarted", "tbx", "tensorboard", "torch"]);
    for (const log of logs) {
      checkLog(log);
      expect(seriesOf(log)).toStrictEqual(expectedOf(log.run));
      expect(log.problemCount).toBe(0);
      expect(log.rewrites).toBe(log.run === "restarted" ? 3 : 0);
    }
    const restarted = logs[1] as MetricLog;
    expect(restarted.files.map((f) => f.path)).toEqual([
      join(FIX, "restarted/events.out.tfevents.1700000000.host.0"),
      join(FIX, "restarted/events.out.tfevents.1700000100.host.1"),
    ]);
    // One file given: a one-run log named "".
    const one = readMetricLogs(join(FIX, "torch/events.out.tfevents.1700000000.host.0"));
    expect(one.map((l) => [l.run, seriesOf(l)])).toStrictEqual([["", expectedOf("torch")]]);
  });

  test("golden: a run's files are read in the order of the time in their names, then the names", () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-tb-"));
    const [first, second] = readdirSync(join(FIX, "restarted")).sort();
    // 999999999 < 1000000000, although "1000000000" sorts first as text.
    writeFileSync(join(dir, "events.out.tfevents.999999999.h"), fixture(`restarted/${first}`));
    writeFileSync(join(dir, "events.out.tfevents.1000000000.h"), fixture(`restarted/${second}`));
    mkdirSync(join(dir, "empty"));
    symlinkSync(dir, join(dir, "loop")); // a link to a folder is not followed
    const [log] = readMetricLogs(dir);
    expect(seriesOf(log as MetricLog)).toStrictEqual(expectedOf("restarted"));
    expect(() => readMetricLogs(join(dir, "empty"))).toThrow(
      /readMetricLogs: path must be a folder holding metric logs .*; got none found/,
    );
  });

  test("rejects: a file over maxBytes before reading it, too many series, too many points", () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-tb-"));
    const big = join(dir, "events.out.tfevents.1.h");
    // A sparse 2 GiB file: refused from its size, never read into memory.
    writeFileSync(big, "");
    truncateSync(big, 2 ** 31);
    expect(() => readMetricLogs(dir)).toThrow(
      /readMetricLogs: path must be at most 1073741824 bytes \(1 GiB\) \(raise options.maxBytes to read it\); got 2147483648 bytes \(2 GiB\)/,
    );
    expect(() => readMetricLogs(FIX, { maxSeries: 2 })).toThrow(/at most 2 series in one run/);
    expect(() => readMetricLogs(FIX, { maxPoints: 7 })).toThrow(
      /restarted\/events.out.tfevents.1700000100.host.1\)$/,
    );
    expect(() => readMetricLogs(join(dir, "nope"))).toThrow(/path must be an existing file/);
  });
});
