/**
 * The framework-model fixtures recorded from the real code at the pinned commits
 * (tools/record-fixtures/frameworks.py) replayed through resolved command lines and configs: the
 * resolver, given the flags that select each recorded variant, reproduces the recording
 * (loss to 1e-12 relative, gradient to 1e-12 norm-wise).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { type FixtureNumber, matrixRelErr, relErr, vecOrRows } from "../../_kit/polgradFixtures.js";

interface Case {
  readonly inputs: {
    readonly logprobs: FixtureNumber[][];
    readonly old_logprobs: FixtureNumber[][];
    readonly advantages: FixtureNumber[] | FixtureNumber[][];
    readonly response_mask: boolean[][];
  };
  readonly outputs: { readonly loss: FixtureNumber; readonly grad_logprobs: FixtureNumber[][] };
}
const dir = fileURLToPath(new URL("../../fixtures/frameworks/", import.meta.url));
const load = (f: string) =>
  JSON.parse(readFileSync(`${dir}${f}`, "utf8")) as {
    variants: Record<string, { cases: Case[] }>;
  };

function replay(ref: string, args: string, cases: readonly Case[]): number {
  const res = resolveFrameworkConfig(ref, args, { form: "args" });
  let n = 0;
  for (const c of cases) {
    const r = evaluateResolution(res, {
      logprobs: vecOrRows(c.inputs.logprobs) as number[][],
      oldLogprobs: vecOrRows(c.inputs.old_logprobs) as number[][],
      advantages: vecOrRows(c.inputs.advantages),
      responseMask: c.inputs.response_mask,
    });
    expect(relErr(r.loss, c.outputs.loss as number)).toBeLessThan(1e-12);
    expect(matrixRelErr(r.gradLogprobs, c.outputs.grad_logprobs)).toBeLessThan(1e-12);
    n++;
  }
  return n;
}

describe("OpenRLHF releases", () => {
  test("conformance: the recorded PolicyLoss fixtures replay through the resolved command lines", () => {
    // 3c3be623 is tag v0.11.0's commit; the defaults select ppo with token-level loss.
    const f = load("openrlhf@3c3be623.json");
    const V = f.variants as Record<string, { cases: Case[] }>;
    let n = replay("openrlhf@v0.11.0", "", V["ppo:token"]?.cases ?? []);
    n += replay("openrlhf@v0.11.0", "--actor.dual_clip 3", V["ppo:token:dual-clip-3"]?.cases ?? []);
    n += replay("openrlhf@v0.11.0", "--actor.policy_loss_type gspo", V.gspo?.cases ?? []);
    const g = load("openrlhf@bc71bb19.json");
    n += replay("openrlhf@bc71bb19", "", g.variants["ppo:token"]?.cases ?? []);
    expect(n).toBeGreaterThanOrEqual(8);
  });
});

describe("verl releases", () => {
  test("conformance: the recorded token-mean, cispo and k-free fixtures at 1dda039b replay through resolved overrides", () => {
    const f = load("verl@1dda039b.json");
    const A = "actor_rollout_ref.actor.";
    let n = replay("verl@1dda039b", "", f.variants["vanilla:token-mean"]?.cases ?? []);
    n += replay(
      "verl@1dda039b",
      `${A}loss_agg_mode=token-sum`,
      f.variants["vanilla:token-sum"]?.cases ?? [],
    );
    n += replay("verl@1dda039b", `${A}policy_loss.loss_mode=cispo`, f.variants.cispo?.cases ?? []);
    expect(n).toBeGreaterThanOrEqual(6);
  });
});
