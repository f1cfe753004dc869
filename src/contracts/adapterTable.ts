/**
 * `adapterTable`: an adapter contract on every tag of a git directory at once (bare repositories
 * and mirrors included; no checkout), one row per ref — each pinned file identical / changed /
 * missing, each method's verdict under the authors' rule, polgrad's stricter checks in their own
 * columns — and the first and last passing ref. See docs/conformance/adapters.md#every-tag-at-once.
 */
import { mustBe } from "../core/message.js";
import { requireObject, requirePath, requireString } from "../core/validate.js";
import { IoError } from "../errors.js";
import {
  type CallerCopy,
  evaluateTree,
  type FactsCache,
  factsOf,
  type TreeFile,
} from "./adapter.js";
import { readVendored, vendoredPin } from "./adapterCheck.js";
import type { AdapterContract, AdapterTable, AdapterTableRow } from "./adapterTypes.js";
import { type GitDir, gitBlob, gitCommit, gitTags, openGitDir } from "./git.js";

/** Most refs one table reads. */
export const MAX_TABLE_REFS = 1000;

/** Options of {@link adapterTable}. */
export interface AdapterTableOptions {
  /** The refs to check, in this order; default every tag sorted by version, then HEAD. */
  readonly refs?: readonly string[];
  /** The adapter's vendored copy of the pinned file (else the pin's ref in the same git dir). */
  readonly vendored?: string;
}

const VERSION = /^v?(\d+(?:\.\d+)*)(.*)$/;

/**
 * Order tags by version: numeric components compared as numbers (missing ones are 0), a
 * pre-release suffix (`rc1`) before the release, and names that are not versions last, by name.
 *
 * @param a - A tag name.
 * @param b - Another.
 * @returns Negative, zero or positive, as for Array.prototype.sort.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > compareVersionTags > golden: numeric order, rc before release, non-versions last
 * @since 0.1.0
 */
export function compareVersionTags(a: string, b: string): number {
  requireString("compareVersionTags", "a", a);
  requireString("compareVersionTags", "b", b);
  const ma = VERSION.exec(a);
  const mb = VERSION.exec(b);
  if (ma === null || mb === null)
    return ma !== null ? -1 : mb !== null ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const na = (ma[1] as string).split(".").map(Number);
  const nb = (mb[1] as string).split(".").map(Number);
  for (let i = 0; i < Math.max(na.length, nb.length); i++) {
    const d = (na[i] ?? 0) - (nb[i] ?? 0);
    if (d !== 0) return d;
  }
  const sa = ma[2] as string;
  const sb = mb[2] as string;
  if (sa === sb) return a < b ? -1 : a > b ? 1 : 0;
  if (sa === "") return 1;
  if (sb === "") return -1;
  return sa < sb ? -1 : 1;
}

function blobFile(fn: string, g: GitDir, commit: string, path: string): TreeFile | null {
  const b = gitBlob(fn, g, commit, path);
  if (b === null) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(b.bytes);
  } catch {
    throw new IoError(
      fn,
      "git",
      mustBe(fn, path, "UTF-8 text", `undecodable bytes at ${commit}`),
      g.dir,
    );
  }
  return { sha256: b.sha256, text };
}

function passing(rows: readonly AdapterTableRow[], ok: (r: AdapterTableRow) => boolean) {
  const pass = rows.filter(ok);
  return { firstPassing: pass[0]?.ref ?? null, lastPassing: pass.at(-1)?.ref ?? null };
}

/**
 * Check an adapter contract on every tag (or the given refs) of a git directory.
 *
 * Formula: per ref r, authorsOk(r) ⇔ every method rule holds on r's tree; file status(r) =
 * identical | changed | missing of sha256(r:path) against the pin; the stricter checks read the
 * pinned file from `vendored`, else from the pin's ref in the same directory when its bytes match
 * the pin, else from r itself when they do. first/last passing = the first/last row in table
 * order with authorsOk (and, for `all`, every stricter check ok).
 *
 * @param contract - The contract.
 * @param gitDir - A git directory (`.git`, bare or mirror).
 * @param options - `refs` to check instead of every tag, `vendored` copy of the pinned file.
 * @returns The table.
 * @throws {IoError} E_IO when the directory is not a git directory, a given ref resolves to no
 *   commit, git fails, or a method's file is not valid Python.
 * @throws {ConfigError} E_CONFIG for a vendored copy with a contract without exactly one pin.
 * @derivation docs/conformance/adapters.md#every-tag-at-once
 * @enforcedBy test/contracts/table.test.ts > adapterTable > golden: the synthetic repository gives the measured table
 * @enforcedBy test/contracts/table.test.ts > adapterTable > golden: --refs keeps its order and a vendored copy feeds the stricter columns
 * @enforcedBy test/contracts/table.test.ts > adapterTable > rejects: a directory that is not a git directory, and a ref that does not resolve
 * @since 0.1.0
 */
