/**
 * Enforces docs/conformance/drift.md: pins are recorded from a checkout, a checkout is compared
 * definition by definition (unchanged / changed / missing) with trailing-whitespace-only
 * normalisation, and the CLI exits 0 (no drift), 1 (drift) or throws a PolgradError (exit 2).
 * The fixtures under test/fixtures/python/drift/ are small fakes written for these tests: `head`
 * differs from `pin` the way verl 1dda039b differs from polgrad's pin 74a718a4 (two definitions
 * changed), plus edits that must not count (trailing whitespace, a comment outside a segment).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { driftCommand } from "../../src/cli/commands/drift.js";
import {
  type DriftPins,
  type DriftReport,
  driftCheck,
  recordPins,
  renderDriftText,
  type TrackedFramework,
} from "../../src/conformance/drift.js";
import { DRIFT_PINS } from "../../src/conformance/pins.js";
import { IoError, UnknownNameError } from "../../src/errors.js";
import { capturedIO, runMain } from "../cli/_run.js";

const fixtures = fileURLToPath(new URL("../fixtures/python/drift/", import.meta.url));
const PIN = join(fixtures, "pin");
const HEAD = join(fixtures, "head");
const CORE = "fakerl/ppo/core_algos.py";

const TRACKED: TrackedFramework = {
  framework: "fakerl",
  repo: "example/fakerl",
  commit: "0123456789abcdef0123456789abcdef01234567",
  files: [
    {
      path: CORE,
      definitions: [
        "agg_loss",
        "compute_policy_loss",
        "kl_penalty",
        "compute_reinforce_plus_plus_outcome_advantage",
        "ValueLoss",
        "ValueLoss.forward",
      ],
    },
    { path: "fakerl/torch_functional.py", definitions: ["masked_sum", "masked_mean"] },
  ],
};

let pins: DriftPins;
beforeAll(async () => {
  pins = await recordPins(PIN, TRACKED);
});

function statuses(r: DriftReport): Record<string, string> {
  return Object.fromEntries(r.files.flatMap((f) => f.definitions.map((d) => [d.name, d.status])));
}

/** A scratch copy of the pin fixture, edited by `edit`. */
function scratch(edit: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "polgrad-drift-"));
  cpSync(PIN, dir, { recursive: true });
  edit(dir);
  return dir;
}

