/**
 * Enforces docs/io.md#run-folders: step numbers come from the names of files and folders in every
 * layout trainers write; the dump stride makes a sparse run a run; duplicates, empty step folders
 * and missing dumps are named.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { IoError } from "../../src/errors.js";
import { scanRunFolder, stepOfName } from "../../src/io/runFolder.js";
import { useTmpDir, writeFile } from "./_kit.js";

const tmp = useTmpDir();
const JSON_BATCH = '{"response_mask": [[1]]}';

function folder(name: string, entries: readonly string[]): string {
  const dir = tmp(name);
  mkdirSync(dir);
  for (const e of entries) {
    if (e.endsWith("/")) mkdirSync(join(dir, e));
    else {
      mkdirSync(join(dir, e, ".."), { recursive: true });
      writeFile(join(dir, e), JSON_BATCH);
    }
  }
  return dir;
}

describe("stepOfName", () => {
  test("golden: the step word, separator, zero padding and prefix variants", () => {
    const cases: [string, boolean, number | null][] = [
      ["step_120.pt", false, 120],
      ["step-120.npz", false, 120],
      ["step120.safetensors", false, 120],
      ["step_000120.json", false, 120],
      ["global_step_120", true, 120],
      ["iter_0007.pth", false, 7],
      ["iteration-3.npy", false, 3],
      ["rollout_step_5.pt", false, 5],
      ["STEP_9.PT", false, 9],
      ["step_0.json", false, 0],
      ["step_12.txt", false, null],
      ["notes.pt", false, null],
      ["commit_5.pt", false, null],
      ["step_5.pt", true, null], // a folder named like a file is no step folder
    ];
    for (const [name, isFolder, step] of cases)
      expect([name, stepOfName(name, isFolder)]).toEqual([name, step]);
    expect(stepOfName(`step_${"9".repeat(16)}.pt`, false)).toBe("too long");
  });
});

describe("scanRunFolder", () => {
  test("golden: every layout trainers write is read with its step numbers", () => {
    const dir = folder("mixed", [
      "step_000000.pt",
      "step-1.npz",
      "global_step_2/batch.npz",
      "iter_3/logprobs.npy",
      "iter_3/old_logprobs.npy",
      "step4.safetensors",
      "step_5.json",
      "README.md",
      "events.out.tfevents",
    ]);
    const scan = scanRunFolder(dir);
    expect(scan.steps.map((s) => [s.step, s.name, s.kind])).toEqual([
      [0, "step_000000.pt", "file"],
      [1, "step-1.npz", "file"],
      [2, "global_step_2/", "folder"],
      [3, "iter_3/", "folder"],
      [4, "step4.safetensors", "file"],
      [5, "step_5.json", "file"],
    ]);
    expect(scan.stride).toBe(1);
    expect(scan.problems).toEqual([]);
    expect(scan.others).toEqual({ names: ["README.md", "events.out.tfevents"], count: 2 });
  });

  test("golden: a run dumped every 10 steps has stride 10 and no gaps", () => {
    const names = Array.from(
      { length: 30 },
      (_, k) => `step_${String(10 * k).padStart(6, "0")}.json`,
    );
    const scan = scanRunFolder(folder("sparse", names));
    expect(scan.steps).toHaveLength(30);
    expect(scan.steps[29]?.step).toBe(290);
    expect(scan.stride).toBe(10);
    expect(scan.problems).toEqual([]);
  });

  test("rejects: duplicates, empty step folders and missing dumps are named", () => {
    const dir = folder("broken", [
      "step_0.json",
      "step_10.json",
      "step_10.pt",
      "global_step_20/",
      "step_30.json",
      "step_40.json",
      "step_70.json",
      "step_75.json",
    ]);
    const scan = scanRunFolder(dir);
    expect(scan.steps.map((s) => s.step)).toEqual([0, 10, 30, 40, 70, 75]);
    expect(scan.stride).toBe(10);
    expect(scan.problems.map((p) => p.message)).toEqual([
      "step folder holds no tensor file (.safetensors, .json, .npy, .npz, .pt, .pth)",
      "step 10 is also in step_10.json; step_10.pt is ignored",
      "1 dump(s) missing between steps 10 and 30 (the run dumps every 10 steps)",
      "2 dump(s) missing between steps 40 and 70 (the run dumps every 10 steps)",
    ]);
    expect(() => scanRunFolder(join(dir, "nope"))).toThrow(IoError);
  });
});
