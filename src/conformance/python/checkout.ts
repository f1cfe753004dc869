/**
 * Reading Python files from a local checkout (a work tree): the directory check, and each file's
 * SHA-256 (of its bytes, as stored) and UTF-8 text. Shared by the drift and contract checks. A
 * tracked file is checked before it is opened: it must be a regular file (a FIFO would block the
 * read forever) of at most {@link MAX_PYTHON_SOURCE_BYTES} bytes, so that no oversized source
 * reaches the WASM parser (a 52 MB file aborted it at 2.3 GB of memory).
 */
import { type Stats, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fmtValue, mustBe } from "../../core/message.js";
import { requirePath } from "../../core/validate.js";
import { IoError } from "../../errors.js";
import { fileKind, fmtBytes, readFileBytes } from "../../io/_internal/files.js";
import { fsPath } from "../../platform/fsPath.js";
import { sha256Bytes } from "./normalize.js";

/**
 * Largest Python source the drift and contract checks read: 8 MiB. The tracked framework files
 * are all under 1 MB; the cap keeps tree-sitter's memory (about 40× the source) bounded.
 */
export const MAX_PYTHON_SOURCE_BYTES: number = 8 * 2 ** 20;

/** One file read from a checkout. */
export interface CheckoutFile {
  /** Absolute path. */
  readonly full: string;
  /** SHA-256 (hex) of the bytes as stored. */
  readonly sha256: string;
  /** The text, decoded as UTF-8 (a leading BOM dropped). */
  readonly text: string;
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(fsPath(path));
  } catch {
    return null;
  }
}

/**
 * Resolve a checkout directory.
 *
 * @throws {IoError} E_IO (arg `checkoutPath`) when it does not exist or is not a directory.
 */
export function checkoutDir(fn: string, checkoutPath: string): string {
  requirePath(fn, "checkoutPath", checkoutPath);
  const dir = resolve(checkoutPath);
  const st = statOrNull(dir);
  if (st === null || !st.isDirectory()) {
    const why = st === null ? "no such directory" : fileKind(st);
    const rule = "an existing directory (a work tree)";
    throw new IoError(
      fn,
      "checkoutPath",
      mustBe(fn, "checkoutPath", rule, `${fmtValue(checkoutPath)} (${why})`),
      dir,
    );
  }
  return dir;
}

/**
 * Read `path` (relative to the checkout root), or return null when no file is there.
 *
 * @throws {IoError} E_IO when the path is not a regular file (a directory, FIFO, device), is
 *   over {@link MAX_PYTHON_SOURCE_BYTES}, or the bytes are not UTF-8.
 */
export function readCheckoutFile(fn: string, dir: string, path: string): CheckoutFile | null {
  const full = join(dir, path);
  const st = statOrNull(full);
  if (st === null) return null;
  if (!st.isFile()) {
    throw new IoError(fn, "checkoutPath", mustBe(fn, path, "a regular file", fileKind(st)), full);
  }
  if (st.size > MAX_PYTHON_SOURCE_BYTES) {
    throw new IoError(
      fn,
      "checkoutPath",
      mustBe(
        fn,
        path,
        `a Python source of at most ${fmtBytes(MAX_PYTHON_SOURCE_BYTES)}`,
        fmtBytes(st.size),
      ),
      full,
    );
  }
  const bytes = readFileBytes(fn, full, MAX_PYTHON_SOURCE_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new IoError(
      fn,
      "checkoutPath",
      mustBe(fn, path, "UTF-8 text", "undecodable bytes"),
      full,
    );
  }
  return { full, sha256: sha256Bytes(bytes), text };
}
