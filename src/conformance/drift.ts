/**
 * Upstream drift: compare the definitions polgrad pins (their normalised segments' SHA-256) with
 * the same definitions in a local checkout of the framework, and report each as unchanged, changed
 * or missing. See docs/conformance/drift.md.
 */
import { join } from "node:path";
import { mustBe } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { requireArrayOf, requireObject } from "../core/validate.js";
import { IoError } from "../errors.js";
import type {
  DefinitionDrift,
  DefinitionStatus,
  DriftFramework,
  DriftOptions,
  DriftPinnedFile,
  DriftPins,
  DriftReport,
  FileDrift,
  TrackedFramework,
} from "./driftTypes.js";
import { DRIFT_PINS } from "./pins.js";
import { checkoutDir, readCheckoutFile } from "./python/checkout.js";
import { extractDefinitions } from "./python/definitions.js";

export type {
  DefinitionDrift,
  DefinitionStatus,
  DriftFramework,
  DriftOptions,
  DriftPinnedFile,
  DriftPins,
  DriftReport,
  FileDrift,
  FileHashStatus,
  LineSpan,
  PinnedDefinition,
  TrackedFile,
  TrackedFramework,
} from "./driftTypes.js";

/** The frameworks with pinned definitions, in report order. */
export const DRIFT_FRAMEWORKS: readonly DriftFramework[] = ["verl", "openrlhf", "trl"];

/**
 * Record the pins of a framework from a checkout at its pinned commit: the SHA-256 of each tracked
 * file's bytes and, per tracked definition, its line span and normalised-segment SHA-256. This is
 * what `tools/pin-definitions.mjs` writes into `src/conformance/pins.ts`.
 *
 * @param checkoutPath - A work tree of the framework at `tracked.commit`.
 * @param tracked - The files and qualified definition names to pin.
 * @returns The pins, files and definitions in the order given.
 * @throws {IoError} E_IO when the directory, a tracked file or a tracked definition is missing, or a file does not parse.
 * @derivation docs/conformance/drift.md#how-the-pins-are-made
 * @enforcedBy test/conformance/drift.test.ts > recordPins > rejects: a tracked definition absent at the pin
 * @enforcedBy test/conformance/drift.test.ts > driftCheck > identity: the pin checkout against its own pins is unchanged everywhere
 * @since 0.1.0
 */
export async function recordPins(
  checkoutPath: string,
  tracked: TrackedFramework,
): Promise<DriftPins> {
  requireObject("recordPins", "tracked", tracked, "a TrackedFramework", ["files"]);
  requireArrayOf(
    "recordPins",
    "tracked.files",
    tracked.files,
    "an array of {path, …}",
    (f) => typeof f === "object" && f !== null && "path" in f,
  );
  const fn = "recordPins";
  const dir = checkoutDir(fn, checkoutPath);
  const files: DriftPinnedFile[] = [];
  for (const f of tracked.files) {
    const src = readCheckoutFile(fn, dir, f.path);
    if (src === null) {
      throw new IoError(
        fn,
        "checkoutPath",
        mustBe(fn, f.path, "present at the pin", "no such file"),
        join(dir, f.path),
      );
    }
    const defs = await extractDefinitions(src.text, { path: src.full });
    const definitions = f.definitions.map((name) => {
      const d = defs.get(name);
      if (d === undefined) {
        throw new IoError(
          fn,
          "tracked",
          `${fn}: tracked definition '${name}' not found in ${f.path} at the pin`,
          src.full,
        );
      }
      return { name, startLine: d.startLine, endLine: d.endLine, sha256: d.sha256 };
    });
    files.push({ path: f.path, sha256: src.sha256, definitions });
  }
  return { framework: tracked.framework, repo: tracked.repo, commit: tracked.commit, files };
}

/**
 * Compare a local checkout of a framework with polgrad's pins: each tracked definition is
 * `unchanged` (normalised segments hash alike), `changed`, or `missing` (absent, or its file is
 * absent); each tracked file's bytes are `equal`, `different` or `missing`.
 *
 * Normalisation strips trailing whitespace per line and nothing else, so comments, docstrings,
 * blank lines and indentation count as drift.
 *
 * @param checkoutPath - A work tree of the framework (any commit).
 * @param framework - `verl`, `openrlhf` or `trl`; with `options.pins`, only a label.
 * @param options - `pins` to compare against instead of the built-in ones.
 * @returns The report; `driftDetected` is true when any definition is changed or missing.
 * @throws {IoError} E_IO when the checkout is not a directory or a tracked file does not parse.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `framework` is not pinned (and no pins are given).
 * @derivation docs/conformance/drift.md#statuses
 * @enforcedBy test/conformance/drift.test.ts > driftCheck > golden: the head fixture reports exactly agg_loss and compute_reinforce_plus_plus_outcome_advantage as changed
 * @enforcedBy test/conformance/drift.test.ts > driftCheck > identity: trailing whitespace alone is not drift
 * @enforcedBy test/conformance/drift.test.ts > driftCheck > golden: a missing file reports every definition missing
 * @since 0.1.0
 */
