/**
 * Signature contracts: the private methods a conformance adapter calls (TRL's
 * `GRPOTrainer._compute_loss`, `_get_per_token_logps_and_entropies`) pinned per release tag, with
 * the SHA-256 of files polgrad reads whole (TRL's PAPO trainer). A check names exactly which
 * parameters were added, removed or renamed and how the return annotation changed. They live
 * beside the reduction and liveness contracts; the pins are data in ./pins.ts and the types in
 * ./signatureTypes.ts. See docs/conformance/drift.md#signature-contracts.
 */
import { join } from "node:path";
import { checkoutDir, readCheckoutFile } from "../conformance/python/checkout.js";
import { extractDefinitions, type PythonDefinition } from "../conformance/python/definitions.js";
import { diffParameters, formatParameter } from "../conformance/python/signatureDiff.js";
import { fmtValue, mustBe } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { requireArrayOf, requireObject } from "../core/validate.js";
import { IoError, UnknownNameError } from "../errors.js";
import { CONTRACT_PINS } from "./pins.js";
import type {
  FileHashCheck,
  MethodCheck,
  PinnedMethod,
  SignatureContract,
  SignatureContractReport,
  SignatureContractSpec,
} from "./signatureTypes.js";

async function definitionsOf(
  fn: string,
  dir: string,
  path: string,
  cache: Map<string, ReadonlyMap<string, PythonDefinition> | null>,
): Promise<ReadonlyMap<string, PythonDefinition> | null> {
  const hit = cache.get(path);
  if (hit !== undefined) return hit;
  const file = readCheckoutFile(fn, dir, path);
  const defs = file === null ? null : await extractDefinitions(file.text, { path: file.full });
  cache.set(path, defs);
  return defs;
}

/** Resolve a contract by name, or throw with the closest names. */
function resolvePin(fn: string, pin: string | SignatureContract): SignatureContract {
  if (typeof pin !== "string") return pin;
  // Own keys only: `--pin __proto__` or `constructor` must not resolve to Object.prototype.
  const found = Object.hasOwn(CONTRACT_PINS, pin) ? CONTRACT_PINS[pin] : undefined;
  if (found !== undefined) return found;
  const known = Object.keys(CONTRACT_PINS);
  const near = closestNames(pin, known).slice(0, 3);
  const hint = didYouMean(near);
  throw new UnknownNameError(
    fn,
    "pin",
    `${mustBe(fn, "pin", `one of ${known.join(", ")}`, fmtValue(pin))}${hint}`,
    near,
  );
}

/**
 * Record a contract from a checkout at the contract's tag: each method's parameter list and return
 * annotation, and the SHA-256 of each listed file. This is what `tools/pin-definitions.mjs` writes
 * into `CONTRACT_PINS`.
 *
 * @param checkoutPath - A work tree of the framework at `spec.commit`.
 * @param spec - The methods and files to record.
 * @returns The contract pin.
 * @throws {IoError} E_IO when the directory, a file or a method is missing, or a file does not parse.
 * @derivation docs/conformance/drift.md#signature-contracts
 * @enforcedBy test/contracts/signature.test.ts > recordContract > identity: a checkout meets the contract recorded from it
 * @since 0.1.0
 */
export async function recordContract(
  checkoutPath: string,
  spec: SignatureContractSpec,
): Promise<SignatureContract> {
  requireObject("recordContract", "spec", spec, "a SignatureContractSpec", ["methods"]);
  requireArrayOf(
    "recordContract",
    "spec.methods",
    spec.methods,
    "an array of {name, path}",
    (m) => typeof m === "object" && m !== null && "name" in m && "path" in m,
  );
  const fn = "recordContract";
  const dir = checkoutDir(fn, checkoutPath);
  const cache = new Map<string, ReadonlyMap<string, PythonDefinition> | null>();
  const methods: PinnedMethod[] = [];
  for (const m of spec.methods) {
    const d = (await definitionsOf(fn, dir, m.path, cache))?.get(m.name);
    if (d === undefined || d.parameters === null) {
      throw new IoError(
        fn,
        "spec",
        `${fn}: method '${m.name}' not found in ${m.path} at ${spec.name}`,
        join(dir, m.path),
      );
    }
    methods.push({
      name: m.name,
      path: m.path,
      parameters: d.parameters,
      returnAnnotation: d.returnAnnotation,
    });
  }
  const files = spec.files.map((path) => {
    const file = readCheckoutFile(fn, dir, path);
    if (file === null)
      throw new IoError(fn, "spec", mustBe(fn, path, "present", "no such file"), join(dir, path));
    return { path, sha256: file.sha256 };
  });
  return { name: spec.name, repo: spec.repo, tag: spec.tag, commit: spec.commit, methods, files };
}

/**
 * Check a checkout against a signature contract: each pinned file's SHA-256, and each pinned
 * method's parameters (names, kinds, defaults, annotations) and return annotation. Parameters are
 * matched by name; an unmatched pinned and an unmatched current parameter at the same position
 * (between the same surviving neighbours, at the same offset) with the same kind and default are a
 * rename; the rest are removed and added.
 *
 * @param checkoutPath - A work tree of the framework (any commit).
 * @param pin - A contract name (`trl@v0.29.1`, … see {@link CONTRACT_PINS}) or a contract object.
 * @returns The report; `ok` is false when any file differs or is missing, or any method changed or is missing.
 * @throws {IoError} E_IO when the checkout is not a directory or a pinned method's file does not parse.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `pin` names no contract.
 * @derivation docs/conformance/drift.md#signature-contracts
 * @enforcedBy test/contracts/signature.test.ts > checkContract > golden: the v1.7.0 fixture against trl@v0.29.1 adds compute_aux_loss and returns three values
 * @enforcedBy test/contracts/signature.test.ts > checkContract > golden: a renamed parameter at the same position is a rename
 * @since 0.1.0
 */
