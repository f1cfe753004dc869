/**
 * `checkAdapterContract`: an adapter contract on one checkout (a work tree). The authors' method
 * rules decide on the tree alone; each file pin is a provenance record — checked against the
 * adapter's vendored copy when one is given (a changed copy then fails), otherwise reported for the
 * tree's own path (identical / changed / missing) without deciding. See
 * docs/conformance/adapters.md#checking-a-checkout.
 */
import { basename, dirname, resolve } from "node:path";
import { checkoutDir, readCheckoutFile } from "../conformance/python/checkout.js";
import { fmtValue, mustBe } from "../core/message.js";
import { requireObject } from "../core/validate.js";
import { ConfigError, fail, IoError } from "../errors.js";
import {
  type CallerCopy,
  evaluateTree,
  type FactsCache,
  factsOf,
  type TreeFile,
} from "./adapter.js";
import type { AdapterCheckReport, AdapterContract, FilePin, FilePinCheck } from "./adapterTypes.js";

/** Options of {@link checkAdapterContract}. */
export interface AdapterCheckOptions {
  /** The adapter's vendored copy of the contract's (single) pinned file. */
  readonly vendored?: string;
}

/**
 * Read one file given by path (the vendored copy): it must exist and be a regular UTF-8 file.
 * @internal
 */
export function readVendored(fn: string, path: string): TreeFile & { readonly full: string } {
  const full = resolve(path);
  const f = readCheckoutFile(fn, dirname(full), basename(full));
  if (f === null)
    throw new IoError(
      fn,
      "vendored",
      mustBe(fn, "vendored", "an existing file", fmtValue(path)),
      full,
    );
  return f;
}

/**
 * The single file pin `--vendored` stands for.
 * @internal
 */
export function vendoredPin(fn: string, contract: AdapterContract): FilePin {
  const pin = contract.files[0];
  if (contract.files.length !== 1 || pin === undefined)
    throw fail(
      ConfigError,
      fn,
      "vendored",
      "given for a contract with exactly one file pin",
      `${contract.files.length} pins in ${contract.name}`,
    );
  return pin;
}

/**
 * Check an adapter contract on a checkout.
 *
 * Formula: ok ⇔ every method rule holds on the tree ∧ (no vendored copy given ∨ sha256(copy) =
 * pin). The tree's own pinned paths and polgrad's stricter checks are reported, never deciding.
 *
 * @param contract - The contract (a built-in from getAdapterContract or a parsed file).
 * @param checkoutPath - A work tree of the framework.
 * @param options - `vendored`: the adapter's copy of the pinned file.
 * @returns The report: `failures` lists every deciding failure, the authors' messages first.
 * @throws {IoError} E_IO when the checkout is not a directory, the vendored copy is missing, or a
 *   method's file is not valid Python.
 * @throws {ConfigError} E_CONFIG when a vendored copy is given for a contract without exactly one pin.
 * @derivation docs/conformance/adapters.md#checking-a-checkout
 * @enforcedBy test/contracts/adapter.test.ts > checkAdapterContract > golden: the v1.7.0 fixture holds, the v0.29.1 fixture breaks with the authors' message
 * @enforcedBy test/contracts/adapter.test.ts > checkAdapterContract > golden: a vendored copy decides the pin, the tree's own file does not
 * @since 0.1.0
 */
export async function checkAdapterContract(
  contract: AdapterContract,
  checkoutPath: string,
  options: AdapterCheckOptions = {},
): Promise<AdapterCheckReport> {
  requireObject(
    "checkAdapterContract",
    "contract",
    contract,
    "an AdapterContract (getAdapterContract, parseAdapterContract)",
    ["name", "version", "framework", "methods", "files", "stricter"],
  );
  requireObject("checkAdapterContract", "options", options, "an options object");
  const fn = "checkAdapterContract";
  const dir = checkoutDir(fn, checkoutPath);
  const vPin = options.vendored === undefined ? null : vendoredPin(fn, contract);
  const vFile = options.vendored === undefined ? null : readVendored(fn, options.vendored);
  const read = (path: string): TreeFile | null => readCheckoutFile(fn, dir, path);
  const cache: FactsCache = new Map();
  const files: FilePinCheck[] = contract.files.map((p) => {
    const own = read(p.path);
    const vendored =
      vFile !== null && vPin === p
        ? {
            path: vFile.full,
            status: vFile.sha256 === p.sha256 ? ("identical" as const) : ("changed" as const),
            sha256: vFile.sha256,
          }
        : null;
    return {
      path: p.path,
      pinnedSha256: p.sha256,
      ref: p.ref,
      tree: own === null ? "missing" : own.sha256 === p.sha256 ? "identical" : "changed",
      treeSha256: own?.sha256 ?? null,
      vendored,
    };
  });
  // The copy the stricter checks read: the vendored file when given, else the tree's own file
  // when its bytes are the pinned ones.
  const copies = new Map<string, CallerCopy | null>();
  for (const p of contract.files) {
    const useVendored = vFile !== null && vPin === p;
    const own = useVendored ? null : read(p.path);
    const file = useVendored ? vFile : own !== null && own.sha256 === p.sha256 ? own : null;
    const source = useVendored ? `--vendored ${vFile?.full}` : "tree";
    copies.set(
      p.path,
      file === null ? null : { source, facts: await factsOf(file, p.path, cache) },
    );
  }
  const ev = await evaluateTree(contract, read, (p) => copies.get(p) ?? null, cache);
  const failures = ev.methods.flatMap((m) => m.failures);
  for (const f of files)
    if (f.vendored?.status === "changed")
      failures.push(
        `vendored ${f.path} changed: sha256 ${f.vendored.sha256} where the pin is ${f.pinnedSha256}`,
      );
  return {
    contract: contract.name,
    version: contract.version,
    framework: contract.framework,
    checkout: dir,
    ok: failures.length === 0,
    failures,
    methods: ev.methods,
    files,
    stricter: ev.stricter,
    stricterOk: ev.stricter.every((s) => s.status === "ok"),
  };
}