export async function driftCheck(
  checkoutPath: string,
  framework: string,
  options: DriftOptions = {},
): Promise<DriftReport> {
  const fn = "driftCheck";
  const pins = options.pins ?? DRIFT_PINS[oneOf(fn, "framework", framework, DRIFT_FRAMEWORKS)];
  const dir = checkoutDir(fn, checkoutPath);
  const files: FileDrift[] = [];
  const counts = { unchanged: 0, changed: 0, missing: 0, total: 0 };
  for (const f of pins.files) {
    const src = readCheckoutFile(fn, dir, f.path);
    const defs = src === null ? null : await extractDefinitions(src.text, { path: src.full });
    const definitions = f.definitions.map((p): DefinitionDrift => {
      const d = defs?.get(p.name);
      const status: DefinitionStatus =
        d === undefined ? "missing" : d.sha256 === p.sha256 ? "unchanged" : "changed";
      counts[status]++;
      counts.total++;
      return {
        name: p.name,
        status,
        pinnedSha256: p.sha256,
        checkoutSha256: d?.sha256 ?? null,
        pinnedLines: { start: p.startLine, end: p.endLine },
        checkoutLines: d === undefined ? null : { start: d.startLine, end: d.endLine },
      };
    });
    files.push({
      path: f.path,
      fileHash: src === null ? "missing" : src.sha256 === f.sha256 ? "equal" : "different",
      pinnedSha256: f.sha256,
      checkoutSha256: src?.sha256 ?? null,
      definitions,
    });
  }
  return {
    framework,
    repo: pins.repo,
    pinnedCommit: pins.commit,
    checkout: dir,
    driftDetected: counts.changed + counts.missing > 0,
    counts,
    files,
  };
}

const LABEL: Readonly<Record<DefinitionStatus, string>> = {
  unchanged: "unchanged",
  changed: "CHANGED",
  missing: "MISSING",
};

/**
 * Render a drift report as text: per file a header (repository, path, pinned commit, file-hash
 * status), one line per definition (`unchanged`, `CHANGED` or `MISSING`, with line spans), and a
 * final verdict line `DRIFT DETECTED: …` or `no drift: …`.
 *
 * @param report - A {@link driftCheck} result.
 * @returns The text, ending with a newline.
 * @derivation docs/conformance/drift.md#reports-and-exit-codes
 * @enforcedBy test/conformance/drift.test.ts > renderDriftText > golden: verdict line and upper-case labels
 * @since 0.1.0
 */
export function renderDriftText(report: DriftReport): string {
  requireObject("renderDriftText", "report", report, "a DriftReport (driftCheck)", [
    "files",
    "repo",
    "pinnedCommit",
  ]);
  const width = Math.max(
    40,
    ...report.files.flatMap((f) => f.definitions.map((d) => d.name.length + 2)),
  );
  const out: string[] = [];
  for (const f of report.files) {
    out.push(`${report.repo} ${f.path}`);
    const file = f.fileHash === "equal" ? "file unchanged" : `file ${f.fileHash.toUpperCase()}`;
    out.push(`  pinned ${report.pinnedCommit.slice(0, 12)}  checkout ${report.checkout}  ${file}`);
    for (const d of f.definitions) {
      const span =
        d.status === "unchanged" || d.checkoutLines === null
          ? ""
          : `  (lines ${d.pinnedLines.start}-${d.pinnedLines.end} at the pin, ${d.checkoutLines.start}-${d.checkoutLines.end} now)`;
      out.push(`    ${d.name.padEnd(width)}${LABEL[d.status]}${span}`);
    }
    out.push("");
  }
  const c = report.counts;
  const tally = `${c.changed} changed, ${c.missing} missing, ${c.unchanged} unchanged across ${c.total} tracked definitions`;
  out.push(report.driftDetected ? `DRIFT DETECTED: ${tally}` : `no drift: ${tally}`);
  return `${out.join("\n")}\n`;
}
