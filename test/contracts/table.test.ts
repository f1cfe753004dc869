/**
 * Enforces docs/conformance/adapters.md#every-tag-at-once: `adapterTable` and `polgrad contract
 * table` read every tag of a git directory (a synthetic repository built here, tagged like TRL,
 * whose files mirror the measured signatures), and give the acceptance table: the
 * authors' rule fails at v0.29.1 and v1.6.0 and passes at v1.7.0, v1.9.0 and HEAD; the pinned
 * file is identical v0.27.0–v1.6.0, changed at v1.7.0–v1.7.1 and missing from v1.8.0; and the
 * stricter unpacking column flags v1.7.0+ where the authors' rule passes.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import {
  type AdapterContract,
  adapterContractJson,
  adapterTable,
  compareVersionTags,
  getAdapterContract,
} from "../../src/index.js";
import { runMain } from "../cli/_run.js";
import {
  buildRepo,
  GRPO_PATH,
  grpoSource,
  LOGPS_API,
  mirrorOf,
  PAPO_PATH,
  papoSource,
} from "./adapterSources.js";

const PINNED = papoSource("v0.29.1");
const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
/** The built-in, with its pin moved to the synthetic v0.29.1 file (the real bytes are upstream's). */
const CONTRACT: AdapterContract = {
  ...getAdapterContract("papo-g-adapter"),
  files: [{ path: PAPO_PATH, sha256: sha(PINNED), ref: "v0.29.1" }],
};
const api = (k: keyof typeof LOGPS_API) => grpoSource(LOGPS_API[k].params, LOGPS_API[k].returns);
const TAGS = [
  ["v0.27.0", api("v0.27.0"), PINNED],
  ["v0.28.0", api("v0.27.0"), PINNED],
  ["v0.29.0", api("v0.29.0"), PINNED],
  ["v0.29.1", api("v0.29.0"), PINNED],
  ["v1.0.0", api("v1.0.0"), PINNED],
  ["v1.1.0", api("v1.1.0"), PINNED],
  ["v1.6.0", api("v1.1.0"), PINNED],
  ["v1.7.0", api("v1.7.0"), papoSource("v1.7.0")],
  ["v1.7.1", api("v1.7.0"), papoSource("v1.7.0")],
  ["v1.8.0", api("v1.7.0"), null],
  ["v1.9.0", api("v1.7.0"), null],
] as const;

let repo = "";
let contractFile = "";

beforeAll(() => {
  repo = buildRepo([
    ...TAGS.map(([tag, grpo, papo], i) => ({
      tag,
      files: { [GRPO_PATH]: grpo, [PAPO_PATH]: papo },
      annotated: i % 2 === 0,
    })),
    // HEAD: one untagged commit after v1.9.0 with the same trainer.
    { tag: null, files: { "README.md": "head\n" } },
  ]);
  contractFile = join(mkdtempSync(join(tmpdir(), "polgrad-table-")), "contract.json");
  writeFileSync(contractFile, JSON.stringify(adapterContractJson(CONTRACT)));
});

describe("compareVersionTags", () => {
  test("golden: numeric order, rc before release, non-versions last", () => {
    const tags = [
      "v1.10.0",
      "nightly",
      "v0.10",
      "v1.0.0",
      "v0.9.6",
      "v1.0.0rc1",
      "v0.2.0",
      "alpha",
    ];
    // 0.2.0 < 0.9.6 < 0.10 (= 0.10.0) < 1.0.0rc1 < 1.0.0 < 1.10.0, then the names by code point.
    expect([...tags].sort(compareVersionTags)).toEqual([
      "v0.2.0",
      "v0.9.6",
      "v0.10",
      "v1.0.0rc1",
      "v1.0.0",
      "v1.10.0",
      "alpha",
      "nightly",
    ]);
  });
});