export async function adapterTable(
  contract: AdapterContract,
  gitDir: string,
  options: AdapterTableOptions = {},
): Promise<AdapterTable> {
  requireObject(
    "adapterTable",
    "contract",
    contract,
    "an AdapterContract (getAdapterContract, parseAdapterContract)",
    ["name", "version", "framework", "methods", "files", "stricter"],
  );
  requirePath("adapterTable", "gitDir", gitDir);
  requireObject("adapterTable", "options", options, "an options object");
  const fn = "adapterTable";
  const g = openGitDir(fn, gitDir);
  let refs: string[];
  if (options.refs !== undefined) refs = [...options.refs];
  else {
    refs = gitTags(fn, g).sort(compareVersionTags);
    if (gitCommit(fn, g, "HEAD") !== null) refs.push("HEAD");
  }
  if (refs.length > MAX_TABLE_REFS)
    throw new IoError(
      fn,
      "refs",
      mustBe(fn, "refs", `at most ${MAX_TABLE_REFS} refs`, `${refs.length}`),
      g.dir,
    );
  const cache: FactsCache = new Map();
  const vPin = options.vendored === undefined ? null : vendoredPin(fn, contract);
  const fixed = new Map<string, CallerCopy>();
  for (const p of contract.files) {
    if (vPin === p && options.vendored !== undefined) {
      const v = readVendored(fn, options.vendored);
      fixed.set(p.path, { source: `--vendored ${v.full}`, facts: await factsOf(v, p.path, cache) });
      continue;
    }
    const at = p.ref === null ? null : gitCommit(fn, g, p.ref);
    const f = at === null ? null : blobFile(fn, g, at, p.path);
    if (f !== null && f.sha256 === p.sha256)
      fixed.set(p.path, { source: `ref ${p.ref}`, facts: await factsOf(f, p.path, cache) });
  }
  const rows: AdapterTableRow[] = [];
  for (const ref of refs) {
    const commit = gitCommit(fn, g, ref);
    if (commit === null && options.refs !== undefined)
      throw new IoError(
        fn,
        "refs",
        mustBe(fn, "refs", "refs that name commits", `'${ref}' names none`),
        g.dir,
      );
    const seen = new Map<string, TreeFile | null>();
    const read = (path: string): TreeFile | null => {
      if (!seen.has(path)) seen.set(path, commit === null ? null : blobFile(fn, g, commit, path));
      return seen.get(path) ?? null;
    };
    const files = contract.files.map((p) => {
      const f = read(p.path);
      return {
        path: p.path,
        file: f,
        status:
          f === null
            ? ("missing" as const)
            : f.sha256 === p.sha256
              ? ("identical" as const)
              : ("changed" as const),
      };
    });
    const own = new Map<string, CallerCopy>();
    for (const f of files)
      if (f.file !== null && f.status === "identical")
        own.set(f.path, { source: `ref ${ref}`, facts: await factsOf(f.file, f.path, cache) });
    const ev = await evaluateTree(contract, read, (p) => fixed.get(p) ?? own.get(p) ?? null, cache);
    rows.push({
      ref,
      commit,
      files: files.map((f) => ({ path: f.path, status: f.status })),
      methods: ev.methods,
      authorsOk: ev.methods.every((m) => m.status === "ok"),
      stricter: ev.stricter,
      stricterOk: ev.stricter.every((s) => s.status === "ok"),
    });
  }
  return {
    contract: contract.name,
    version: contract.version,
    git: g.dir,
    rows,
    authors: passing(rows, (r) => r.authorsOk),
    all: passing(rows, (r) => r.authorsOk && r.stricterOk),
  };
}
