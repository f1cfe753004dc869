/**
 * Enforces docs/derivations/papo.md#conformance: the `trl` form of papoLoss, run with the
 * registered papo_g / papo_d TRL configs, reproduces the real TRL v0.29.1
 * `PAPOTrainer._compute_loss` (PyTorch autograd, float64) on every case recorded by
 * tools/record-fixtures/papo.py, in the loss and both gradients, to 1e-12 relative.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import type { Matrix } from "../../src/core/tensor.js";
import { type PapoInputs, papoLoss } from "../../src/losses/papo.js";
import type { PapoConfig } from "../../src/losses/papoConfig.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { papoDTrlLoss } from "../../src/registry/algorithms/papoD.js";
import { papoGTrlLoss } from "../../src/registry/algorithms/papoG.js";
import { matrixRelErr, relErr } from "../_kit/polgradFixtures.js";

type Rows = number[][];
interface Outputs {
  loss: number;
  grad_logprobs: Rows;
  grad_masked_logprobs: Rows;
}
interface Case {
  name: string;
  seed: number;
  shape: [number, number];
  inputs: {
    logprobs: Rows;
    masked_logprobs: Rows;
    old_logprobs: Rows;
    advantages: number[];
    response_mask: boolean[][];
    entropies: Rows;
    masked_entropies: Rows;
    ref_logprobs?: Rows;
  };
  outputs: Outputs;
  outputs_without_der: Outputs;
  outputs_without_papo: Outputs;
}
interface Fixture {
  provenance: { commit: string; files: { path: string; sha256: string }[] };
  variants: Record<"papo_g" | "papo_d", { trainer_state: Record<string, unknown>; cases: Case[] }>;
}

const fixture = JSON.parse(
  readFileSync(
    fileURLToPath(new URL("../fixtures/frameworks/trl-papo@v0.29.1.json", import.meta.url)),
    "utf8",
  ),
) as Fixture;
const CONFIGS: Record<"papo_g" | "papo_d", PapoConfig> = {
  papo_g: papoGTrlLoss,
  papo_d: papoDTrlLoss,
};
const TOL = 1e-12;

function inputsOf(c: Case): PapoInputs {
  const i = c.inputs;
  return {
    logprobs: i.logprobs,
    maskedLogprobs: i.masked_logprobs,
    oldLogprobs: i.old_logprobs,
    advantages: i.advantages,
    responseMask: i.response_mask,
    refLogprobs: i.ref_logprobs ?? null,
    entropies: i.entropies,
    maskedEntropies: i.masked_entropies,
  };
}

function worst(r: { loss: number; gradLogprobs: Matrix; gradMaskedLogprobs: Matrix }, o: Outputs) {
  return Math.max(
    relErr(r.loss, o.loss),
    matrixRelErr(r.gradLogprobs, o.grad_logprobs),
    matrixRelErr(r.gradMaskedLogprobs, o.grad_masked_logprobs),
  );
}

/** Every case of both variants as [variant, case]. */
const CASES = (["papo_g", "papo_d"] as const).flatMap((v) =>
  fixture.variants[v].cases.map((c) => [v, c] as const),
);

describe("papoLoss", () => {
  test("conformance: the trl form reproduces the real trl v0.29.1 _compute_loss on every recorded case", () => {
    expect(fixture.provenance.commit).toBe("617406a4e69551c115c145114497999618d24f3c");
    expect(fixture.provenance.files).toContainEqual({
      path: "trl/experimental/papo/papo_trainer.py",
      sha256: "9836f4505f7026c90cd5ca5b97151dd14c1bc27bcd2bc5a8fca6626c68279175",
    });
    expect(CASES.length).toBe(16);
    const errs = CASES.map(([v, c]) => worst(papoLoss(CONFIGS[v], inputsOf(c)), c.outputs));
    if (process.env.POLGRAD_REPORT_DISAGREEMENT) console.log("trl-papo worst:", Math.max(...errs));
    expect(Math.max(...errs)).toBeLessThanOrEqual(TOL);
  });

  test("conformance: the trl form without double entropy and without papo terms matches the recorded ablations", () => {
    const errs = CASES.flatMap(([v, c]) => {
      const cfg = CONFIGS[v];
      const noDer = papoLoss({ ...cfg, doubleEntropy: null }, inputsOf(c));
      const bare = papoLoss(
        { ...cfg, perception: { ...cfg.perception, gamma: 0 }, doubleEntropy: null },
        inputsOf(c),
      );
      // TRL's bare loss is (L_parent broadcast to [B, T]).mean(): polgrad's parent to rounding.
      const parent = policyLoss(cfg, inputsOf(c));
      expect(bare.loss).toBe(parent.loss);
      return [worst(noDer, c.outputs_without_der), worst(bare, c.outputs_without_papo)];
    });
    expect(Math.max(...errs)).toBeLessThanOrEqual(TOL);
  });

  test("deviation: trl's double-entropy term carries no gradient (recorded gradients with and without it are bitwise equal)", () => {
    // Measured on the real code: η1 = η2 = 0.03 moves the loss but not one bit of either gradient.
    for (const [v, c] of CASES) {
      expect(c.outputs.grad_logprobs).toEqual(c.outputs_without_der.grad_logprobs);
      expect(c.outputs.grad_masked_logprobs).toEqual(c.outputs_without_der.grad_masked_logprobs);
      expect(c.outputs.loss).not.toBe(c.outputs_without_der.loss);
      // The loss moves by exactly the entropy mean over B×T (to rounding).
      const n = c.shape[0] * c.shape[1];
      const mean = (x: Rows) => x.flat().reduce((a, b) => a + b, 0) / n;
      const E = 0.03 * mean(c.inputs.entropies) + 0.03 * mean(c.inputs.masked_entropies);
      expect(relErr(c.outputs.loss - c.outputs_without_der.loss, E), `${v} ${c.name}`).toBeLessThan(
        1e-12,
      );
    }
  });
});
