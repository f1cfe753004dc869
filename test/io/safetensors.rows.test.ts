/**
 * Enforces docs/io.md#writing-by-rows: a safetensors file written a block of rows at a time
 * (openSafetensorsRows, the writer of `loss --out`) is byte for byte the file writeSafetensors
 * writes with the same reserved metadata, whatever the order of the blocks; the reservation pads
 * the header so the tensors start at the same byte whatever the metadata's values.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { readTensors } from "../../src/io/readTensors.js";
import { openSafetensorsRows, writeSafetensors } from "../../src/io/writeSafetensors.js";
import { useTmpDir } from "./_kit.js";

const tmp = useTmpDir();

describe("openSafetensorsRows", () => {
  test("identity: blocks written in any order give writeSafetensors's bytes with the same reservation", () => {
    const B = 5;
    const T = 3;
    const g = Float64Array.from({ length: B * T }, (_, i) => Math.sin(i) * 1e-3);
    const f = Uint8Array.from({ length: B * T }, (_, i) => (i % 4 === 1 ? 1 : 0));
    const reserve = { polgrad_command: "loss", loss: "-2.2250738585072014e-308" };
    const meta = { polgrad_command: "loss", loss: "0.5" };
    const whole = `${tmp("whole")}.safetensors`;
    writeSafetensors(
      whole,
      { g: { dtype: "F64", shape: [B, T], data: g }, f: { dtype: "BOOL", shape: [B, T], data: f } },
      meta,
      { reserveMetadata: reserve },
    );
    const rows = `${tmp("rows")}.safetensors`;
    const w = openSafetensorsRows(
      rows,
      { g: { dtype: "F64", shape: [B, T] }, f: { dtype: "BOOL", shape: [B, T] } },
      reserve,
    );
    // Rows 3–4, then 0–2: the order does not matter.
    for (const [b0, b1] of [
      [3, 5],
      [0, 3],
    ] as const) {
      w.writeRows("g", b0, g.subarray(b0 * T, b1 * T));
      w.writeRows("f", b0, f.subarray(b0 * T, b1 * T));
    }
    expect(existsSync(rows), "nothing at the path before finish").toBe(false);
    w.finish(meta);
    expect(readFileSync(rows).equals(readFileSync(whole))).toBe(true);
    const back = readTensors(rows);
    expect(back.metadata).toEqual(meta);
    expect(Array.from(back.tensors.get("g")?.data ?? [])).toEqual(Array.from(g));
  });

  test("golden: the reservation fixes where the tensors start, whatever the loss", () => {
    const t = { x: { dtype: "F64" as const, shape: [1], data: [1] } };
    const reserve = { loss: "-2.2250738585072014e-308" };
    const starts = ["1", "-0.038738198184428106", "NaN"].map((loss) => {
      const p = `${tmp(`r${loss}`)}.safetensors`;
      writeSafetensors(p, t, { loss }, { reserveMetadata: reserve });
      const bytes = readFileSync(p);
      // The data start: 8 + the header length (u64 LE).
      return 8 + Number(bytes.readBigUInt64LE(0));
    });
    expect(new Set(starts).size).toBe(1);
    // 8 + the header's JSON with the 24-character loss, padded to a multiple of 8.
    const json = JSON.stringify({
      __metadata__: reserve,
      x: { dtype: "F64", shape: [1], data_offsets: [0, 8] },
    });
    expect(starts[0]).toBe(8 + json.length + ((8 - ((8 + json.length) % 8)) % 8));
  });

  test("golden: abort leaves the path as it was and no partial file", () => {
    const p = `${tmp("kept")}.safetensors`;
    writeFileSync(p, "previous");
    const w = openSafetensorsRows(p, { g: { dtype: "F64", shape: [1, 1] } }, { loss: "x" });
    w.writeRows("g", 0, Float64Array.of(1));
    w.abort();
    expect(readFileSync(p, "utf8")).toBe("previous");
    expect(readdirSync(dirname(p)).filter((n) => n.includes("polgrad-partial"))).toEqual([]);
  });

  test("rejects: a reservation whose keys are not the metadata's", () => {
    const t = { x: { dtype: "F64" as const, shape: [1], data: [1] } };
    expect(() =>
      writeSafetensors(
        `${tmp("bad")}.safetensors`,
        t,
        { loss: "1" },
        { reserveMetadata: { lost: "1" } },
      ),
    ).toThrow(ConfigError);
  });
});