describe("recordPins", () => {
  test("golden: spans start at the first decorator and hashes are recorded per definition", () => {
    const core = pins.files[0];
    expect(core?.definitions.find((d) => d.name === "compute_policy_loss")).toMatchObject({
      startLine: 29,
      endLine: 35,
    });
    expect(core?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(pins.files.flatMap((f) => f.definitions.map((d) => d.name))).toEqual(
      TRACKED.files.flatMap((f) => f.definitions),
    );
  });

  test("rejects: a tracked definition absent at the pin", async () => {
    const tracked = { ...TRACKED, files: [{ path: CORE, definitions: ["no_such_fn"] }] };
    await expect(recordPins(PIN, tracked)).rejects.toThrow(
      /tracked definition 'no_such_fn' not found/,
    );
    const missingFile = { ...TRACKED, files: [{ path: "nope.py", definitions: ["x"] }] };
    await expect(recordPins(PIN, missingFile)).rejects.toBeInstanceOf(IoError);
  });
});

describe("driftCheck", () => {
  test("golden: the head fixture reports exactly agg_loss and compute_reinforce_plus_plus_outcome_advantage as changed", async () => {
    const r = await driftCheck(HEAD, "fakerl", { pins });
    expect(statuses(r)).toEqual({
      agg_loss: "changed", // a new branch
      compute_policy_loss: "unchanged", // trailing whitespace only; the comment above it changed
      kl_penalty: "unchanged",
      compute_reinforce_plus_plus_outcome_advantage: "changed", // a comment-only change inside
      ValueLoss: "unchanged", // a blank line gained trailing spaces
      "ValueLoss.forward": "unchanged", // moved down two lines
      masked_sum: "unchanged",
      masked_mean: "unchanged",
    });
    expect(r.driftDetected).toBe(true);
    expect(r.counts).toEqual({ unchanged: 6, changed: 2, missing: 0, total: 8 });
    expect(r.files.map((f) => f.fileHash)).toEqual(["different", "equal"]);
    const moved = r.files[0]?.definitions.find((d) => d.name === "ValueLoss.forward");
    expect([moved?.pinnedLines.start, moved?.checkoutLines?.start]).toEqual([64, 66]);
  });

  test("identity: the pin checkout against its own pins is unchanged everywhere", async () => {
    const r = await driftCheck(PIN, "fakerl", { pins });
    expect(r.driftDetected).toBe(false);
    expect(r.counts).toEqual({ unchanged: 8, changed: 0, missing: 0, total: 8 });
    expect(r.files.every((f) => f.fileHash === "equal")).toBe(true);
  });

  test("identity: trailing whitespace alone is not drift", async () => {
    const dir = scratch((d) => {
      const p = join(d, CORE);
      const text = readFileSync(p, "utf8")
        .split("\n")
        .map((l) => `${l}  \t`);
      writeFileSync(p, text.join("\r\n"));
    });
    const r = await driftCheck(dir, "fakerl", { pins });
    expect(r.driftDetected).toBe(false);
    expect(r.files[0]?.fileHash).toBe("different");
    rmSync(dir, { recursive: true });
  });

  test("golden: a removed definition is missing", async () => {
    const dir = scratch((d) => {
      const p = join(d, CORE);
      writeFileSync(p, readFileSync(p, "utf8").replace("def kl_penalty(", "def kl_penalty_v2("));
    });
    const r = await driftCheck(dir, "fakerl", { pins });
    expect(statuses(r).kl_penalty).toBe("missing");
    expect(r.counts.missing).toBe(1);
    expect(r.driftDetected).toBe(true);
    rmSync(dir, { recursive: true });
  });

  test("golden: a missing file reports every definition missing", async () => {
    const dir = scratch((d) => rmSync(join(d, CORE)));
    const r = await driftCheck(dir, "fakerl", { pins });
    expect(r.files[0]?.fileHash).toBe("missing");
    expect(r.files[0]?.definitions.every((d) => d.status === "missing")).toBe(true);
    expect(r.files[0]?.definitions.every((d) => d.checkoutSha256 === null)).toBe(true);
    expect(r.counts).toEqual({ unchanged: 2, changed: 0, missing: 6, total: 8 });
    rmSync(dir, { recursive: true });
  });

  test("rejects: a missing checkout, an unknown framework and an unparsable file", async () => {
    await expect(driftCheck(join(fixtures, "nope"), "verl")).rejects.toMatchObject({
      code: "E_IO",
      arg: "checkoutPath",
    });
    const unknown = await driftCheck(PIN, "verll").catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(UnknownNameError);
    expect((unknown as UnknownNameError).suggestions).toContain("verl");
    const dir = scratch((d) => writeFileSync(join(d, CORE), "def broken(:\n    pass\n"));
    await expect(driftCheck(dir, "fakerl", { pins })).rejects.toBeInstanceOf(IoError);
    rmSync(dir, { recursive: true });
  });
});

describe("DRIFT_PINS", () => {
  test("identity: the tracked definitions and commits are polgrad's", () => {
    const names = (fw: keyof typeof DRIFT_PINS) =>
      DRIFT_PINS[fw].files.map((f) => [f.path, f.definitions.map((d) => d.name)]);
    expect(DRIFT_PINS.verl.commit).toBe("74a718a492092312f1004fe25369975137388849");
    expect(names("verl")).toEqual([
      [
        "verl/trainer/ppo/core_algos.py",
        [
          "agg_loss",
          "compute_policy_loss",
          "compute_policy_loss_vanilla",
          "compute_policy_loss_gspo",
          "compute_policy_loss_cispo",
          "compute_value_loss",
          "kl_penalty",
          "kl_penalty_forward",
          "compute_grpo_outcome_advantage",
          "compute_rloo_outcome_advantage",
          "compute_reinforce_plus_plus_outcome_advantage",
        ],
      ],
      [
        "verl/utils/torch_functional.py",
        ["clip_by_value", "masked_sum", "masked_mean", "masked_whiten"],
      ],
    ]);
    expect(DRIFT_PINS.openrlhf.commit).toBe("bc71bb19464aca306b33080b2d2bb45d154e2f49");
    expect(names("openrlhf")).toEqual([
      ["openrlhf/models/loss.py", ["aggregate_loss", "PolicyLoss", "ValueLoss"]],
      ["openrlhf/models/utils.py", ["compute_approx_kl", "masked_mean"]],
    ]);
    expect(DRIFT_PINS.trl.commit).toBe("95809b942eb5d11d0b06d749510d88be99230b73");
    expect(names("trl")).toEqual([
      [
        "trl/trainer/grpo_trainer.py",
        ["GRPOTrainer._compute_loss", "GRPOTrainer._get_per_token_logps_and_entropies"],
      ],
    ]);
  });

  test("identity: pinned file hashes match the provenance of the vendored sources", () => {
    // sha256 of the files at the pins, as recorded in polgrad's provenance and the anchors file.
    expect(DRIFT_PINS.verl.files[0]?.sha256).toBe(
      "9114f9e16c87e4c9ebf2fa016baf733c9bbc819766b53c8968aaa9e8abcd7916",
    );
    expect(DRIFT_PINS.trl.files[0]?.sha256).toBe(
      "52d9a6c1e298df35d0da4a6fa17874d750ee627f6ac15393c8860d74d1ba4917",
    );
    expect(DRIFT_PINS.openrlhf.files[0]?.sha256).toBe(
      "d1dea3b37cb4c647a1a4b2472fbaefb025ac7ffb50688408d33af4c66a957551",
    );
  });
});

describe("renderDriftText", () => {
  test("golden: verdict line and upper-case labels", async () => {
    const text = renderDriftText(await driftCheck(HEAD, "fakerl", { pins }));
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe(`example/fakerl ${CORE}`);
    expect(lines[1]).toMatch(/^ {2}pinned 0123456789ab {2}checkout .* {2}file DIFFERENT$/);
    expect(lines).toContain(
      `    ${"agg_loss".padEnd(47)}CHANGED  (lines 19-25 at the pin, 19-27 now)`,
    );
    expect(lines).toContain(`    ${"kl_penalty".padEnd(47)}unchanged`);
    expect(lines.at(-1)).toBe(
      "DRIFT DETECTED: 2 changed, 0 missing, 6 unchanged across 8 tracked definitions",
    );
    const clean = renderDriftText(await driftCheck(PIN, "fakerl", { pins }));
    expect(clean.trimEnd().split("\n").at(-1)).toBe(
      "no drift: 0 changed, 0 missing, 8 unchanged across 8 tracked definitions",
    );
  });
});

describe("polgrad drift", () => {
  const io = capturedIO;

  test("golden: exit 0 without drift and exit 1 with drift, one JSON document under --json", async () => {
    const pinDir = scratch(() => {});
    // The built-in verl pins against a checkout without verl's files: every definition missing.
    // Through the shared runner, which validates the document against drift.schema.json.
    const a = await runMain(["drift", "--checkout", pinDir, "--framework", "verl", "--json"]);
    expect(a.code).toBe(1);
    const doc = JSON.parse(a.stdout);
    // ok is true iff the exit code is 0 (docs/cli.md#json-output): drift is a failed check.
    expect(doc).toMatchObject({ schema_version: 1, command: "drift", ok: false });
    expect(doc.result).toMatchObject({ framework: "verl", drift_detected: true });
    expect(doc.result.counts).toEqual({ unchanged: 0, changed: 0, missing: 15, total: 15 });
    rmSync(pinDir, { recursive: true });
    const b = await runMain(["drift", "--checkout", PIN, "--framework", "trl"]);
    expect([b.code, b.stdout.trimEnd().split("\n").at(-1)]).toEqual([
      1,
      "DRIFT DETECTED: 0 changed, 2 missing, 0 unchanged across 2 tracked definitions",
    ]);
  });

  test("rejects: bad input throws a PolgradError (exit 2) and writes nothing", async () => {
    const a = io();
    await expect(driftCommand.run({ framework: "verl" }, [], a.io)).rejects.toMatchObject({
      code: "E_USAGE",
      arg: "--checkout",
    });
    await expect(
      driftCommand.run({ checkout: PIN, framework: "nope" }, [], a.io),
    ).rejects.toMatchObject({ code: "E_UNKNOWN_NAME" });
    await expect(
      driftCommand.run({ checkout: join(fixtures, "nope"), framework: "verl" }, [], a.io),
    ).rejects.toMatchObject({ code: "E_IO" });
    expect(a.out).toEqual({ stdout: "", stderr: "" });
  });
});