export async function checkContract(
  checkoutPath: string,
  pin: string | SignatureContract = "trl@v0.29.1",
): Promise<SignatureContractReport> {
  if (typeof pin !== "string")
    requireObject("checkContract", "pin", pin, "a pin name or a SignatureContract", [
      "files",
      "methods",
    ]);
  const fn = "checkContract";
  const contract = resolvePin(fn, pin);
  const dir = checkoutDir(fn, checkoutPath);
  const files = contract.files.map((f): FileHashCheck => {
    const sha = readCheckoutFile(fn, dir, f.path)?.sha256 ?? null;
    const status = sha === null ? "missing" : sha === f.sha256 ? "equal" : "different";
    return { path: f.path, status, pinnedSha256: f.sha256, checkoutSha256: sha };
  });
  const cache = new Map<string, ReadonlyMap<string, PythonDefinition> | null>();
  const methods: MethodCheck[] = [];
  for (const m of contract.methods) {
    const d = (await definitionsOf(fn, dir, m.path, cache))?.get(m.name);
    const actual = d?.parameters ?? null;
    const diff = diffParameters(m.parameters, actual ?? []);
    const ret = d?.returnAnnotation ?? null;
    const retChanged = actual !== null && ret !== m.returnAnnotation;
    const broken =
      retChanged ||
      diff.reordered ||
      diff.added.length + diff.removed.length + diff.renamed.length + diff.changed.length > 0;
    methods.push({
      name: m.name,
      path: m.path,
      status: actual === null ? "missing" : broken ? "broken" : "ok",
      ...(actual === null
        ? { added: [], removed: [], renamed: [], changed: [], reordered: false }
        : diff),
      returnAnnotation: {
        pinned: m.returnAnnotation,
        checkout: actual === null ? null : ret,
        changed: retChanged,
      },
    });
  }
  const ok = files.every((f) => f.status === "equal") && methods.every((m) => m.status === "ok");
  return {
    pin: contract.name,
    repo: contract.repo,
    tag: contract.tag,
    commit: contract.commit,
    checkout: dir,
    ok,
    files,
    methods,
  };
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * Render a contract report as text: a header (contract, repository, commit, checkout), one line
 * per pinned file (`equal`, `DIFFERENT`, `MISSING`), per method `ok`/`BROKEN`/`MISSING` with one
 * line per added (`+`), removed (`-`), renamed (`~`) or changed (`*`) parameter and the return
 * annotation change, then a verdict line `contract ok: …` or `CONTRACT BROKEN: …`.
 *
 * @param report - A {@link checkContract} result.
 * @returns The text, ending with a newline.
 * @derivation docs/conformance/drift.md#reports-and-exit-codes
 * @enforcedBy test/contracts/signature.test.ts > renderContractText > golden: one line per added parameter and the return change
 * @since 0.1.0
 */
export function renderContractText(report: SignatureContractReport): string {
  requireObject(
    "renderContractText",
    "report",
    report,
    "a SignatureContractReport (checkContract)",
    ["pin", "repo", "commit", "files", "methods"],
  );
  const out: string[] = [
    `contract ${report.pin} (${report.repo} ${report.tag} ${report.commit.slice(0, 12)})`,
    `  checkout ${report.checkout}`,
  ];
  for (const f of report.files) {
    const label = f.status === "equal" ? "equal" : f.status.toUpperCase();
    const detail =
      f.status === "equal"
        ? ""
        : `  (pinned sha256 ${f.pinnedSha256.slice(0, 12)}…${f.checkoutSha256 === null ? "" : `, now ${f.checkoutSha256.slice(0, 12)}…`})`;
    out.push(`  file ${f.path}  ${label}${detail}`);
  }
  for (const m of report.methods) {
    out.push(`  ${m.name}  ${m.status === "ok" ? "ok" : m.status.toUpperCase()}`);
    for (const p of m.added) out.push(`    + ${formatParameter(p)}  (added at index ${p.index})`);
    for (const p of m.removed)
      out.push(`    - ${formatParameter(p)}  (removed from index ${p.index})`);
    for (const r of m.renamed)
      out.push(`    ~ ${r.from} -> ${r.to}  (renamed at index ${r.index})`);
    for (const c of m.changed)
      out.push(`    * ${formatParameter(c.pinned)} -> ${formatParameter(c.checkout)}`);
    if (m.reordered) out.push("    * parameters reordered");
    const r = m.returnAnnotation;
    if (r.changed) out.push(`    return: ${r.pinned ?? "(none)"} -> ${r.checkout ?? "(none)"}`);
  }
  const badFiles = report.files.filter((f) => f.status !== "equal").length;
  const badMethods = report.methods.filter((m) => m.status !== "ok").length;
  const methods = count(report.methods.length, "method");
  const files = count(report.files.length, "file");
  out.push(
    report.ok
      ? `contract ok: ${methods} and ${files} match ${report.pin}`
      : `CONTRACT BROKEN: ${badMethods} of ${methods} and ${badFiles} of ${files} differ from ${report.pin}`,
  );
  return `${out.join("\n")}\n`;
}
