/**
 * Reading a git directory without a checkout (bare repositories and mirrors included): its tags,
 * a ref's commit, and one file's bytes at a ref. Every call is `git --git-dir DIR …` through
 * execFileSync (no shell) with a time limit and a bounded output buffer; a blob is sized with
 * `ls-tree -l` before it is read, so no file over {@link MAX_PYTHON_SOURCE_BYTES} is loaded.
 */
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { MAX_PYTHON_SOURCE_BYTES } from "../conformance/python/checkout.js";
import { sha256Bytes } from "../conformance/python/normalize.js";
import { fmtValue, mustBe, safeText } from "../core/message.js";
import { fail, IoError } from "../errors.js";
import { fsPath } from "../platform/fsPath.js";

/** Longest one git call may run. */
export const GIT_TIMEOUT_MS: number = 30_000;
/** Most output accepted from a listing call (tags, ls-tree): 16 MiB. */
const MAX_LISTING_BYTES = 16 * 2 ** 20;
/** A ref as this module accepts it: no option-like or whitespace-bearing text. */
const REF = /^(?!-)[A-Za-z0-9._/^~@{}+-]{1,200}$/;

/** A git directory opened for reading. */
export interface GitDir {
  /** The absolute path given (a `.git` directory or a bare repository). */
  readonly dir: string;
}

/** One file read at a ref. */
export interface GitBlob {
  readonly sha256: string;
  readonly bytes: Uint8Array;
}

function git(fn: string, g: GitDir, args: readonly string[], maxBuffer: number): Buffer {
  try {
    return execFileSync("git", ["--git-dir", g.dir, ...args], {
      maxBuffer,
      timeout: GIT_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
    });
  } catch (e) {
    const err = e as { stderr?: Buffer; message?: string };
    const detail = (err.stderr?.toString("utf8") ?? "").trim() || (err.message ?? String(e));
    throw new IoError(
      fn,
      "git",
      mustBe(
        fn,
        "git",
        `a readable git directory (git ${args[0]} failed)`,
        safeText(detail.split("\n")[0] ?? ""),
      ),
      g.dir,
    );
  }
}

/**
 * Open a git directory: it must exist and `git rev-parse --git-dir` must accept it.
 *
 * @param fn - The public function named in errors.
 * @param dir - A `.git` directory, a bare repository or a mirror.
 * @returns The opened directory.
 * @throws {IoError} E_IO when it is not a directory or not a git directory.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > adapterTable > rejects: a directory that is not a git directory, and a ref that does not resolve
 * @since 0.1.0
 */
export function openGitDir(fn: string, dir: string): GitDir {
  const abs = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(fsPath(abs)).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir)
    throw new IoError(
      fn,
      "git",
      mustBe(fn, "git", "an existing git directory", fmtValue(dir)),
      abs,
    );
  // git is given the folder as an argument, which carries UTF-8 only (docs/io.md#file-names-that-are-not-utf-8).
  if (fsPath(abs) !== abs)
    throw new IoError(
      fn,
      "git",
      mustBe(
        fn,
        "git",
        "a git directory whose path is UTF-8 (git is handed it as an argument)",
        fmtValue(dir),
      ),
      abs,
    );
  const g = { dir: abs };
  git(fn, g, ["rev-parse", "--git-dir"], 4096);
  return g;
}

/**
 * Every tag name of the repository (`for-each-ref refs/tags`), unsorted.
 *
 * @param fn - The public function named in errors.
 * @param g - The git directory.
 * @returns The tag names without the `refs/tags/` prefix.
 * @throws {IoError} E_IO when git fails.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > adapterTable > golden: the synthetic repository gives the measured table
 * @since 0.1.0
 */
export function gitTags(fn: string, g: GitDir): string[] {
  const out = git(
    fn,
    g,
    ["for-each-ref", "--format=%(refname:strip=2)", "refs/tags"],
    MAX_LISTING_BYTES,
  );
  return out
    .toString("utf8")
    .split("\n")
    .filter((t) => t !== "");
}

function checkRef(fn: string, ref: string): void {
  if (!REF.test(ref)) throw fail(IoError, fn, "ref", "a git ref name", fmtValue(ref));
}

/**
 * The commit a ref names (tags peeled), or null when it names none.
 *
 * @param fn - The public function named in errors.
 * @param g - The git directory.
 * @param ref - A tag, branch, `HEAD` or commit.
 * @returns The full commit id, or null.
 * @throws {IoError} E_IO when the ref is not a ref name.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > adapterTable > rejects: a directory that is not a git directory, and a ref that does not resolve
 * @since 0.1.0
 */
export function gitCommit(fn: string, g: GitDir, ref: string): string | null {
  checkRef(fn, ref);
  try {
    return git(fn, g, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], 4096)
      .toString("utf8")
      .trim();
  } catch {
    return null;
  }
}

/**
 * One file's bytes at a commit, or null when the tree has no regular file at that path.
 *
 * @param fn - The public function named in errors.
 * @param g - The git directory.
 * @param commit - A commit id (from {@link gitCommit}).
 * @param path - The file's path from the repository root.
 * @returns The bytes and their SHA-256, or null.
 * @throws {IoError} E_IO when the blob is over 8 MiB or git fails.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > adapterTable > golden: the synthetic repository gives the measured table
 * @since 0.1.0
 */
export function gitBlob(fn: string, g: GitDir, commit: string, path: string): GitBlob | null {
  checkRef(fn, commit);
  const line = git(fn, g, ["ls-tree", "-l", commit, "--", path], MAX_LISTING_BYTES)
    .toString("utf8")
    .split("\n")[0];
  // "<mode> <type> <object> <size>\t<path>"; a symlink (120000) or submodule is no regular file.
  const m = /^(100644|100755) blob ([0-9a-f]+) +(\d+)\t/.exec(line ?? "");
  if (m === null) return null;
  const size = Number(m[3]);
  if (size > MAX_PYTHON_SOURCE_BYTES)
    throw new IoError(
      fn,
      "git",
      mustBe(fn, path, `at most ${MAX_PYTHON_SOURCE_BYTES} bytes`, `${size} bytes at ${commit}`),
      g.dir,
    );
  const bytes = new Uint8Array(git(fn, g, ["cat-file", "blob", m[2] as string], size + 1));
  return { sha256: sha256Bytes(bytes), bytes };
}
