/**
 * Enforces docs/derivations/papo.md#papo_g-and-papo_d: the papo_g and papo_d specs carry the
 * registered grpo / dapo parents, the official-form constants as the default PAPO config and the
 * TRL v0.29.1 constants as the alternative, with the PAPO citation; all of it frozen data.
 */
import { describe, expect, test } from "vitest";
import { dapo } from "../../src/registry/algorithms/dapo.js";
import { grpo } from "../../src/registry/algorithms/grpo.js";
import { papoD, papoDLoss, papoDTrlLoss } from "../../src/registry/algorithms/papoD.js";
import { papoG, papoGLoss, papoGTrlLoss } from "../../src/registry/algorithms/papoG.js";

describe("papo registry", () => {
  test("golden: papo_g ships the grpo parent with the official constants", () => {
    expect(papoG.name).toBe("papo_g");
    expect(papoG.loss).toEqual(grpo.loss);
    expect(papoG.advantage).toBe("grpo");
    expect(papoG.klPlacement).toBe("loss");
    const { perception, doubleEntropy, ...parent } = papoGLoss;
    expect(parent).toEqual(grpo.loss);
    expect(perception).toEqual({ gamma: 0.01, clip: null, form: "official" });
    expect(doubleEntropy).toBeNull();
  });

  test("golden: papo_d ships the dapo parent with the official constants and double entropy", () => {
    expect(papoD.name).toBe("papo_d");
    expect(papoD.loss).toEqual(dapo.loss);
    expect(papoD.klPlacement).toBe("none");
    const { perception, doubleEntropy, ...parent } = papoDLoss;
    expect(parent).toEqual(dapo.loss);
    expect(perception).toEqual({ gamma: 0.01, clip: null, form: "official" });
    expect(doubleEntropy).toEqual({ eta1: 0.03, eta2: 0.03 });
  });

  test("golden: the trl alternatives carry papoconfig's v0.29.1 defaults", () => {
    for (const [cfg, parent] of [
      [papoGTrlLoss, grpo.loss],
      [papoDTrlLoss, dapo.loss],
    ] as const) {
      const { perception, doubleEntropy, ...rest } = cfg;
      expect(rest).toEqual(parent);
      expect(perception).toEqual({ gamma: 0.1, clip: 0.2, form: "trl" });
      expect(doubleEntropy).toEqual({ eta1: 0.03, eta2: 0.03 });
    }
  });

  test("identity: both specs cite arxiv 2507.06448, the trl tag and the official commit, and are deeply frozen", () => {
    for (const spec of [papoG, papoD]) {
      expect(spec.citation.arxiv).toBe("2507.06448");
      expect(spec.citation.notes).toMatch(/v0\.29\.1/);
      expect(spec.citation.notes).toMatch(/fb63bf45/);
      expect(spec.citation.notes).toMatch(/9836f450/);
      expect(spec.notes).toMatch(/Default form: official/);
      expect(Object.isFrozen(spec.loss)).toBe(true);
    }
    for (const cfg of [papoGLoss, papoDLoss, papoGTrlLoss, papoDTrlLoss]) {
      expect(Object.isFrozen(cfg)).toBe(true);
      expect(Object.isFrozen(cfg.perception)).toBe(true);
      expect(Object.isFrozen(cfg.clip)).toBe(true);
    }
  });
});
