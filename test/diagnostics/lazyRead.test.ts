/**
 * Enforces docs/io.md#lazy-values: a run's steps are read lazily — a tensor the step does not use
 * is never decoded — in `.npz` (stored and deflated), `.npy` folders and `.pt` (written by the real
 * torch.save from Debian's python3-torch; skipped with the reason without it): the diagnosis of a run
 * carrying a dump's extra tensors (token ids, values) is the diagnosis of the same run without
 * them, even when an extra tensor breaks a value rule that an eager read reports; a used tensor
 * that breaks one makes its step unreadable with the eager read's message.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { torchSaveNpzDir } from "../../bench/torchSave.mjs";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { writeDemoRun } from "../../src/index.js";
import { readTensors } from "../../src/io/readTensors.js";
import { type NpyEntry, npyBytes, npzBytes } from "../io/_writers.js";

const root = mkdtempSync(join(tmpdir(), "polgrad-lazy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const STEPS = 12;
const src = join(root, "safetensors");
writeDemoRun(src, { steps: STEPS, width: 64 });

/** Step k's arrays as the demo run wrote them, plus a dump's extras (token ids with 2^60 in one). */
function stepArrays(k: number): Record<string, NpyEntry> {
  const set = readTensors(join(src, `step_${String(k).padStart(6, "0")}.safetensors`));
  const out: Record<string, NpyEntry> = {};
  for (const [name, t] of set.tensors)
    out[name] = { descr: t.dtype === "BOOL" ? "|b1" : "<f8", shape: t.shape, data: t.data };
  const [B = 0, T = 0] = out.logprobs?.shape ?? [];
  // int64 token ids, one beyond ±2^53 (an eager read refuses it), and a value head's outputs.
  const ids = Array.from({ length: B * 2 * T }, (_, i) => (i * 7919) % 150000);
  ids[5] = 2 ** 60;
  out.input_ids = { descr: "<i8", shape: [B, 2 * T], data: ids };
  out.values = { descr: "<f8", shape: [B, T], data: Array.from({ length: B * T }, Math.sin) };
  return out;
}

/** The run as `.npz` per step (stored or deflated), or as one folder of `.npy` files per step. */
function writeRun(
  kind: "npz" | "npz-deflated" | "npy",
  edit?: (k: number, a: Record<string, NpyEntry>) => void,
): string {
  const dir = join(root, `${kind}-${edit === undefined ? "plain" : "edited"}`);
  mkdirSync(dir, { recursive: true });
  for (let k = 0; k < STEPS; k++) {
    const arrays = stepArrays(k);
    edit?.(k, arrays);
    const stem = `step_${String(k).padStart(6, "0")}`;
    if (kind === "npy") {
      mkdirSync(join(dir, stem));
      for (const [name, a] of Object.entries(arrays))
        writeFileSync(join(dir, stem, `${name}.npy`), npyBytes(a.descr, a.shape, a.data));
    } else writeFileSync(join(dir, `${stem}.npz`), npzBytes(arrays, kind === "npz-deflated"));
  }
  return dir;
}

const baseline = diagnoseRun(src);

describe("lazy step reads", () => {
  test.each(["npz", "npz-deflated", "npy"] as const)(
    "identity: a %s run with a dump's extra tensors (one breaking a value rule) is diagnosed as the run without them; an eager read of a step refuses the extra",
    (kind) => {
      const dir = writeRun(kind);
      const d = diagnoseRun(dir);
      expect(d.problems).toEqual([]);
      // Every step's numbers, the file names aside (step_000000.npz against .safetensors).
      const numbers = (r: typeof d) => r.steps.map(({ file: _file, ...rest }) => rest);
      expect(numbers(d)).toEqual(numbers(baseline));
      expect(d.alarms).toEqual(baseline.alarms);
      expect(d.series).toEqual(baseline.series);
      // The extras are named as ignored, never decoded.
      expect(JSON.stringify(d.names)).toContain("input_ids");
      const step = kind === "npy" ? join(dir, "step_000000") : join(dir, "step_000000.npz");
      let eager = "";
      try {
        readTensors(step);
      } catch (e) {
        eager = (e as Error).message;
      }
      expect(eager).toMatch(/2\^53/);
      expect(eager).toContain("input_ids");
    },
  );

  test.each(["npz", "npy"] as const)(
    "rejects: a %s step whose response mask holds a BOOL byte 2 is unreadable with the eager read's message, the others diagnosed",
    (kind) => {
      const dir = writeRun(kind, (k, a) => {
        if (k !== 3 || a.response_mask === undefined) return;
        const m = Array.from(a.response_mask.data);
        m[0] = 2;
        a.response_mask = { ...a.response_mask, data: m };
        delete a.input_ids;
      });
      const d = diagnoseRun(dir);
      expect(d.steps.length).toBe(STEPS - 1);
      const bad = d.problems.find((p) => p.step === 3);
      const path = kind === "npy" ? join(dir, "step_000003") : join(dir, "step_000003.npz");
      let eager = "";
      try {
        readTensors(path);
      } catch (e) {
        eager = (e as Error).message;
      }
      expect(eager).toMatch(/BOOL bytes 0 or 1/);
      expect(bad?.message.replace(/^diagnoseRun/, "")).toBe(eager.replace(/^readTensors/, ""));
    },
  );

  test("identity: a .pt run (torch.save) with the extra tensors is diagnosed as the run without them; an eager read refuses the extra", () => {
    const npz = writeRun("npz");
    const dir = join(root, "pt");
    mkdirSync(dir, { recursive: true });
    const why = torchSaveNpzDir(npz, dir);
    if (why !== null) {
      console.log(
        `test/diagnostics/lazyRead.test.ts: the .pt case is skipped: ${why} (scripts/install-test-tools.sh installs python3-torch)`,
      );
      return;
    }
    expect(readdirSync(dir).length).toBe(STEPS);
    const d = diagnoseRun(dir);
    expect(d.problems).toEqual([]);
    const numbers = (x: typeof d) => x.steps.map(({ file: _file, ...rest }) => rest);
    expect(numbers(d)).toEqual(numbers(baseline));
    expect(() => readTensors(join(dir, "step_000000.pt"))).toThrow(/input_ids[\s\S]*2\^53/);
  }, 120_000);
});
