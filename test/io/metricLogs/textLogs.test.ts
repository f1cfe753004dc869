/**
 * Enforces docs/diagnostics/logs.md: the JSONL, trainer_state.json and W&B export readers on
 * files written by the real writers (test/fixtures/logs/, tools/record-fixtures/textLogs.py),
 * their problems, truncation and limits, format detection, the folder walk, and a property per
 * parser: mutated bytes give a MetricLog or a typed error, nothing else.
 */
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ConfigError, IoError, PolgradError } from "../../../src/errors.js";
import { detectMetricLogFormat } from "../../../src/io/metricLogs/detect.js";
import { findMetricLogFiles, readMetricLogs } from "../../../src/io/metricLogs/files.js";
import { parseJsonlLog } from "../../../src/io/metricLogs/jsonl.js";
import { parseTrainerState } from "../../../src/io/metricLogs/trainerState.js";
import type { MetricLog } from "../../../src/io/metricLogs/types.js";
import { parseWandbExport } from "../../../src/io/metricLogs/wandb.js";

const DIR = fileURLToPath(new URL("../../fixtures/logs/", import.meta.url));
const bytesOf = (p: string): Uint8Array => new Uint8Array(readFileSync(join(DIR, p)));
const enc = new TextEncoder();
const JSONL = "jsonl/gsm8k_grpo.jsonl";
const CKPT10 = "trainer_state/out/checkpoint-10/trainer_state.json";
const CHART = "wandb/wandb_export_2026-01-02T03_04_05.678+00_00.csv";

/** A series as plain arrays, for toEqual. */
function series(log: MetricLog, name: string): { steps: number[]; values: number[] } {
  const s = log.series.find((x) => x.name === name);
  if (s === undefined) throw new Error(`no series ${name}`);
  return { steps: [...s.steps], values: [...s.values] };
}

describe("fixtures", () => {
  test("golden: every fixture has the SHA-256 its provenance records", () => {
    const prov = JSON.parse(readFileSync(join(DIR, "provenance.json"), "utf8"));
    for (const [p, sha] of Object.entries(prov.sha256 as Record<string, string>))
      expect(createHash("sha256").update(bytesOf(p)).digest("hex")).toBe(sha);
  });
});

