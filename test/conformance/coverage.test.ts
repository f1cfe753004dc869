/**
 * Enforces docs/coverage.md: the coverage table (src/conformance/coverage.ts) has a row for every
 * semantic of the framework survey's feature table (test/fixtures/coverage/feature-table.json,
 * extracted by tools/coverage/featureTable.mjs with the survey's SHA-256), no row is silent
 * (expressed with a config or a named test, out of scope with a reason, or pending with the
 * issue item), every expressed policy-loss config runs on the built-in batch, every named test
 * exists, and docs/coverage.md is the table's rendering.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { COVERAGE, COVERAGE_SECTIONS } from "../../src/conformance/coverage.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { coverageCounts, renderCoverageMarkdown } from "../../src/report/coverageText.js";
import { BUILTIN_BATCH } from "../../src/which/builtinBatch.js";
import { checkLink } from "../meta/claimLinks.js";
import { staticTestNames } from "../meta/testNames.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const table = JSON.parse(
  readFileSync(new URL("../fixtures/coverage/feature-table.json", import.meta.url), "utf8"),
) as { rows: { section: string; semantic: string }[] };

let names: ReturnType<typeof staticTestNames>;
beforeAll(() => {
  names = staticTestNames(root);
});

/** The built-in batch with the streams the IS, KL, rejection and entropy rows read (offsets of ±0.05). */
const batch = {
  ...BUILTIN_BATCH,
  refLogprobs: (BUILTIN_BATCH.logprobs as number[][]).map((r) =>
    r.map((v, t) => v + 0.05 * ((t % 3) - 1)),
  ),
  rolloutLogprobs: (BUILTIN_BATCH.oldLogprobs as number[][]).map((r) =>
    r.map((v, t) => v + 0.05 * ((t % 2) * 2 - 1)),
  ),
  // Per-token entropies for the top-entropy and entropy-bonus rows: 0.5, 1.0, 1.5, … along a row.
  entropies: (BUILTIN_BATCH.logprobs as number[][]).map((r) => r.map((_, t) => 0.5 * (t + 1))),
};

describe("coverage", () => {
  test("identity: every semantic of the feature table has exactly one row, in its section", () => {
    expect(table.rows.length).toBeGreaterThan(60);
    const missing = table.rows.filter(
      (f) =>
        COVERAGE.filter(
          (r) => r.semantic === f.semantic && COVERAGE_SECTIONS[r.section] === f.section,
        ).length !== 1,
    );
    expect(missing).toEqual([]);
    expect(new Set(COVERAGE.map((r) => r.id)).size).toBe(COVERAGE.length);
  });

  test("identity: no row is silent", () => {
    const silent = COVERAGE.filter((r) => {
      if (r.status === "expressed")
        return !r.how || (r.config === undefined && r.enforcedBy === undefined);
      if (r.status === "out_of_scope") return !r.reason || r.reason.length < 40;
      return !r.reason || !/issue \d+ item/.test(r.reason);
    });
    expect(silent.map((r) => r.id)).toEqual([]);
  });

  test("identity: every expressed policy-loss config runs on the built-in batch with a finite loss", () => {
    const rows = COVERAGE.filter((r) => r.config !== undefined);
    expect(rows.length).toBeGreaterThan(20);
    for (const r of rows) {
      const out = policyLoss(r.config as NonNullable<typeof r.config>, batch);
      expect(Number.isFinite(out.loss), r.id).toBe(true);
    }
  });

  test("identity: every named test exists", () => {
    const broken = COVERAGE.filter((r) => r.enforcedBy !== undefined)
      .map((r) => ({ id: r.id, why: checkLink(r.enforcedBy as string, names) }))
      .filter((x) => x.why !== null);
    expect(broken).toEqual([]);
  });

  test("identity: docs/coverage.md is the table's rendering", () => {
    const doc = readFileSync(new URL("../../docs/coverage.md", import.meta.url), "utf8");
    expect(doc).toBe(renderCoverageMarkdown());
    const c = coverageCounts();
    expect(c.expressed + c.out_of_scope + c.pending).toBe(COVERAGE.length);
  });
});
