/**
 * Enforces issue 11's acceptance (docs/io.md#names-as-trainers-spell-them): a batch dumped with a
 * framework's names, in every format (.pt written by real torch.save, .npz, .safetensors, JSON, and
 * a step folder of one .npy per tensor), gives bitwise the `loss --json` document of the same
 * batch under polgrad's names, with the map given (`--names verl`) and detected. The numbers are
 * test/fixtures/io/frameworks/canonical.json (dyadic rationals, exact in float32); each
 * framework's spelling is names.json; the .pt files are recorded by
 * scripts/record/frameworkPt.py (provenance.json).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import type { TensorDtype } from "../../src/io/tensorTypes.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { runMain, withoutSource } from "../cli/_run.js";
import { useTmpDir } from "./_kit.js";
import { type NpyDescr, npyBytes, npzBytes } from "./_writers.js";

const DIR = fileURLToPath(new URL("../fixtures/io/frameworks/", import.meta.url));
const canonical = JSON.parse(readFileSync(join(DIR, "canonical.json"), "utf8")) as Record<
  string,
  number[] | number[][]
>;
interface Spelling {
  names: Record<string, string>;
  advantages: "row" | "token";
  mask_dtype: "int64" | "bool";
  extra: string[];
}
const spellings = JSON.parse(readFileSync(join(DIR, "names.json"), "utf8")) as Record<
  string,
  Spelling
>;
const FRAMEWORKS = ["verl", "trl", "openrlhf"] as const;
const tmp = useTmpDir();

const mask = canonical.response_mask as number[][];
const B = mask.length;
const T = (mask[0] as number[]).length;
const P = 2;

/** One tensor of a framework's dump: dtype family, shape and row-major values. */
interface Tensor {
  kind: "float" | "mask" | "int";
  shape: number[];
  data: number[];
}

/** The framework's dump of the canonical batch (the same tensors frameworkPt.py writes). */
function dump(fw: string): Record<string, Tensor> {
  const s = spellings[fw] as Spelling;
  const out: Record<string, Tensor> = {};
  for (const [ours, theirs] of Object.entries(s.names)) {
    if (ours === "response_mask") out[theirs] = { kind: "mask", shape: [B, T], data: mask.flat() };
    else if (ours === "advantages") {
      const a = canonical.advantages as number[];
      out[theirs] =
        s.advantages === "row"
          ? { kind: "float", shape: [B], data: a }
          : {
              kind: "float",
              shape: [B, T],
              data: mask.flatMap((r, b) => r.map((m) => m * (a[b] as number))),
            };
    } else
      out[theirs] = { kind: "float", shape: [B, T], data: (canonical[ours] as number[][]).flat() };
  }
  for (const extra of s.extra) {
    const w = extra === "completion_ids" ? T : P + T;
    out[extra] = { kind: "int", shape: [B, w], data: Array.from({ length: B * w }, (_, i) => i) };
  }
  return out;
}

const stDtype = (fw: string, t: Tensor): TensorDtype =>
  t.kind === "float"
    ? "F32"
    : t.kind === "int"
      ? "I64"
      : spellings[fw]?.mask_dtype === "bool"
        ? "BOOL"
        : "I64";
const npDescr = (fw: string, t: Tensor): NpyDescr =>
  t.kind === "float"
    ? "<f4"
    : t.kind === "int"
      ? "<i8"
      : spellings[fw]?.mask_dtype === "bool"
        ? "|b1"
        : "<i8";

/** Write the framework's dump in `format`; returns the path to pass as --batch. */
function write(fw: string, format: string): string {
  const tensors = dump(fw);
  const base = tmp(`${fw}-${format}`);
  switch (format) {
    case "pt":
      return join(DIR, `${fw}.pt`);
    case "json": {
      const doc: Record<string, unknown> = {};
      for (const [n, t] of Object.entries(tensors)) {
        doc[n] =
          t.shape.length === 1
            ? t.data
            : Array.from({ length: B }, (_, b) =>
                t.data.slice(b * t.shape[1]!, (b + 1) * t.shape[1]!),
              );
      }
      writeFileSync(`${base}.json`, JSON.stringify(doc));
      return `${base}.json`;
    }
    case "safetensors": {
      const st: Record<string, { dtype: TensorDtype; shape: number[]; data: number[] }> = {};
      for (const [n, t] of Object.entries(tensors))
        st[n] = { dtype: stDtype(fw, t), shape: t.shape, data: t.data };
      writeFileSync(`${base}.safetensors`, encodeSafetensors(st));
      return `${base}.safetensors`;
    }
    case "npz": {
      const arrays: Record<string, { descr: NpyDescr; shape: number[]; data: number[] }> = {};
      for (const [n, t] of Object.entries(tensors))
        arrays[n] = { descr: npDescr(fw, t), shape: t.shape, data: t.data };
      writeFileSync(`${base}.npz`, npzBytes(arrays, true));
      return `${base}.npz`;
    }
    case "npy-folder": {
      mkdirSync(base);
      for (const [n, t] of Object.entries(tensors))
        writeFileSync(join(base, `${n}.npy`), npyBytes(npDescr(fw, t), t.shape, t.data));
      return base;
    }
  }
  throw new Error(format);
}

const FORMATS = ["pt", "npz", "safetensors", "json", "npy-folder"] as const;

async function lossDoc(batch: string, extra: readonly string[] = []) {
  const r = await runMain(["loss", "--algorithm", "dapo", "--batch", batch, ...extra, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  // The result without its source (the path and format, which differ by construction).
  return { doc: JSON.parse(withoutSource(r.stdout)) as { result: unknown }, stderr: r.stderr };
}

describe("framework names × formats", () => {
  test("identity: every map in every format gives bitwise the loss --json of the canonical batch", async () => {
    const reference = await lossDoc(join(DIR, "canonical.json"));
    expect(reference.stderr).toBe("");
    const expected = JSON.stringify(reference.doc.result);
    for (const fw of FRAMEWORKS) {
      for (const format of FORMATS) {
        const path = write(fw, format);
        const detected = await lossDoc(path);
        expect([fw, format, JSON.stringify(detected.doc.result) === expected]).toEqual([
          fw,
          format,
          true,
        ]);
        expect(detected.stderr).toContain(`read ${fw} names (detected)`);
        expect(detected.stderr).toContain("the batch does not use");
        const given = await lossDoc(path, ["--names", fw]);
        expect(JSON.stringify(given.doc.result)).toBe(expected);
        expect(given.stderr).toContain(`read ${fw} names (given)`);
        // --strict refuses the framework's extra tensors with an input error.
        const strict = await runMain(["loss", "--algorithm", "dapo", "--batch", path, "--strict"]);
        expect(strict.code).toBe(2);
        expect(strict.stdout).toBe("");
      }
    }
  });
});
