/**
 * Issue 14, acceptance 1, through the command line: `polgrad explain --framework <fw>@<release>
 * --json` on the built-in batch (ref_logprobs = old_logprobs), with the release's default config,
 * evaluates to the loss recorded from that release's real loss code
 * (test/fixtures/frameworks/<fw>-releases.json, the `<release>/default/builtin` case), for every
 * recorded release of every framework whose fixture file is present.
 */
import { describe, expect, test } from "vitest";
import { RELEASE_FACTS } from "../../src/conformance/frameworkConfig/releases.js";
import { num } from "../_kit/polgradFixtures.js";
import { loadReleaseFixture } from "../conformance/frameworkConfig/_releaseFixtures.js";
import { runMain } from "./_run.js";

for (const fw of ["verl", "trl", "openrlhf"] as const) {
  const fixture = loadReleaseFixture(fw);
  describe.skipIf(fixture === null)(`explain ${fw}@<release>`, () => {
    test(`conformance: explain --json on every recorded ${fw} release's defaults gives the recorded built-in-batch loss`, async () => {
      const cases = new Map(
        (fixture?.cases ?? [])
          .filter((c) => c.batch === "builtin" && Object.keys(c.config).length === 0)
          .map((c) => [c.release, c]),
      );
      const bad: string[] = [];
      for (const r of RELEASE_FACTS[fw].releases) {
        const c = cases.get(r.label);
        if (c === undefined || c.loss === undefined) {
          bad.push(`${r.label}: no recorded default case`);
          continue;
        }
        const run = await runMain(["explain", "--framework", `${fw}@${r.label}`, "--json"]);
        if (run.code !== 0) {
          bad.push(`${r.label}: exit ${run.code}: ${run.stderr.trim()}`);
          continue;
        }
        const doc = JSON.parse(run.stdout) as {
          result: { evaluation: { loss: number; micro_batches: { float32_bound: number }[] } };
        };
        const ev = doc.result.evaluation;
        const bound = ev.micro_batches.reduce((a, m) => a + m.float32_bound, 0);
        const want = num(c.loss);
        if (!(Math.abs(ev.loss - want) <= 1e-12 * Math.abs(want) + bound))
          bad.push(`${r.label}: ${ev.loss} vs recorded ${want}`);
      }
      expect(bad).toEqual([]);
    });
  });
}
