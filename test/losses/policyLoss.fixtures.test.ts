/**
 * Enforces docs/derivations/losses.md#conformance: policyLoss reproduces polgrad 0.2.0 (PyTorch
 * autograd, float64) on every recorded case of test/fixtures/polgrad/policy_loss.json — the full
 * product ratio × surrogate (incl. dual clip, one/two-sided CISPO) × aggregation × TIS × KL (with
 * and without KL aggregation override) plus one case per registry algorithm, on ragged batches with
 * junk (123, NaN, ±Inf) at padding. Provenance: the file's `provenance` block
 * (tools/record-fixtures/README.md).
 */
import { describe, expect, test } from "vitest";
import { policyLoss } from "../../src/index.js";
import { parsePolicyLossConfig } from "../../src/io/configJson.js";
import {
  type FixtureNumber,
  loadPolgradFixture,
  maskBytes,
  matrixRelErr,
  relErr,
  rows,
  vecOrRows,
} from "../_kit/polgradFixtures.js";

type Rows = FixtureNumber[][];
interface Case {
  name: string;
  config: unknown;
  inputs: {
    logprobs: Rows;
    old_logprobs: Rows;
    advantages: FixtureNumber[] | Rows;
    response_mask: boolean[][];
    ref_logprobs?: Rows;
    rollout_logprobs?: Rows;
  };
  outputs: {
    loss: number;
    grad_logprobs: Rows;
    per_token_objective: Rows;
    ratio: Rows;
    clipped_low: boolean[][];
    clipped_high: boolean[][];
    kl_loss: number | null;
  };
}
const fixture = loadPolgradFixture<{ provenance: { polgrad_commit: string }; cases: Case[] }>(
  "policy_loss.json",
);

describe("policyLoss", () => {
  test("conformance: matches polgrad 0.2.0 (pytorch autograd) on every recorded case", () => {
    expect(fixture.provenance.polgrad_commit).toBe("27613d8c633627359808625213f5b058afaec29f");
    expect(fixture.cases.length).toBe(970);
    const failures: string[] = [];
    for (const c of fixture.cases) {
      const r = policyLoss(parsePolicyLossConfig(c.config, c.name), {
        logprobs: rows(c.inputs.logprobs),
        oldLogprobs: rows(c.inputs.old_logprobs),
        advantages: vecOrRows(c.inputs.advantages),
        responseMask: c.inputs.response_mask,
        refLogprobs: c.inputs.ref_logprobs ? rows(c.inputs.ref_logprobs) : null,
        rolloutLogprobs: c.inputs.rollout_logprobs ? rows(c.inputs.rollout_logprobs) : null,
      });
      const o = c.outputs;
      const errs = {
        loss: relErr(r.loss, o.loss),
        grad: matrixRelErr(r.gradLogprobs, o.grad_logprobs),
        objective: matrixRelErr(r.perTokenObjective, o.per_token_objective),
        ratio: matrixRelErr(r.ratio, o.ratio),
        kl:
          o.kl_loss === null
            ? r.klLoss === null
              ? 0
              : 1
            : relErr(r.klLoss ?? Number.NaN, o.kl_loss),
      };
      const worst = Math.max(...Object.values(errs));
      const masksEqual =
        JSON.stringify(Array.from(r.clippedLow.data)) ===
          JSON.stringify(maskBytes(o.clipped_low)) &&
        JSON.stringify(Array.from(r.clippedHigh.data)) ===
          JSON.stringify(maskBytes(o.clipped_high));
      if (!(worst <= 1e-12) || !masksEqual)
        failures.push(`${c.name}: ${JSON.stringify(errs)} masksEqual=${masksEqual}`);
    }
    expect(failures).toEqual([]);
  });
});