describe("jsonl", () => {
  test("golden: verl's FileLogger file reads to the values it logged", () => {
    const log = parseJsonlLog(bytesOf(JSONL), JSONL);
    expect(log.format).toBe("jsonl");
    expect(log.files).toEqual([{ path: JSONL, bytes: 1078, records: 6 }]);
    expect(log.problems).toEqual([]);
    expect(log.rewrites).toBe(0);
    expect(series(log, "actor/entropy")).toEqual({
      steps: [1, 2, 3, 4],
      values: [1.375, 1.25, 1.125, 1],
    });
    // orjson writes NaN and inf as null: read as NaN.
    expect(series(log, "actor/grad_norm").values).toEqual([1.5, 2.5, Number.NaN, 4.5]);
    expect(series(log, "timing_s/gen").values).toEqual([2, 4, 6, Number.NaN]);
    // Validation logged in its own line of step 0 and step 2 merges with the training lines.
    expect(series(log, "val-core/openai/gsm8k/acc/mean@1")).toEqual({
      steps: [0, 2],
      values: [0.25, 0.5],
    });
    expect(series(log, "response_length/mean").values).toEqual([101, 102, 103, 104]);
    expect(log.series.map((s) => s.name)).toEqual([...log.series.map((s) => s.name)].sort());
  });

  test("golden: in the flat form null is a missing value (Python's json writes NaN as NaN); in verl's data it is NaN (orjson)", () => {
    const log = parseJsonlLog(
      enc.encode(
        '{"step":1,"a":null,"b":NaN}\n{"step":2,"a":0.5,"b":1}\n{"step":3,"data":{"a":null}}\n',
      ),
      "flat.jsonl",
    );
    expect(series(log, "a")).toEqual({ steps: [2, 3], values: [0.5, Number.NaN] });
    expect(series(log, "b")).toEqual({ steps: [1, 2], values: [Number.NaN, 1] });
    expect(log.problems).toEqual([]);
  });

  test("golden: bad lines are problems with their line, a truncated last line ends the data", () => {
    const good = bytesOf(JSONL);
    const text = new TextDecoder().decode(good);
    const bad = `${text}not json\n{"data":{"x":1}}\n{"step":1.5,"x":1}\n[1]\n{"step":5,"x":"abc","y":true}\n{"step":5,"x":"nope"}\n{"step":6,"data":{"actor/entropy":0.5}`;
    const log = parseJsonlLog(enc.encode(bad), "a.jsonl");
    expect(log.problems.map((p) => [p.at, p.what.split(" (")[0]?.split(":")[0]])).toEqual([
      ["line 7", "not JSON"],
      ["line 8", "no step"],
      ["line 9", '"step" must be an integer; got 1.5'],
      ["line 10", "an array, not a JSON object"],
      ["line 11", '"x" holds a string'],
      ["line 11", '"y" holds a boolean, not a number'],
    ]);
    expect(log.problems[4]?.what).toContain("2 such values");
    expect(log.problemCount).toBe(6);
    expect(log.files[0]?.note).toBe(
      `a truncated last line (a live writer): the data ends before line 13 (byte ${bad.lastIndexOf("\n") + 1})`,
    );
    expect(log.files[0]?.records).toBe(12);
    expect(series(log, "actor/entropy").steps).toEqual([1, 2, 3, 4]);
  });

  test("golden: flat lines, python's NaN tokens, a rewritten step and unsorted steps", () => {
    const text =
      '{"global_step": 3, "loss": NaN, "kl": -Infinity}\r\n\n{"step": 1, "loss": 0.5}\n{"step": 3, "loss": 2.0, "kl": "inf"}\n{"step": 2, "loss": 1}';
    const log = parseJsonlLog(enc.encode(text));
    expect(series(log, "loss")).toEqual({ steps: [1, 2, 3], values: [0.5, 1, 2] });
    expect(series(log, "kl")).toEqual({ steps: [3], values: [Number.POSITIVE_INFINITY] });
    expect(log.rewrites).toBe(2);
    expect(log.files[0]).toEqual({ path: "<bytes>", bytes: text.length, records: 4 });
  });

  test("rejects: a duplicate key makes its line a problem; invalid UTF-8 too", () => {
    const bytes = new Uint8Array([
      ...enc.encode('{"step":1,"a":1,"a":2}\n{"step":2,"a":"'),
      0xff,
      ...enc.encode('"}\n'),
    ]);
    const log = parseJsonlLog(bytes, "d.jsonl");
    expect(log.problems.map((p) => p.at)).toEqual(["line 1", "line 2"]);
    expect(log.problems[1]?.what).toBe("not valid UTF-8: skipped");
  });
});

