/**
 * A reader of NumPy's `.npz` archives (docs/io.md#npz), as `np.savez` (stored) and
 * `np.savez_compressed` (deflated) write them: a zip archive whose every member `name.npy` is a
 * `.npy` file holding the tensor `name`. The archive goes through the project's one zip reader
 * (./_internal/zip.ts) and each member through the `.npy` decoder (./npy.ts), so every rule of
 * both applies. Pure (no `node:` import).
 */

import { fmtValue } from "../core/message.js";
import { requireBytes, requireString } from "../core/validate.js";
import { fmtBytes, ioError } from "./_internal/ioError.js";
import { elementBudget } from "./_internal/limits.js";
import { openZip, type ZipArchive, type ZipEntry } from "./_internal/zip.js";
import { decodeNpy, npyHeaderEnd } from "./npy.js";
import type { NamedTensor, TensorReader, TensorSet } from "./tensorTypes.js";

/** Default size limit of an `.npz` file: 4 GiB. */
export const DEFAULT_MAX_NPZ_BYTES: number = 4 * 2 ** 30;

/** Largest sum of the members' uncompressed sizes: 4 GiB, checked before any member is read. */
export const MAX_NPZ_UNCOMPRESSED_BYTES: number = 4 * 2 ** 30;

/**
 * Parse the bytes of a NumPy `.npz` archive held in memory.
 *
 * Format: a zip archive (docs/io.md#zip: stored or deflated members, CRC-32 checked) of members
 * `name.npy`, each a `.npy` file (docs/io.md#npy) holding the tensor `name`; names may not contain
 * `/` or `\`; the sum of the members' uncompressed sizes is at most 4 GiB and at most
 * max(64 MiB, 64 × the file's size), each deflated member's at most 1032 × its compressed size
 * (docs/io.md#bounds-on-hostile-files), all checked before any member is inflated. Tensors come
 * in central-directory order (the order `np.savez` wrote them).
 *
 * @param bytes - The whole file.
 * @param path - The name to report in errors (default `"<bytes>"`).
 * @returns Every tensor by name, in archive order; `metadata` is empty.
 * @throws {IoError} E_IO when the archive breaks a rule of docs/io.md#zip (arg `zip` or
 *   `zip entry <member>`), declares more than it can hold, a member is not `name.npy` with a plain
 *   name, or a member breaks a rule of docs/io.md#npy (arg `<name>.header`, `<name>.descr`,
 *   `<name>.data`, …).
 * @derivation docs/io.md#npz
 * @enforcedBy test/io/npz.test.ts > parseNpz > golden: savez and savez_compressed archives decode bitwise to the values numpy printed
 * @enforcedBy test/io/npz.test.ts > parseNpz > rejects: a member that is not name.npy or whose name has a slash
 * @since 0.1.0
 */
export function parseNpz(bytes: Uint8Array, path = "<bytes>"): TensorSet {
  requireBytes("parseNpz", "bytes", bytes);
  requireString("parseNpz", "path", path);
  return parseNpzAs("parseNpz", bytes, path);
}

/** {@link parseNpz} reporting errors as `fn`. @internal */
export function parseNpzAs(
  fn: string,
  bytes: Uint8Array,
  path: string,
  maxElements?: number,
  lazy = false,
): TensorSet {
  const zip = openZip(fn, bytes, path);
  let total = 0;
  const names: string[] = [];
  for (const e of zip.entries) {
    const arg = `zip entry ${e.name}`;
    if (!e.name.endsWith(".npy") || e.name.length === 4) {
      throw ioError(fn, path, arg, "a member named <tensor>.npy", fmtValue(e.name));
    }
    if (e.name.includes("/") || e.name.includes("\\")) {
      throw ioError(
        fn,
        path,
        arg,
        "a member name without '/' or '\\' (no folders)",
        fmtValue(e.name),
      );
    }
    total += e.size;
    names.push(e.name.slice(0, -4));
  }
  if (total > MAX_NPZ_UNCOMPRESSED_BYTES) {
    throw ioError(
      fn,
      path,
      "zip",
      `members of at most ${fmtBytes(MAX_NPZ_UNCOMPRESSED_BYTES)} uncompressed in all`,
      fmtBytes(total),
    );
  }
  zip.checkExpansion();
  const budget = elementBudget(maxElements);
  const tensors = new Map<string, NamedTensor>();
  zip.entries.forEach((e, k) => {
    const name = names[k] as string;
    // Lazy, a deflated member is inflated only as far as its header until its values are read.
    const tensor =
      lazy && e.method === 8
        ? decodeNpy(fn, path, npyHead(zip, e), `${name}.`, budget, true, {
            size: e.size,
            read: () => zip.read(e.name),
          })
        : decodeNpy(fn, path, zip.read(e.name), `${name}.`, budget, lazy);
    tensors.set(name, tensor);
  });
  return { path, format: "npz", tensors, metadata: {} };
}

/**
 * The head of a member: its magic, version, header length and header (NumPy's headers are a few
 * hundred bytes; a longer one takes a second, longer read).
 */
function npyHead(zip: ZipArchive, e: ZipEntry): Uint8Array {
  const first = zip.readHead(e.name, 4096);
  // A header past NumPy's bound (+Infinity) is refused by decodeNpy from its length field.
  const want = npyHeaderEnd(first);
  return Number.isFinite(want) && want > first.length ? zip.readHead(e.name, want) : first;
}

/** `PK\x03\x04` and a first local file name ending in `.npy` (a torch archive starts with `…/data.pkl`). */
function sniffNpz(head: Uint8Array): boolean {
  if (head.length < 30 || head[0] !== 0x50 || head[1] !== 0x4b || head[2] !== 3 || head[3] !== 4) {
    return false;
  }
  const n = (head[26] as number) | ((head[27] as number) << 8);
  if (n < 5 || head.length < 30 + n) return false;
  const tail = head.subarray(30 + n - 4, 30 + n);
  return tail[0] === 0x2e && tail[1] === 0x6e && tail[2] === 0x70 && tail[3] === 0x79; // ".npy"
}

/**
 * The registry entry of `.npz` archives (docs/io.md#npz): format `npz`, extension `.npz`,
 * sniffed by `PK\x03\x04` and a first member name ending in `.npy`, 4 GiB default size limit.
 *
 * Format: see {@link parseNpz}.
 *
 * @derivation docs/io.md#npz
 * @enforcedBy test/io/npz.test.ts > NPZ_READER > golden: the entry sniffs a zip whose first member is .npy, not a torch archive
 * @since 0.1.0
 */
export const NPZ_READER: TensorReader = Object.freeze({
  format: "npz",
  extensions: Object.freeze([".npz"]),
  defaultMaxBytes: DEFAULT_MAX_NPZ_BYTES,
  sniff: sniffNpz,
  parse: (fn: string, bytes: Uint8Array, path: string, maxElements?: number, lazy?: boolean) =>
    parseNpzAs(fn, bytes, path, maxElements, lazy),
});
