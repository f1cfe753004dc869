/** Enforces docs/conformance/frameworks.md#registry: ids, pins, short forms and lookups. */

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  canonicalFrameworkModelId,
  FRAMEWORK_MODEL_IDS,
  FRAMEWORK_MODELS,
  frameworkOverrideKeys,
  getFrameworkModel,
  verlModel,
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

  test("golden: an id with overrides builds the model with those settings and round-trips", () => {
    const pairs: [string, Record<string, unknown>, string][] = [
      [
        "verl@74a718a4:seq-mean-token-mean[mask_dtype=float64]",
        { response_mask_dtype: "torch.float64" },
        "verl@74a718a4:vanilla:seq-mean-token-mean[mask_dtype=float64]",
      ],
      [
        // Keys in any order; the model's id lists them in table order.
        "verl@1dda039b:seq-mean-token-sum-norm[mask_dtype=bool, loss_scale_factor=16]",
        { loss_scale_factor: 16 },
        "verl@1dda039b:vanilla:seq-mean-token-sum-norm[loss_scale_factor=16,mask_dtype=bool]",
      ],
      [
        "openrlhf@bc71bb19:ppo:sample[mask_dtype=float64]",
        { response_mask_dtype: "torch.float64" },
        "openrlhf@bc71bb19:ppo:sample[mask_dtype=float64]",
      ],
      [
        "trl@v1.8.0:dapo[mask_dtype=float64,num_items_in_batch=64]",
        { num_items_in_batch: 64, response_mask_dtype: "torch.float64" },
        "trl@v1.8.0:dapo:token[num_items_in_batch=64,mask_dtype=float64]",
      ],
    ];
    for (const [id, settings, canonical] of pairs) {
      const m = getFrameworkModel(id);
      expect(m.id).toBe(canonical);
      expect(m.settings).toMatchObject(settings);
      // The model's own id builds it again.
      expect(getFrameworkModel(m.id).id).toBe(canonical);
      // The same model as the builder's overrides argument gives.
      expect(getFrameworkModel(m.id).settings).toEqual(m.settings);
    }
    // Each framework's table: mask_dtype with the framework's own dtype first.
    expect(frameworkOverrideKeys("verl").find((k) => k.key === "mask_dtype")?.values).toEqual([
      "bool",
      "float64",
    ]);
    expect(frameworkOverrideKeys("openrlhf").map((k) => k.key)).toEqual(["mask_dtype"]);
  });

  test("rejects: an override id with an unknown key, value or a malformed item", () => {
    const cases: [string, string, string][] = [
      ["verl@74a718a4:gspo[mask_dtyp=float64]", "E_UNKNOWN_NAME", 'did you mean "mask_dtype"'],
      ["verl@74a718a4:gspo[mask_dtype=long]", "E_UNKNOWN_NAME", "id's mask_dtype"],
      ["verl@74a718a4:gspo[mask_dtype]", "E_CONFIG", "[key=value"],
      ["verl@74a718a4:gspo[mask_dtype=bool,mask_dtype=bool]", "E_CONFIG", "once"],
      ["trl@v1.8.0:dapo[num_items_in_batch=-3]", "E_CONFIG", "positive finite number"],
      ["trl@v1.8.0:dapo[num_items_in_batch=1e999]", "E_CONFIG", "positive finite number"],
      ["trl@v1.8.0:grpo[num_items_in_batch=3]", "E_CONFIG", "dapo or cispo"],
      ["verl@74a718a4:gspox[mask_dtype=bool]", "E_UNKNOWN_NAME", "verl@74a718a4:gspo"],
    ];
    for (const [id, code, fragment] of cases) {
      let err: unknown;
      try {
        getFrameworkModel(id);
      } catch (e) {
        err = e;
      }
      expect([id, (err as { code?: string })?.code]).toEqual([id, code]);
      expect((err as Error).message, id).toContain(fragment);
    }
    // An unknown field of an overrides object is an error, never ignored.
    expect(() => verlModel("74a718a4", "gspo", { maskDtyp: "float64" } as never)).toThrow(
      /did you mean "maskDtype"/,
    );
  });

  test("identity: the docs' override table is the frameworks' tables", () => {
    const doc = readFileSync(
      fileURLToPath(new URL("../../../docs/conformance/frameworks.md", import.meta.url)),
      "utf8",
    );
    const section = doc.slice(doc.indexOf("### Overrides"), doc.indexOf("## polgrad's VENDORED"));
    const rows = [
      ...section.matchAll(/^\| (verl|OpenRLHF|TRL) \| `(\w+)` \(`(\w+)`\) \| (.+) \|$/gm),
    ];
    const fw = { verl: "verl", OpenRLHF: "openrlhf", TRL: "trl" } as const;
    const documented = rows.map((r) => {
      const values = [...(r[4] as string).matchAll(/`(\w+)`/g)].map((v) => v[1]);
      return `${fw[r[1] as keyof typeof fw]} ${r[2]} ${r[3]} ${values.join("|") || "number"}`;
    });
    const coded = (["verl", "openrlhf", "trl"] as const).flatMap((f) =>
      frameworkOverrideKeys(f).map(
        (k) => `${f} ${k.key} ${k.field} ${k.values?.join("|") ?? "number"}`,
      ),
    );
    expect(documented).toEqual(coded);
  });
});
