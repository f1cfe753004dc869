/**
 * Reading Python files from a local checkout (a work tree): the directory check, and each file's
 * SHA-256 (of its bytes, as stored) and UTF-8 text. Shared by the drift and contract checks.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { mustBe } from "../../core/message.js";
import { IoError } from "../../errors.js";
import { sha256Bytes } from "./normalize.js";

/** One file read from a checkout. */
export interface CheckoutFile {
  /** Absolute path. */
  readonly full: string;
  /** SHA-256 (hex) of the bytes as stored. */
  readonly sha256: string;
  /** The text, decoded as UTF-8 (a leading BOM dropped). */
  readonly text: string;
}

/**
 * Resolve a checkout directory.
 *
 * @throws {IoError} E_IO (arg `checkoutPath`) when it does not exist or is not a directory.
 */
export function checkoutDir(fn: string, checkoutPath: string): string {
  const dir = resolve(checkoutPath);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    const why = existsSync(dir) ? "not a directory" : "no such directory";
    const rule = "an existing directory (a work tree)";
    throw new IoError(
      fn,
      "checkoutPath",
      mustBe(fn, "checkoutPath", rule, `'${checkoutPath}' (${why})`),
      dir,
    );
  }
  return dir;
}

/**
 * Read `path` (relative to the checkout root), or return null when no file is there.
 *
 * @throws {IoError} E_IO when the path is a directory or the bytes are not UTF-8.
 */
export function readCheckoutFile(fn: string, dir: string, path: string): CheckoutFile | null {
  const full = join(dir, path);
  if (!existsSync(full)) return null;
  if (!statSync(full).isFile()) {
    throw new IoError(fn, "checkoutPath", mustBe(fn, path, "a regular file", "a directory"), full);
  }
  const bytes = readFileSync(full);
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
