/**
 * Helpers of test/io/metricLogs/tensorboard.test.ts: the recorded fixtures and their provenance
 * (test/fixtures/logs/tensorboard/, tools/record-fixtures/tensorboardLogs.py), a log's series as
 * plain pairs, hand-built protobuf events and their TFRecord framing, and the soundness check of
 * a log.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { expect } from "vitest";
import { maskedCrc32c } from "../../../src/io/metricLogs/crc32c.js";
import type { MetricLog } from "../../../src/io/metricLogs/types.js";

export const root: string = fileURLToPath(new URL("../../../", import.meta.url));
export const FIX: string = join(root, "test/fixtures/logs/tensorboard");

export interface Provenance {
  files: Record<string, { bytes: number; sha256: string }>;
  runs: Record<string, Record<string, { how: string; steps: number[]; read: (number | string)[] }>>;
}
export const prov: Provenance = JSON.parse(
  readFileSync(join(FIX, "provenance.json"), "utf8"),
) as Provenance;
export const fixture = (rel: string): Uint8Array => new Uint8Array(readFileSync(join(FIX, rel)));
export const num = (x: number | string): number => (typeof x === "number" ? x : Number(x));
export const runOf = (rel: string): string => rel.split("/").slice(0, -1).join("/");
export const FILES: string[] = Object.keys(prov.files).sort();

/** A log's series as plain `{ name: [[step, value], …] }` (NaN and ±∞ as numbers). */
export function seriesOf(log: MetricLog): Record<string, [number, number][]> {
  return Object.fromEntries(
    log.series.map((s) => [
      s.name,
      Array.from(s.steps, (step, i) => [step, s.values[i] as number]),
    ]),
  );
}

/** The provenance's expected series of a run (the values a reader must read back). */
export function expectedOf(run: string): Record<string, [number, number][]> {
  return Object.fromEntries(
    Object.entries(prov.runs[run] ?? {}).map(([tag, s]) => [
      tag,
      s.steps.map((step, i) => [step, num(s.read[i] as number | string)] as [number, number]),
    ]),
  );
}

/** Byte offsets of each record of a TFRecord file (walked by the u64 lengths). */
export function recordStarts(b: Uint8Array): number[] {
  const out: number[] = [];
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  for (let p = 0; p < b.length; p += 16 + Number(v.getBigUint64(p, true))) out.push(p);
  return out;
}

// ---- hand-built events (the forms no recorded writer uses) ----
export type Part = (w: BinaryWriter) => void;
export const LD: WireType = WireType.LengthDelimited;
export const tag =
  (t: string): Part =>
  (w) => {
    w.tag(1, LD).string(t);
  };
export const simple =
  (x: number): Part =>
  (w) => {
    w.tag(2, WireType.Bit32).float(x);
  };
export const plugin =
  (name: string): Part =>
  (w) => {
    w.tag(9, LD).fork().tag(1, LD).fork().tag(1, LD).string(name).join().join();
  };
export const tensor =
  (...parts: Part[]): Part =>
  (w) => {
    w.tag(8, LD).fork();
    for (const p of parts) p(w);
    w.join();
  };
export const dtype =
  (d: number): Part =>
  (w) => {
    w.tag(1, WireType.Varint).int32(d);
  };
export const dims =
  (...sizes: number[]): Part =>
  (w) => {
    w.tag(2, LD).fork();
    for (const s of sizes) w.tag(2, LD).fork().tag(1, WireType.Varint).int64(s).join();
    w.join();
  };
export const raw =
  (f: (w: BinaryWriter) => BinaryWriter): Part =>
  (w) => {
    f(w);
  };
export function event(step: number | bigint, ...values: Part[][]): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.Bit64).double(1.7e9).tag(2, WireType.Varint).int64(step);
  if (values.length > 0) {
    w.tag(5, LD).fork();
    for (const parts of values) {
      w.tag(1, LD).fork();
      for (const p of parts) p(w);
      w.join();
    }
    w.join();
  }
  return w.finish();
}
/** TFRecord framing of each record's data. */
export function frame(...records: Uint8Array[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const d of records) {
    const h = new Uint8Array(12);
    const v = new DataView(h.buffer);
    v.setBigUint64(0, BigInt(d.length), true);
    v.setUint32(8, maskedCrc32c(h, 0, 8), true);
    const f = new Uint8Array(4);
    new DataView(f.buffer).setUint32(0, maskedCrc32c(d), true);
    parts.push(h, d, f);
  }
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
export const f32 = (x: number): number => Math.fround(x);

/** A result is a sound log: sorted series, strictly increasing integer steps, bounded problems. */
export function checkLog(log: MetricLog): void {
  expect(log.format).toBe("tensorboard");
  const names = log.series.map((s) => s.name);
  expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  for (const s of log.series) {
    expect(s.steps.length).toBe(s.values.length);
    for (let i = 0; i < s.steps.length; i++) {
      expect(Number.isInteger(s.steps[i])).toBe(true);
      if (i > 0) expect(s.steps[i] as number).toBeGreaterThan(s.steps[i - 1] as number);
    }
  }
  expect(log.problems.length).toBeLessThanOrEqual(Math.min(100, log.problemCount));
}