describe("adapterTable", () => {
  test("golden: the synthetic repository gives the measured table", async () => {
    const t = await adapterTable(CONTRACT, repo);
    const refs = t.rows.map((r) => r.ref);
    expect(refs).toEqual([...TAGS.map(([tag]) => tag), "HEAD"]);
    const by = new Map(t.rows.map((r) => [r.ref, r]));
    const row = (ref: string) => by.get(ref) as (typeof t.rows)[number];
    // The acceptance of issue 10: authors' rule fails at v0.29.1 and v1.6.0, passes from v1.7.0.
    for (const ref of ["v0.27.0", "v0.29.1", "v1.0.0", "v1.1.0", "v1.6.0"])
      expect([ref, row(ref).authorsOk]).toEqual([ref, false]);
    for (const ref of ["v1.7.0", "v1.7.1", "v1.8.0", "v1.9.0", "HEAD"])
      expect([ref, row(ref).authorsOk]).toEqual([ref, true]);
    expect(t.authors).toEqual({ firstPassing: "v1.7.0", lastPassing: "HEAD" });
    // The pin: identical v0.27.0–v1.6.0, changed v1.7.0–v1.7.1, missing from v1.8.0.
    expect(t.rows.map((r) => r.files[0]?.status)).toEqual([
      ...Array(7).fill("identical"),
      "changed",
      "changed",
      "missing",
      "missing",
      "missing",
    ]);
    // _compute_loss is (self, model, inputs) at every tag.
    expect(t.rows.every((r) => r.methods[0]?.status === "ok")).toBe(true);
    // v1.6.0 lacks compute_aux_loss and spatial_shapes (it has image_position_ids since v1.1.0);
    // v1.0.0 has pixel_position_ids instead of image_position_ids, so that one is missing too.
    expect(row("v1.6.0").methods[1]?.failures).toEqual([
      "unsupported GRPOTrainer log-probability API; missing compute_aux_loss, spatial_shapes",
    ]);
    expect(row("v1.0.0").methods[1]?.failures).toEqual([
      "unsupported GRPOTrainer log-probability API; missing compute_aux_loss, image_position_ids, spatial_shapes",
    ]);
    // Ours: the pinned file (read from the tag v0.29.1) unpacks 2 values; v1.7.0+ returns 3.
    const unpacking = (ref: string) => row(ref).stricter.find((s) => s.kind === "unpacking");
    expect(unpacking("v1.6.0")).toMatchObject({ status: "ok", returns: [2], unpacks: [2] });
    expect(unpacking("v1.9.0")).toMatchObject({
      status: "mismatch",
      returns: [3],
      unpacks: [2],
      callerSource: "ref v0.29.1",
      message: "unpacking: the vendored file unpacks 2 values where this tree returns 3",
    });
    // Every keyword the synthetic file passes (compute_entropy, pixel_values, image_grid_thw) exists.
    expect(row("v1.9.0").stricter.find((s) => s.kind === "keywords")?.status).toBe("ok");
    expect(t.all).toEqual({ firstPassing: null, lastPassing: null });
  });

  test("golden: --refs keeps its order and a vendored copy feeds the stricter columns", async () => {
    const mirror = mirrorOf(repo);
    const dir = mkdtempSync(join(tmpdir(), "polgrad-vendored-"));
    // A vendored copy that unpacks three values: the unpacking column flips at v1.7.0.
    const three = PINNED.replace(
      "per_token_logps, entropies = self",
      "per_token_logps, entropies, aux = self",
    ).replace("masked_logps, masked_entropies = self", "masked_logps, masked_entropies, _a = self");
    writeFileSync(join(dir, "papo_trainer.py"), three);
    const t = await adapterTable(CONTRACT, mirror, {
      refs: ["v1.9.0", "v0.29.1"],
      vendored: join(dir, "papo_trainer.py"),
    });
    expect(t.rows.map((r) => [r.ref, r.authorsOk, r.stricter[0]?.status])).toEqual([
      ["v1.9.0", true, "ok"],
      ["v0.29.1", false, "mismatch"],
    ]);
    expect(t.rows[0]?.stricter[0]?.callerSource).toBe(`--vendored ${join(dir, "papo_trainer.py")}`);
  });

  test("rejects: a directory that is not a git directory, and a ref that does not resolve", async () => {
    const plain = mkdtempSync(join(tmpdir(), "polgrad-nogit-"));
    await expect(adapterTable(CONTRACT, plain)).rejects.toMatchObject({ code: "E_IO", arg: "git" });
    await expect(adapterTable(CONTRACT, join(plain, "absent"))).rejects.toMatchObject({
      code: "E_IO",
      arg: "git",
    });
    await expect(adapterTable(CONTRACT, repo, { refs: ["v9.9.9"] })).rejects.toMatchObject({
      code: "E_IO",
      arg: "refs",
    });
    // An option-like ref never reaches git as an option.
    await expect(adapterTable(CONTRACT, repo, { refs: ["--output=x"] })).rejects.toMatchObject({
      code: "E_IO",
      arg: "ref",
    });
  });
});

describe("contract table", () => {
  test("golden: text rows, passing range and the unpacking note, exit 0", async () => {
    // --wide: the table's rows are checked column by column (docs/cli.md#width).
    const r = await runMain([
      "contract",
      "table",
      "--git",
      repo,
      "--contract",
      contractFile,
      "--wide",
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[1]?.split(/\s+/)).toEqual([
      "ref",
      "papo_trainer.py",
      "_compute_loss",
      "_get_per_token_logps_and_entropies",
      "authors",
      "ours:unpacking",
      "ours:keywords",
    ]);
    expect(lines.find((l) => l.startsWith("v1.6.0"))?.split(/\s+/)).toEqual([
      "v1.6.0",
      "identical",
      "ok",
      "BROKEN",
      "FAIL",
      "ok",
      "ok",
    ]);
    expect(lines.find((l) => l.startsWith("v1.7.0"))?.split(/\s+/)).toEqual([
      "v1.7.0",
      "CHANGED",
      "ok",
      "ok",
      "pass",
      "MISMATCH",
      "ok",
    ]);
    expect(lines).toContain("authors' rule passes: first at v1.7.0, last at HEAD");
    expect(lines).toContain(
      "  v1.9.0: authors' rule passes; unpacking: the vendored file unpacks 2 values where this tree returns 3",
    );
  });

  test("golden: one json document under --json, exit 1 when the rule passes nowhere", async () => {
    const ok = await runMain([
      "contract",
      "table",
      "--git",
      repo,
      "--contract",
      contractFile,
      "--refs",
      "v1.9.0,HEAD",
      "--json",
    ]);
    expect(ok.code).toBe(0);
    const doc = JSON.parse(ok.stdout);
    expect(doc.result.rows.map((r: { ref: string }) => r.ref)).toEqual(["v1.9.0", "HEAD"]);
    expect(doc.result.authors).toEqual({ first_passing: "v1.9.0", last_passing: "HEAD" });
    const none = await runMain([
      "contract",
      "table",
      "--git",
      repo,
      "--contract",
      contractFile,
      "--refs",
      "v0.29.1",
    ]);
    expect(none.code).toBe(1);
  });

  test("rejects: a missing --git, an empty --refs item or --git with contract check, exit 2", async () => {
    for (const args of [
      ["contract", "table"],
      ["contract", "table", "--git", repo, "--refs", "v1.9.0,"],
      ["contract", "check", "--checkout", ".", "--git", repo],
      ["contract", "table", "--git", repo, "--contract", "papo-g-adaptr"],
    ]) {
      const r = await runMain(args);
      expect([args.join(" "), r.code, r.stdout]).toEqual([args.join(" "), 2, ""]);
    }
  });
});
