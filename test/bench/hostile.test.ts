/**
 * Enforces docs/io.md#bounds-on-hostile-files (its measurements): the files bench/hostile.mjs
 * times are the attacks it names. Each generator of bench/hostileCases.mjs is run here at a small
 * scale and its file refused by the bound it targets (or, inside the bounds, read with the shape
 * and values it claims); the wall time and peak RSS are the bench's, never asserted here.
 */
import { describe, expect, test } from "vitest";
import {
  HOSTILE_CASES,
  jsonKeys,
  npzBomb,
  ptExpand,
  stEntries,
} from "../../bench/hostileCases.mjs";
import { readTensors } from "../../src/index.js";
import { expectIoError, useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();

describe("bench/hostileCases.mjs", () => {
  test("identity: each generator writes the attack it names, refused by the bound it targets", async () => {
    const npz = tmp("bomb.npz");
    const size = await npzBomb(npz, [["logprobs", "<f8", 8, 80 * 2 ** 20]]);
    expect(size).toBeLessThan(100_000);
    expect(expectIoError(() => readTensors(npz), "zip").message).toContain("uncompressed in all");
    const pt = tmp("expand.pt");
    ptExpand(pt, 2 ** 29, 0);
    expect(expectIoError(() => readTensors(pt), "logprobs").message).toContain(
      "shape [536870912], stride [0]",
    );
    const st = tmp("many.safetensors");
    stEntries(st, 65538);
    expect(expectIoError(() => readTensors(st), "header").message).toContain("65536 tensors");
    const json = tmp("many.json");
    jsonKeys(json, 65538);
    expect(expectIoError(() => readTensors(json), "json").message).toContain("65536 tensors");
  });

  test("golden: inside the bounds the generators' files read as the tensors they describe", async () => {
    const npz = tmp("small.npz");
    await npzBomb(npz, [["x", "<f2", 2, 2 ** 20]], 1000);
    const a = readTensors(npz);
    expect(a.tensors.get("x")?.shape).toEqual([2 ** 19]);
    expect(a.tensors.get("x")?.data.every((v) => v === 0)).toBe(true);
    expect(a.tensors.get("pad")?.data.length).toBe(1000);
    const pt = tmp("small.pt");
    ptExpand(pt, 1000, 64);
    const b = readTensors(pt);
    expect(b.tensors.get("logprobs")?.data).toEqual(new Float64Array(1000).fill(1));
    expect(b.tensors.get("pad")?.data).toEqual(new Float64Array(8));
    const st = tmp("three.safetensors");
    stEntries(st, 3);
    expect([...readTensors(st).tensors.keys()]).toEqual(["t0000000", "t0000001", "t0000002"]);
    const json = tmp("three.json");
    jsonKeys(json, 3);
    expect(readTensors(json).tensors.get("t0000002")?.shape).toEqual([0]);
    expect(HOSTILE_CASES.map((c) => c.id)).toContain("pt-64mb");
  });
});