describe("trainer_state", () => {
  test("golden: transformers' TrainerState file reads to the values logged", () => {
    const log = parseTrainerState(bytesOf(CKPT10), CKPT10);
    expect(log.format).toBe("trainer_state");
    expect(log.files[0]?.records).toBe(13);
    expect(log.problems).toEqual([]);
    expect(series(log, "loss").steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(series(log, "loss").values[2]).toBe(0.03);
    // json.dumps writes a NaN grad_norm as the bare token NaN.
    expect(series(log, "grad_norm").values[3]).toBeNaN();
    // TRL's None (no valid value in the window) is no point.
    expect(series(log, "rewards/accuracy_reward/std").steps).toEqual([1, 2, 3, 4, 5, 7, 8, 9, 10]);
    expect(series(log, "eval_loss")).toEqual({ steps: [5, 10], values: [0.1, 0.05] });
    expect(series(log, "train_loss")).toEqual({ steps: [10], values: [0.055] });
    expect(series(log, "clip_ratio/low_mean").values[0]).toBe(1 + 12 / 32);
    // epoch is logged with every entry: eval and final entries rewrite it at the same step.
    expect(series(log, "epoch").values).toEqual([0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.6, 1.8, 2]);
    expect(log.rewrites).toBe(3);
  });

  test("golden: an entry without an integer step is a problem", () => {
    const text =
      '{"log_history": [{"loss": 1}, {"step": "2", "loss": 1}, 3, {"step": 4, "loss": [1]}]}';
    const log = parseTrainerState(enc.encode(text), "t.json");
    expect(log.problems.map((p) => p.at)).toEqual([
      "log_history[0]",
      "log_history[1]",
      "log_history[2]",
      "log_history[3]",
    ]);
    expect(log.problems[0]?.what).toBe('"step" must be an integer; got no step key: skipped');
    expect(log.series).toEqual([]);
  });

  test("rejects: not an object with a log_history array", () => {
    for (const text of [
      "[]",
      '{"global_step": 3}',
      '{"log_history": {}}',
      '{"log_history": [',
      "\u00ff",
    ])
      expect(() => parseTrainerState(enc.encode(text), "t.json")).toThrow(IoError);
    expect(() => parseTrainerState(enc.encode('{"log_history": []'), "t.json")).toThrow(
      /at line 1, column 19/,
    );
  });
});

describe("wandb", () => {
  test("golden: a chart export with two runs reads to two runs", () => {
    const logs = parseWandbExport(bytesOf(CHART), CHART);
    expect(logs.map((l) => l.run)).toEqual(["lively-sun-3", "bright-moon-4"]);
    const [a, b] = logs as [MetricLog, MetricLog];
    expect(a.series.map((s) => s.name)).toEqual(["train/loss", "train/reward"]);
    expect(series(a, "train/loss")).toEqual({ steps: [0, 1, 2, 3], values: [2, 1, 2 / 3, 0.5] });
    expect(series(b, "train/reward")).toEqual({ steps: [0, 2, 4], values: [0, 0.5, 1] });
    expect(a.files).toEqual([{ path: CHART, bytes: 823, records: 5 }]);
    expect([a.problemCount, b.problemCount]).toEqual([0, 0]);
  });

  test("golden: pandas exports of run.history() read to the values logged", () => {
    for (const p of ["wandb/history.csv", "wandb/history.jsonl", "wandb/history.json"]) {
      const [log, ...rest] = parseWandbExport(bytesOf(p), p);
      expect(rest).toEqual([]);
      expect(log?.run).toBe("");
      expect(log?.series.map((s) => s.name)).toEqual([
        "eval/reward",
        "train/global_step",
        "train/loss",
      ]);
      expect(series(log as MetricLog, "train/global_step").values).toEqual([0, 2, 4, 6, 8, 10]);
      expect(series(log as MetricLog, "eval/reward")).toEqual({
        steps: [0, 2, 4],
        values: [0, 0.2, 0.4],
      });
      const loss = series(log as MetricLog, "train/loss");
      // to_csv keeps inf; to_json writes it as null (no point) and rounds to 10 digits.
      expect(loss.steps).toEqual(p.endsWith(".csv") ? [0, 1, 2, 3, 4, 5] : [0, 1, 2, 4, 5]);
      expect(loss.values[2]).toBe(p.endsWith(".csv") ? 1 / 3 : 0.3333333333);
      if (p.endsWith(".csv")) expect(loss.values[3]).toBe(Number.POSITIVE_INFINITY);
      expect(log?.problems).toEqual([]);
    }
  });

  test("golden: malformed rows are problems, a cut last row ends the data, text cells are counted", () => {
    const text = 'Step,r - a\n1,0.5\n2,x"y\n3,1,2\n4,abc\n5,nan\nx,1\n6,"0.7';
    const [log] = parseWandbExport(enc.encode(text), "c.csv");
    expect(log?.problems.map((p) => p.at)).toEqual(["line 3", "line 4", "line 7", "line 5"]);
    expect(log?.files[0]?.note).toBe(
      "a truncated last row (a live writer): the data ends before line 8",
    );
    expect(series(log as MetricLog, "a")).toEqual({ steps: [1, 5], values: [0.5, Number.NaN] });
  });

  test("rejects: a runs-table export and a CSV without a step column", () => {
    expect(() => parseWandbExport(enc.encode("Name,State,loss\nrun-1,finished,0.5\n"))).toThrow(
      /runs-table export/,
    );
    expect(() => parseWandbExport(enc.encode("a,b\n1,2\n"))).toThrow(IoError);
  });
});

describe("limits", () => {
  test("rejects: maxSeries, maxPoints and maxBytes name the limit and the file", () => {
    const b = bytesOf(JSONL);
    const err = (f: () => unknown): IoError => {
      try {
        f();
      } catch (e) {
        return e as IoError;
      }
      throw new Error("no error");
    };
    const s = err(() => parseJsonlLog(b, "v.jsonl", { maxSeries: 3 }));
    expect([s instanceof IoError, s.arg, s.path]).toEqual([true, "options.maxSeries", "v.jsonl"]);
    expect(err(() => parseTrainerState(bytesOf(CKPT10), "t", { maxPoints: 9 })).arg).toBe(
      "options.maxPoints",
    );
    expect(err(() => parseWandbExport(bytesOf(CHART), "w", { maxBytes: 100 })).arg).toBe(
      "options.maxBytes",
    );
    expect(() => parseJsonlLog(b, "v", { maxPoints: 0 })).toThrow(ConfigError);
  });

  test("rejects: a file over maxBytes is refused before it is read", () => {
    expect(() => readMetricLogs(join(DIR, JSONL), { maxBytes: 1000 })).toThrow(
      /at most 1000 bytes/,
    );
  });
});

describe("detection", () => {
  test("golden: every fixture is detected as its format, by content alone too", () => {
    const want: [string, string][] = [
      [JSONL, "jsonl"],
      [CKPT10, "trainer_state"],
      ["wandb/history.csv", "wandb"],
      ["wandb/history.jsonl", "wandb"],
      ["wandb/history.json", "wandb"],
      [CHART, "wandb"],
    ];
    for (const [p, f] of want) {
      expect(detectMetricLogFormat(p, bytesOf(p)).format).toBe(f);
      expect(detectMetricLogFormat("x", bytesOf(p).subarray(0, 4096)).format).toBe(f);
    }
    expect(
      detectMetricLogFormat("run/events.out.tfevents.1700000000.host.1.0", new Uint8Array(0))
        .format,
    ).toBe("tensorboard");
    // The head of every TensorBoard event file: a first record of 24 bytes (u64 LE), then its
    // masked CRC-32C 0x224b7fa3 (LE), as the file_version event starts.
    const framed = new Uint8Array([24, 0, 0, 0, 0, 0, 0, 0, 0xa3, 0x7f, 0x4b, 0x22, 9]);
    expect(detectMetricLogFormat("blob", framed)).toMatchObject({ format: "tensorboard" });
    expect(
      detectMetricLogFormat("x.bin", new Uint8Array([24, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])).format,
    ).toBeNull();
    expect(detectMetricLogFormat("notes.txt", enc.encode("hello\n")).format).toBeNull();
    expect(detectMetricLogFormat("empty.jsonl", new Uint8Array(0))).toMatchObject({
      format: "jsonl",
      byExtension: true,
    });
  });
});

describe("files", () => {
  test("golden: a folder of every fixture lists each run once, the newest checkpoint picked", () => {
    const root = mkdtempSync(join(tmpdir(), "polgrad-logs-"));
    // The recorded whole runs (runs/, read by test/cli/diagnoseLogs.test.ts) are left out.
    cpSync(DIR, root, { recursive: true, filter: (src) => !src.startsWith(join(DIR, "runs")) });
    mkdirSync(join(root, "tb"));
    writeFileSync(join(root, "tb", "events.out.tfevents.1.host"), "");
    writeFileSync(join(root, "config.json"), '{"lr": 1}');
    const found = findMetricLogFiles(root);
    expect(found.map((c) => [c.run, c.format])).toEqual([
      ["jsonl/gsm8k_grpo", "jsonl"],
      ["tb", "tensorboard"],
      ["tensorboard", "tensorboard"],
      ["tensorboard/restarted", "tensorboard"],
      ["tensorboard/restarted", "tensorboard"],
      ["tensorboard/tbx", "tensorboard"],
      ["tensorboard/tensorboard", "tensorboard"],
      ["tensorboard/torch", "tensorboard"],
      ["trainer_state/out", "trainer_state"],
      // Three exports of one stem keep their extensions: each run is named once.
      ["wandb/history.csv", "wandb"],
      ["wandb/history.json", "wandb"],
      ["wandb/history.jsonl", "wandb"],
      ["wandb/wandb_export_2026-01-02T03_04_05.678+00_00", "wandb"],
    ]);
    expect(found.find((c) => c.format === "trainer_state")?.note).toBe(
      "the newest checkpoint, checkpoint-10/trainer_state.json (1 older not read: checkpoint-2)",
    );
    const logs = readMetricLogs(root);
    // 6 TensorBoard runs (the empty tb/ one included: an empty event file is an empty log), 7 text runs.
    expect(logs.length).toBe(13);
    expect(logs.find((l) => l.format === "trainer_state")?.files[0]?.note).toContain(
      "checkpoint-10",
    );
    expect(logs.at(-1)?.run).toBe("wandb/wandb_export_2026-01-02T03_04_05.678+00_00/bright-moon-4");
    expect(readMetricLogs(root, { format: "jsonl" }).map((l) => l.run)).toEqual([
      "jsonl/gsm8k_grpo",
    ]);
    expect(readMetricLogs(root, { format: "tensorboard" }).map((l) => l.run)).toEqual([
      "tb",
      "tensorboard",
      "tensorboard/restarted",
      "tensorboard/tbx",
      "tensorboard/tensorboard",
      "tensorboard/torch",
    ]);
    expect(() => readMetricLogs(root, { format: "csv" as "wandb" })).toThrow(ConfigError);
    expect(() => readMetricLogs(join(root, "config.json"))).toThrow(IoError);
    expect(readMetricLogs(join(root, CKPT10)).map((l) => l.run)).toEqual([""]);
  });
});

/** Mutated bytes: bit flips, truncation, a byte inserted or a chunk duplicated. */
function mutated(seed: Uint8Array): fc.Arbitrary<Uint8Array> {
  return fc
    .array(fc.tuple(fc.nat({ max: 3 }), fc.nat(), fc.nat({ max: 255 })), {
      minLength: 1,
      maxLength: 4,
    })
    .map((ops) => {
      let b = Uint8Array.from(seed);
      for (const [op, at, v] of ops) {
        const i = b.length === 0 ? 0 : at % b.length;
        if (op === 0 && b.length > 0) b[i] = (b[i] as number) ^ (1 << (v % 8));
        else if (op === 1) b = b.subarray(0, i);
        else if (op === 2) b = Uint8Array.from([...b.subarray(0, i), v, ...b.subarray(i)]);
        else b = Uint8Array.from([...b, ...b.subarray(i, i + (v % 64))]);
      }
      return b;
    });
}

function resultOrTyped(f: () => unknown): boolean {
  try {
    f();
    return true;
  } catch (e) {
    return e instanceof PolgradError;
  }
}

describe("property", () => {
  const cases: [string, string, (b: Uint8Array) => unknown][] = [
    ["jsonl", JSONL, (b) => parseJsonlLog(b, "f")],
    ["trainer_state", CKPT10, (b) => parseTrainerState(b, "f")],
    ["wandb csv", CHART, (b) => parseWandbExport(b, "f")],
    ["wandb json", "wandb/history.json", (b) => parseWandbExport(b, "f")],
    ["wandb jsonl", "wandb/history.jsonl", (b) => parseWandbExport(b, "f")],
    ["detect", "wandb/history.csv", (b) => detectMetricLogFormat("f", b)],
  ];
  for (const [name, p, parse] of cases)
    test(`property: ${name} on arbitrary mutations gives a result or a typed error`, () => {
      fc.assert(
        fc.property(mutated(bytesOf(p)), (b) => resultOrTyped(() => parse(b))),
        { numRuns: 300, seed: 34 },
      );
    });
});
