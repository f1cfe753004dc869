/** Enforces docs/conformance/frameworks.md#registry: ids, pins, short forms and lookups. */
import { describe, expect, test } from "vitest";
import {
  canonicalFrameworkModelId,
  FRAMEWORK_MODEL_IDS,
  FRAMEWORK_MODELS,
  getFrameworkModel,
} from "../../../src/conformance/frameworks/index.js";
import { UnknownNameError } from "../../../src/errors.js";

describe("FRAMEWORK_MODELS", () => {
  test("identity: ids, pins and variants are consistent", () => {
    // verl: 11 variants at the pin + token-sum at head; OpenRLHF 7 × 2; TRL 13 × 2.
    expect(FRAMEWORK_MODEL_IDS.length).toBe(11 + 12 + 7 * 2 + 13 * 2);
    expect(new Set(FRAMEWORK_MODEL_IDS).size).toBe(FRAMEWORK_MODEL_IDS.length);
    for (const id of FRAMEWORK_MODEL_IDS) {
      const m = FRAMEWORK_MODELS[id]!;
      expect(m.id).toBe(id);
      expect(id).toBe(`${m.framework}@${m.pin.label}:${m.variant}`);
      expect(m.pin.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(m.pin.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(m.pin.repo).toMatch(/^[\w-]+\/[\w-]+$/);
      if (/^[0-9a-f]{8}$/.test(m.pin.label))
        expect(m.pin.commit.startsWith(m.pin.label)).toBe(true);
      expect(m.description.length).toBeGreaterThan(80);
      expect(Object.isFrozen(m) && Object.isFrozen(m.settings) && Object.isFrozen(m.pin)).toBe(
        true,
      );
      expect(m.needs.includes("refLogprobs")).toBe(
        m.variant.startsWith("kl:") || m.variant.includes("beta"),
      );
    }
    expect(FRAMEWORK_MODEL_IDS).toContain("verl@1dda039b:vanilla:token-sum");
    expect(FRAMEWORK_MODEL_IDS).not.toContain("verl@74a718a4:vanilla:token-sum");
    expect(FRAMEWORK_MODELS["trl@v1.8.0:cispo:token"]!.settings.epsilon_high).toBe(5);
    expect(FRAMEWORK_MODELS["verl@74a718a4:vanilla:token-mean"]!.settings.clip_ratio_c).toBe(3);
    expect(
      FRAMEWORK_MODELS["verl@74a718a4:vanilla:token-mean"]!.settings.loss_scale_factor,
    ).toBeNull();
  });
});

describe("getFrameworkModel", () => {
  test("golden: short forms map to their canonical ids", () => {
    const pairs: [string, string][] = [
      ["verl@1dda039b:seq-mean-token-mean", "verl@1dda039b:vanilla:seq-mean-token-mean"],
      ["verl@74a718a4:token-mean", "verl@74a718a4:vanilla:token-mean"],
      ["verl@74a718a4:vanilla", "verl@74a718a4:vanilla:token-mean"],
      ["openrlhf@bc71bb19:ppo", "openrlhf@bc71bb19:ppo:token"],
      ["trl@v1.8.0:dapo", "trl@v1.8.0:dapo:token"],
      ["trl@v1.8.0:grpo:sequence", "trl@v1.8.0:grpo:sequence"],
    ];
    for (const [short, id] of pairs) {
      expect(canonicalFrameworkModelId(short)).toBe(id);
      expect(getFrameworkModel(short)).toBe(FRAMEWORK_MODELS[id]);
    }
  });

  test("rejects: an unknown id with did-you-mean suggestions", () => {
    let err: unknown;
    try {
      getFrameworkModel("verl@74a718a4:vanilla:token-sum");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnknownNameError);
    const u = err as UnknownNameError;
    expect(u.code).toBe("E_UNKNOWN_NAME");
    expect(u.arg).toBe("id");
    expect(u.suggestions[0]).toBe("verl@74a718a4:vanilla:token-mean");
    expect(u.message).toMatch(/did you mean/);
    expect(() => getFrameworkModel("toString")).toThrow(UnknownNameError);
    expect(() => getFrameworkModel(42 as unknown as string)).toThrow(UnknownNameError);
  });
});
