/**
 * Enforces docs/conformance/drift.md#signature-contracts: TRL's private-method signatures pinned
 * per tag, the PAPO trainer's file hash, and the exact report of what changed. The fixtures under
 * test/fixtures/python/contract/<tag>/ are stubs written for these tests that carry only the
 * signatures of the named TRL release (bodies are placeholders).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { contractCommand } from "../../src/cli/commands/contract.js";
import { CONTRACT_PINS } from "../../src/contracts/pins.js";
import {
  checkContract,
  recordContract,
  renderContractText,
} from "../../src/contracts/signature.js";
import type {
  SignatureContract,
  SignatureContractSpec,
} from "../../src/contracts/signatureTypes.js";
import { UnknownNameError } from "../../src/errors.js";
import { capturedIO, runMain } from "../cli/_run.js";

const fixtures = fileURLToPath(new URL("../fixtures/python/contract/", import.meta.url));
const at = (tag: string) => join(fixtures, tag);
const PAPO = "trl/experimental/papo/papo_trainer.py";
const GRPO = "trl/trainer/grpo_trainer.py";
const LOGPS = "GRPOTrainer._get_per_token_logps_and_entropies";

const spec = (tag: string, files: string[] = []): SignatureContractSpec => ({
  name: `test@${tag}`,
  repo: "example/trl",
  tag,
  commit: "0".repeat(40),
  methods: [
    { name: "GRPOTrainer._compute_loss", path: GRPO },
    { name: LOGPS, path: GRPO },
  ],
  files,
});

const names = (ps: readonly { name: string }[]) => ps.map((p) => p.name);

describe("checkContract", () => {
  test("golden: the v1.7.0 fixture against trl@v0.29.1 adds compute_aux_loss and returns three values", async () => {
    const r = await checkContract(at("v1.7.0"), "trl@v0.29.1");
    expect(r.ok).toBe(false);
    expect(r.methods[0]).toMatchObject({ name: "GRPOTrainer._compute_loss", status: "ok" });
    const m = r.methods[1];
    expect(m?.status).toBe("broken");
    expect(m?.added.map((p) => [p.name, p.default, p.index])).toEqual([
      ["compute_aux_loss", "False", 7],
      ["spatial_shapes", "None", 12],
      ["num_tiles", "None", 13],
      ["image_position_ids", "None", 17],
    ]);
    expect([m?.removed, m?.renamed, m?.changed, m?.reordered]).toEqual([[], [], [], false]);
    expect(m?.returnAnnotation).toEqual({
      pinned: "dict[str, torch.Tensor | None]",
      checkout: "tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]",
      changed: true,
    });
    // The fixture tree has no PAPO trainer: its pinned hash cannot match.
    expect(r.files).toEqual([
      {
        path: PAPO,
        status: "missing",
        pinnedSha256: "9836f4505f7026c90cd5ca5b97151dd14c1bc27bcd2bc5a8fca6626c68279175",
        checkoutSha256: null,
      },
    ]);
  });

  test("identity: the v0.29.1 fixture has exactly the pinned trl@v0.29.1 signatures", async () => {
    const r = await checkContract(at("v0.29.1"));
    expect(r.pin).toBe("trl@v0.29.1");
    expect(r.methods.map((m) => m.status)).toEqual(["ok", "ok"]);
    // Its PAPO file is a stand-in, so only the file hash differs.
    expect(r.files.map((f) => f.status)).toEqual(["different"]);
    expect(r.ok).toBe(false);
  });

  test("golden: a renamed parameter at the same position is a rename", async () => {
    const pin = await recordContract(at("v1.0.0"), spec("v1.0.0"));
    const m = (await checkContract(at("v1.1.0"), pin)).methods[1];
    expect(m?.renamed).toEqual([
      { from: "pixel_position_ids", to: "image_position_ids", pinnedIndex: 14, index: 14 },
    ]);
    expect([m?.added, m?.removed]).toEqual([[], []]);
    expect(m?.returnAnnotation.checkout).toBe("tuple[torch.Tensor, torch.Tensor | None]");
  });

  test("golden: a missing method is reported missing", async () => {
    const pin = await recordContract(at("v0.29.1"), spec("v0.29.1"));
    const renamed: SignatureContract = {
      ...pin,
      methods: [
        { ...(pin.methods[0] as SignatureContract["methods"][0]), name: "GRPOTrainer._gone" },
      ],
    };
    const r = await checkContract(at("v0.29.1"), renamed);
    expect(r.methods[0]).toMatchObject({ status: "missing", added: [], removed: [] });
    expect(r.ok).toBe(false);
  });

  test("rejects: an unknown pin and a missing checkout", async () => {
    const err = await checkContract(at("v0.29.1"), "trl@v0.29").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownNameError);
    expect((err as UnknownNameError).suggestions).toContain("trl@v0.29.1");
    await expect(checkContract(join(fixtures, "nope"))).rejects.toMatchObject({
      code: "E_IO",
      arg: "checkoutPath",
    });
  });
});

describe("recordContract", () => {
  test("identity: a checkout meets the contract recorded from it", async () => {
    const pin = await recordContract(at("v0.29.1"), spec("v0.29.1", [PAPO]));
    const bytes = readFileSync(join(at("v0.29.1"), PAPO));
    expect(pin.files).toEqual([
      { path: PAPO, sha256: createHash("sha256").update(bytes).digest("hex") },
    ]);
    const r = await checkContract(at("v0.29.1"), pin);
    expect(r.ok).toBe(true);
    expect(r.files[0]?.status).toBe("equal");
    await expect(recordContract(at("v1.7.0"), spec("v1.7.0", [PAPO]))).rejects.toMatchObject({
      code: "E_IO",
    });
  });
});

describe("CONTRACT_PINS", () => {
  const params = (tag: string) =>
    CONTRACT_PINS[`trl@${tag}`]?.methods.find((m) => m.name === LOGPS)?.parameters ?? [];
  const HEAD = [
    "self",
    "model",
    "input_ids",
    "attention_mask",
    "logits_to_keep",
    "batch_size",
    "compute_entropy",
  ];
  const MM = [
    "pixel_values",
    "image_grid_thw",
    "num_images",
    "pixel_attention_mask",
    "image_sizes",
    "token_type_ids",
    "mm_token_type_ids",
  ];

  test("identity: the per-tag signatures of the TRL anchors table", () => {
    const all = Object.keys(CONTRACT_PINS);
    for (const name of all) {
      const compute = CONTRACT_PINS[name]?.methods.find(
        (m) => m.name === "GRPOTrainer._compute_loss",
      );
      expect(names(compute?.parameters ?? [])).toEqual(["self", "model", "inputs"]);
    }
    for (const tag of ["v0.29.1", "v1.0.0rc1"])
      expect(names(params(tag))).toEqual([...HEAD, ...MM]);
    expect(names(params("v1.0.0"))).toEqual([...HEAD, ...MM, "pixel_position_ids"]);
    for (const tag of ["v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0", "v1.5.0", "v1.5.1", "v1.6.0"])
      expect(names(params(tag))).toEqual([...HEAD, ...MM, "image_position_ids"]);
    const late = [
      ...HEAD,
      "compute_aux_loss",
      "pixel_values",
      "image_grid_thw",
      "num_images",
      "pixel_attention_mask",
      "spatial_shapes",
      "num_tiles",
      "image_sizes",
      "token_type_ids",
      "mm_token_type_ids",
      "image_position_ids",
    ];
    for (const tag of ["v1.7.0", "v1.7.1", "v1.8.0", "v1.9.0"]) {
      expect(names(params(tag))).toEqual(late);
      expect(
        CONTRACT_PINS[`trl@${tag}`]?.methods.find((m) => m.name === LOGPS)?.returnAnnotation,
      ).toBe("tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]");
    }
    expect(all).toHaveLength(14);
  });

  test("identity: the PAPO trainer hash at v0.29.1 and its absence from v1.8.0", () => {
    expect(CONTRACT_PINS["trl@v0.29.1"]?.files).toEqual([
      { path: PAPO, sha256: "9836f4505f7026c90cd5ca5b97151dd14c1bc27bcd2bc5a8fca6626c68279175" },
    ]);
    expect(CONTRACT_PINS["trl@v0.29.1"]?.commit).toBe("617406a4e69551c115c145114497999618d24f3c");
    expect(CONTRACT_PINS["trl@v1.8.0"]?.files).toEqual([]);
  });
});

describe("renderContractText", () => {
  test("golden: one line per added parameter and the return change", async () => {
    const text = renderContractText(await checkContract(at("v1.7.0"), "trl@v0.29.1"));
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("contract trl@v0.29.1 (huggingface/trl v0.29.1 617406a4e695)");
    expect(lines.slice(2)).toEqual([
      `  file ${PAPO}  MISSING  (pinned sha256 9836f4505f70…)`,
      "  GRPOTrainer._compute_loss  ok",
      `  ${LOGPS}  BROKEN`,
      "    + compute_aux_loss=False  (added at index 7)",
      "    + spatial_shapes=None  (added at index 12)",
      "    + num_tiles=None  (added at index 13)",
      "    + image_position_ids=None  (added at index 17)",
      "    return: dict[str, torch.Tensor | None] -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]",
      "CONTRACT BROKEN: 1 of 2 methods and 1 of 1 file differ from trl@v0.29.1",
    ]);
  });
});

describe("polgrad contract", () => {
  const io = capturedIO;

  test("golden: exit 1 on a broken contract, exit 0 on a kept one, one JSON document under --json", async () => {
    // Through the shared runner, which validates the document against contract-check.schema.json.
    const a = await runMain([
      "contract",
      "check",
      "--checkout",
      at("v1.7.0"),
      "--pin",
      "trl@v1.7.0",
      "--json",
    ]);
    // The v1.7.0 signatures hold; only the PAPO file (absent from the fixture) breaks it.
    expect(a.code).toBe(1);
    const doc = JSON.parse(a.stdout);
    // ok is true iff the exit code is 0 (docs/cli.md#json-output): a broken contract is not.
    expect(doc).toMatchObject({ schema_version: 1, command: "contract check", ok: false });
    expect(doc.result.methods.map((m: { status: string }) => m.status)).toEqual(["ok", "ok"]);
    const b = await runMain([
      "contract",
      "check",
      "--checkout",
      at("v1.7.0"),
      "--pin",
      "trl@v1.8.0",
    ]);
    expect(b.code).toBe(0);
    expect(b.stdout.trimEnd().split("\n").at(-1)).toBe(
      "contract ok: 2 methods and 0 files match trl@v1.8.0",
    );
  });

  test("rejects: a missing or unknown subcommand, a missing checkout or a foreign option throws a usage error (exit 2)", async () => {
    const a = io();
    await expect(contractCommand.run({ checkout: at("v1.7.0") }, [], a.io)).rejects.toMatchObject({
      code: "E_USAGE",
    });
    await expect(contractCommand.run({}, ["check"], a.io)).rejects.toMatchObject({
      code: "E_USAGE",
      arg: "--checkout",
    });
    await expect(
      contractCommand.run({ checkout: at("v1.7.0"), pin: "trl@v9" }, ["check"], a.io),
    ).rejects.toMatchObject({ code: "E_UNKNOWN_NAME" });
    await expect(
      contractCommand.run({ checkout: at("v1.7.0") }, ["chek"], a.io),
    ).rejects.toMatchObject({
      code: "E_USAGE",
      arg: "SUBCOMMAND",
    });
    // An option of `contract reduce` is refused by `contract check`.
    await expect(
      contractCommand.run({ checkout: at("v1.7.0"), batch: "b.json" }, ["check"], a.io),
    ).rejects.toMatchObject({ code: "E_USAGE", arg: "--batch" });
    expect(a.out).toEqual({ stdout: "", stderr: "" });
  });
});
