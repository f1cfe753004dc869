/**
 * verl's own loss on the launch configs verl ships (tools/record-fixtures/verlCorpus.py →
 * test/fixtures/frameworks/corpus/losses-verl.json): each case's settings, exactly as polgrad's
 * resolution read them from a shipped launch (corpus/loss-cases.json), resolved at the case's
 * release and evaluated on the recorded ragged batch, against verl's own update_policy / ppo_loss
 * at that release. Issue 33, point 1.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { l2Norm } from "../../../src/core/sum.js";
import { matrixRelErr, num, relErr, rows } from "../../_kit/polgradFixtures.js";
import { caseEntries, caseInputs, type ReleaseCase } from "./_releaseFixtures.js";

const PATH = "test/fixtures/frameworks/corpus/losses-verl.json";

interface CorpusLosses {
  readonly provenance: { readonly skipped: readonly { index: number; reason: string }[] };
  readonly cases: readonly (ReleaseCase & { readonly index: number })[];
}

describe.skipIf(!existsSync(PATH))("verl's own loss on verl's shipped launch configs", () => {
  const fx = JSON.parse(readFileSync(PATH, "utf8")) as CorpusLosses;

  test("conformance: every recorded launch config's loss and gradient agree with verl's own code to 1e-12", () => {
    expect(fx.cases.length).toBeGreaterThanOrEqual(40);
    const bad: string[] = [];
    for (const c of fx.cases) {
      const res = resolveFrameworkConfig(`verl@${c.release}`, {
        framework: "verl",
        form: "args",
        entries: caseEntries(c),
        skipped: [],
        source: c.name,
      });
      const r = evaluateResolution(res, caseInputs(c));
      const want = num(c.loss as number);
      // Loss to 1e-12 relative; gradient to 1e-12 norm-wise (as releaseFixtures.test.ts).
      const expected = rows(c.grad_logprobs ?? []).flat();
      const dg = l2Norm(Array.from(r.gradLogprobs.data, (v, i) => v - (expected[i] ?? Number.NaN)));
      const lossOk = Math.abs(r.loss - want) <= 1e-12 * Math.abs(want);
      const gradOk =
        expected.length === r.gradLogprobs.data.length && dg <= 1e-12 * l2Norm(expected);
      if (!(lossOk && gradOk))
        bad.push(
          `${c.name} (${c.release}): loss ${r.loss} vs ${want} (rel ${relErr(r.loss, want)}); grad rel ${matrixRelErr(r.gradLogprobs, c.grad_logprobs ?? [])}`,
        );
    }
    expect(bad).toEqual([]);
  });

  test("identity: a case the recorder could not run names why (none is dropped silently)", () => {
    for (const s of fx.provenance.skipped) expect(s.reason.length).toBeGreaterThan(0);
  });
});
