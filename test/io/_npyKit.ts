/**
 * Helpers of the npy / npz tests: the manifest that scripts/record/npyFixtures.py wrote next to
 * the recorded files in test/fixtures/io/npy, and a bitwise comparison of a decoded tensor with
 * the values NumPy printed.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import type { NamedTensor } from "../../src/io/tensorTypes.js";

const dir = new URL("../fixtures/io/npy/", import.meta.url);

/** The manifest of scripts/record/npyFixtures.py (see that script for each field). */
export interface NpyManifest {
  readonly provenance: {
    readonly numpy_version: string;
    readonly script: string;
    readonly script_sha256: string;
  };
  readonly files: readonly {
    readonly file: string;
    readonly kind: "npy" | "npz";
    readonly sha256: string;
    readonly tensors: Readonly<
      Record<
        string,
        {
          readonly descr: string;
          readonly shape: readonly number[];
          readonly fortran_order: boolean;
          readonly values: readonly (number | boolean | string)[];
          readonly version?: readonly number[];
        }
      >
    >;
  }[];
}

/** The dtype docs/io.md#npy maps each descr kind and size to. */
const DTYPE_OF: Readonly<Record<string, string>> = {
  f2: "F16",
  f4: "F32",
  f8: "F64",
  i1: "I8",
  i2: "I16",
  i4: "I32",
  i8: "I64",
  u1: "U8",
  u2: "U16",
  u4: "U32",
  u8: "U64",
  b1: "BOOL",
};

/** The recorded value as a number: true/false → 1/0, "NaN"/"Infinity"/"-Infinity" → non-finite. */
function recorded(v: number | boolean | string): number {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return v;
  return { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, "-Infinity": -Infinity }[
    v
  ] as number;
}

/** Assert a decoded tensor equals a manifest record bitwise (Object.is: −0 ≠ 0, NaN = NaN). */
export function expectRecorded(
  t: NamedTensor | undefined,
  rec: NpyManifest["files"][number]["tensors"][string],
): void {
  expect(t).toBeDefined();
  const tensor = t as NamedTensor;
  expect(tensor.dtype).toBe(DTYPE_OF[rec.descr.slice(1)]);
  expect(tensor.shape).toEqual(rec.shape);
  expect(tensor.data).toBeInstanceOf(
    tensor.dtype === "BOOL" || tensor.dtype === "U8" ? Uint8Array : Float64Array,
  );
  const got = [...tensor.data];
  const want = rec.values.map(recorded);
  expect(got.length).toBe(want.length);
  const differ = got.flatMap((g, i) => (Object.is(g, want[i]) ? [] : [{ i, g, w: want[i] }]));
  expect(differ).toEqual([]);
}

/** The recorded manifest. */
export const manifest: NpyManifest = JSON.parse(
  readFileSync(new URL("manifest.json", dir), "utf8"),
) as NpyManifest;

/** The bytes of a recorded file. */
export function bytesOf(file: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(file, dir)));
}
