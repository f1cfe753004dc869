/**
 * The frameworks' own loss on the launch configs they ship (tools/record-fixtures/verlCorpus.py,
 * openrlhfCorpus.py, trlCorpus.py → test/fixtures/frameworks/corpus/losses-<framework>.json): each case's
 * settings, exactly as polgrad's resolution read them from a shipped launch
 * (corpus/loss-cases.json), resolved at the case's release and evaluated on the recorded ragged
 * batch, against the framework's own loss code at that release. Loss to 1e-12 relative, gradient
 * to 1e-12 norm-wise, plus the reported float32 bound of a term upstream computes in float32
 * (OpenRLHF's KL loss), as releaseFixtures.test.ts checks. Issue 33, point 1.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import type { ConfigFramework } from "../../../src/conformance/frameworkConfig/parse.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { l2Norm } from "../../../src/core/sum.js";
import { matrixRelErr, num, relErr, rows } from "../../_kit/polgradFixtures.js";
import { caseEntries, caseInputs, type ReleaseCase } from "./_releaseFixtures.js";

interface CorpusLosses {
  readonly provenance: { readonly skipped: readonly { index: number; reason: string }[] };
  readonly cases: readonly (ReleaseCase & { readonly index: number })[];
}

const path = (fw: string) => `test/fixtures/frameworks/corpus/losses-${fw}.json`;
const load = (fw: string) => JSON.parse(readFileSync(path(fw), "utf8")) as CorpusLosses;

/** The difference of one case from its recording, or null. */
function mismatch(fw: ConfigFramework, c: ReleaseCase): string | null {
  const world = c.world ?? {};
  const res = resolveFrameworkConfig(
    `${fw}@${c.release}`,
    { framework: fw, form: "args", entries: caseEntries(c), skipped: [], source: c.name },
    {
      ...(world.num_processes === undefined ? {} : { numProcesses: world.num_processes }),
      ...(c.num_items_in_batch === undefined || c.num_items_in_batch === null
        ? {}
        : { numItemsInBatch: c.num_items_in_batch }),
    },
  );
  const r = evaluateResolution(res, caseInputs(c));
  const want = num(c.loss as number);
  const lossBound = r.terms.reduce((a, t) => a + t.lossBound, 0);
  const gradBound = r.terms.reduce((a, t) => a + t.gradBound, 0);
  const expected = rows(c.grad_logprobs ?? []).flat();
  const dg = l2Norm(Array.from(r.gradLogprobs.data, (v, i) => v - (expected[i] ?? Number.NaN)));
  const lossOk = Math.abs(r.loss - want) <= 1e-12 * Math.abs(want) + lossBound;
  const gradOk =
    expected.length === r.gradLogprobs.data.length && dg <= 1e-12 * l2Norm(expected) + gradBound;
  if (lossOk && gradOk) return null;
  return `${c.name} (${c.release}): loss ${r.loss} vs ${want} (rel ${relErr(r.loss, want)}); grad rel ${matrixRelErr(r.gradLogprobs, c.grad_logprobs ?? [])}`;
}

describe("the frameworks' own loss on their shipped launch configs", () => {
  test("conformance: every recorded launch config's loss and gradient agree with the framework's own code to 1e-12", () => {
    let total = 0;
    const bad: string[] = [];
    for (const fw of ["verl", "openrlhf", "trl"] as const) {
      if (!existsSync(path(fw))) continue;
      const fx = load(fw);
      total += fx.cases.length;
      for (const c of fx.cases) {
        const m = mismatch(fw, c);
        if (m !== null) bad.push(`${fw} ${m}`);
      }
    }
    expect(bad).toEqual([]);
    // verl 73, OpenRLHF 16, TRL 29 at this recording (the recorders' counts).
    expect(total).toBeGreaterThanOrEqual(40);
  });

  test("identity: a case a recorder could not run names why (none is dropped silently)", () => {
    for (const fw of ["verl", "openrlhf", "trl"])
      if (existsSync(path(fw)))
        for (const s of load(fw).provenance.skipped) expect(s.reason.length).toBeGreaterThan(0);
  });
});
