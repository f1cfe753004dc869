/**
 * The per-release fixtures recorded from the real framework loss code
 * (tools/record-fixtures/{verl,trl,openrlhf}Releases.py → test/fixtures/frameworks/<fw>-releases.json)
 * replayed through the config resolver: each case's config, in the framework's own key names, is
 * resolved against its release and evaluated on its batch. The loss must agree to 1e-12 relative,
 * the gradient to 1e-12 norm-wise, and each micro-batch's rows and backward loss to the recorded
 * split. A case where upstream raised must raise a ConfigError here too. Issue 14, acceptance 1, 2
 * and 6: every recorded release's default config is among the cases.
 */
import { describe, expect, test } from "vitest";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import { RELEASE_FACTS } from "../../../src/conformance/frameworkConfig/releases.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { l2Norm } from "../../../src/core/sum.js";
import { ConfigError, MaskError } from "../../../src/errors.js";
import { matrixRelErr, num, relErr, rows } from "../../_kit/polgradFixtures.js";
import {
  caseEntries,
  caseInputs,
  loadReleaseFixture,
  type ReleaseCase,
} from "./_releaseFixtures.js";

const FRAMEWORKS = ["verl", "trl", "openrlhf"] as const;

function resolveCase(fw: (typeof FRAMEWORKS)[number], c: ReleaseCase) {
  const world = c.world ?? {};
  const extra =
    fw === "trl" && world.gradient_accumulation_steps !== undefined
      ? { gradient_accumulation_steps: world.gradient_accumulation_steps }
      : {};
  const parsed = {
    framework: fw,
    form: "mapping" as const,
    entries: caseEntries(c, extra),
    skipped: [],
    source: c.name,
  };
  return resolveFrameworkConfig(`${fw}@${c.release}`, parsed, {
    ...(world.num_processes === undefined ? {} : { numProcesses: world.num_processes }),
    ...(c.num_items_in_batch === undefined || c.num_items_in_batch === null
      ? {}
      : { numItemsInBatch: c.num_items_in_batch }),
  });
}

/** The difference of one case from its recording, or null when it agrees. */
function mismatch(fw: (typeof FRAMEWORKS)[number], c: ReleaseCase): string | null {
  if (c.upstream_raises !== undefined) {
    try {
      evaluateResolution(resolveCase(fw, c), caseInputs(c));
    } catch (e) {
      if (e instanceof ConfigError || e instanceof MaskError) return null;
      throw e;
    }
    return `upstream raised (${c.upstream_raises}) but polgrad did not`;
  }
  let r: ReturnType<typeof evaluateResolution>;
  try {
    r = evaluateResolution(resolveCase(fw, c), caseInputs(c));
  } catch (e) {
    return `polgrad raised: ${(e as Error).message}`;
  }
  const out: string[] = [];
  // A term upstream computes in float32 (OpenRLHF's KL loss) carries its own bound on the float32
  // roundings upstream may do differently (PlanTerm.evaluate: torch's exp within an ulp, its sum
  // order); the rest is matched to 1e-12: |Δ| ≤ 1e-12·|x| + bound.
  const within = (ours: number, theirs: number, bound: number) =>
    Math.abs(ours - theirs) <= 1e-12 * Math.abs(theirs) + bound;
  const lossBound = r.terms.reduce((a, t) => a + t.lossBound, 0);
  if (!within(r.loss, num(c.loss as number), lossBound))
    out.push(`loss ${r.loss} vs ${c.loss} (rel ${relErr(r.loss, num(c.loss as number))})`);
  const expected = rows(c.grad_logprobs ?? []).flat();
  const dg = l2Norm(Array.from(r.gradLogprobs.data, (v, i) => v - (expected[i] ?? Number.NaN)));
  const gradBound = r.terms.reduce((a, t) => a + t.gradBound, 0);
  if (
    !(expected.length === r.gradLogprobs.data.length && dg <= 1e-12 * l2Norm(expected) + gradBound)
  )
    out.push(`grad rel ${matrixRelErr(r.gradLogprobs, c.grad_logprobs ?? [])}`);
  if (c.micro_batches !== undefined) {
    const ours = r.microBatches.map((m) =>
      Array.from({ length: m.rows[1] - m.rows[0] }, (_, i) => m.rows[0] + i),
    );
    const theirs = c.micro_batches.map((m) => [...m.rows]);
    if (JSON.stringify(ours) !== JSON.stringify(theirs))
      out.push(`micro-batches ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`);
    else
      c.micro_batches.forEach((m, k) => {
        const ours = r.microBatches[k] as { loss: number; float32Bound: number };
        if (!within(ours.loss, num(m.loss), ours.float32Bound))
          out.push(`micro-batch ${k} loss rel ${relErr(ours.loss, num(m.loss))}`);
      });
  }
  return out.length === 0 ? null : out.join("; ");
}

for (const fw of FRAMEWORKS) {
  const fixture = loadReleaseFixture(fw);
  describe.skipIf(fixture === null)(`${fw} per-release fixtures`, () => {
    const cases = fixture?.cases ?? [];
    test(`conformance: every recorded case of ${fw}-releases.json replays through the resolved config to 1e-12`, () => {
      const bad = cases
        .map((c) => [c.name, mismatch(fw, c)] as const)
        .filter(([, m]) => m !== null);
      expect(bad).toEqual([]);
      expect(cases.length).toBeGreaterThan(0);
    });
    test(`coverage: every key the ${fw} every_loss_key and combined cases set away from its default and mark effective changes the resolved loss (none is silently inert)`, () => {
      const every = cases.filter(
        (c) => c.name.includes("/every_loss_key/") || c.name.includes("/combined/"),
      );
      const planOf = (r: ReturnType<typeof resolveCase>) =>
        JSON.stringify({
          ...r.plan,
          global: r.plan.global?.({ N: 10, B: 4, nonEmpty: 4 }) ?? null,
        });
      let checked = 0;
      for (const c of every) {
        const res = resolveCase(fw, c);
        for (const s of res.settings) {
          if (s.source !== "user" || !(s.key in c.config)) continue;
          const { [s.key]: _dropped, ...rest } = c.config;
          let without: ReturnType<typeof resolveCase>;
          try {
            without = resolveCase(fw, { ...c, config: rest });
          } catch (e) {
            if (e instanceof ConfigError) continue; // another key needs it (e.g. a threshold)
            throw e;
          }
          const dflt = without.settings.find((x) => x.key === s.key)?.value;
          if (JSON.stringify(dflt) === JSON.stringify(s.value)) continue; // set to its default
          // effective ⇔ the loss plan changes without it
          expect(
            planOf(without) !== planOf(res),
            `${c.name}: ${s.key} effective = ${s.effective}`,
          ).toBe(s.effective);
          checked++;
        }
      }
      if (every.length > 0) expect(checked).toBeGreaterThanOrEqual(every.length * 5);
    });
    test(`coverage: the default config of every recorded ${fw} release is a replayed case on the built-in batch`, () => {
      const withDefault = new Set(
        cases
          .filter(
            (c) =>
              c.batch === "builtin" &&
              Object.keys(c.config).length === 0 &&
              c.upstream_raises === undefined,
          )
          .map((c) => c.release),
      );
      const missing = RELEASE_FACTS[fw].releases
        .map((r) => r.label)
        .filter((l) => !withDefault.has(l));
      expect(missing).toEqual([]);
    });
  });
}
