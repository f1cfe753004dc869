/**
 * Enforces docs/diagnostics/run.md#run-folder-rules: an entry named as a step that cannot be read
 * is listed with its own reason and is no missing dump; the candidates of one step are read in
 * name order and the first that reads is diagnosed, so a junk file never shadows a valid one.
 */
import { copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { scanRunFolder } from "../../src/io/runFolder.js";
import { useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();

/** A 12-step demo run (steps 0..11, every step dumped). */
function demo(name: string): string {
  const dir = tmp(name);
  writeDemoRun(dir, { steps: 12, batchSize: 6, width: 10 });
  return dir;
}

const file = (step: number): string => `step_${String(step).padStart(6, "0")}.safetensors`;

describe("run folder rules", () => {
  test("regression: a step that exists but cannot be read is listed with its reason, not as a missing dump", () => {
    const dir = demo("unreadable");
    // Step 2: a directory named like a file. Step 4: a symlink loop named like a file; step 6:
    // one named like a step folder. Step 8: a step folder that is a regular file without an
    // extension. Step 10: a dangling link named like a step folder.
    for (const s of [2, 4, 6, 8, 10]) rmSync(join(dir, file(s)));
    mkdirSync(join(dir, "step_2.pt"));
    symlinkSync("step_4.safetensors", join(dir, "step_4.safetensors"));
    symlinkSync("global_step_6", join(dir, "global_step_6"));
    writeFileSync(join(dir, "step_8"), "not a folder");
    symlinkSync("nowhere", join(dir, "iter_10"));
    // 5 of 12 steps unreadable: beyond the default 10 %, the run is refused, naming them.
    expect(() => diagnoseRun(dir, { threads: 1 })).toThrow(
      /at most 10 % of its steps unreadable .*5 of 12 step\(s\) in .* unreadable \(step_2\.pt\/: /,
    );
    const run = diagnoseRun(dir, { threads: 1, maxUnreadable: 1 });
    expect(run.steps.map((s) => s.step)).toEqual([0, 1, 3, 5, 7, 9, 11]);
    expect(run.stride).toBe(1);
    // Before, 2, 6, 8 and 10 were no steps: here named nowhere, the stride taken as 2 (alone, a
    // "1 dump(s) missing" gap).
    expect(run.problems.filter((p) => /missing/.test(p.message))).toEqual([]);
    const byStep = Object.fromEntries(run.problems.map((p) => [p.step, [p.file, p.message]]));
    expect(byStep[2]?.[0]).toBe("step_2.pt/");
    expect(byStep[2]?.[1]).toMatch(/^diagnoseRun: path must be a \.pt file; got a directory/);
    expect(byStep[4]?.[0]).toBe("step_4.safetensors");
    expect(byStep[4]?.[1]).toMatch(/got ELOOP/);
    expect(byStep[6]?.[0]).toBe("global_step_6");
    expect(byStep[6]?.[1]).toMatch(/got ELOOP/);
    expect(byStep[8]?.[0]).toBe("step_8");
    expect(byStep[8]?.[1]).toMatch(
      /must be a step folder, or a file named with a tensor extension/,
    );
    expect(byStep[10]?.[0]).toBe("iter_10");
    expect(byStep[10]?.[1]).toMatch(/got ENOENT/);
    expect(run.problems).toHaveLength(5);
    // The scan keeps them as step entries: those it can judge with their reason, the file-style
    // loop for the reader to reject; none is among the other entries.
    const scan = scanRunFolder(dir);
    expect(scan.entries.filter((e) => e.unreadable !== undefined).map((e) => e.step)).toEqual([
      2, 6, 8, 10,
    ]);
    expect(scan.entries.map((e) => e.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(scan.others.count).toBe(0);
  });

  test("regression: a junk file does not shadow a valid step of the same number; the first candidate by name that reads is diagnosed", () => {
    const dir = demo("shadow");
    // Step 3: junk step_03.json sorts before the valid step_3.safetensors (before: 11 of 12
    // steps diagnosed, step 3 unreadable). Step 5: two valid candidates; the first is diagnosed.
    copyFileSync(join(dir, file(3)), join(dir, "step_3.safetensors"));
    rmSync(join(dir, file(3)));
    writeFileSync(join(dir, "step_03.json"), "junk");
    copyFileSync(join(dir, file(5)), join(dir, "step_5.safetensors"));
    const run = diagnoseRun(dir, { threads: 1 });
    expect(run.steps).toHaveLength(12);
    expect(run.steps.find((s) => s.step === 3)?.file).toBe("step_3.safetensors");
    expect(run.steps.find((s) => s.step === 5)?.file).toBe(file(5));
    expect(run.problems.map((p) => [p.step, p.file])).toEqual([
      [3, "step_03.json"],
      [5, "step_5.safetensors"],
    ]);
    const [junk, other] = run.problems;
    expect(junk?.message).toMatch(/^diagnoseRun: json must be valid JSON/);
    expect(junk?.message).toMatch(/; step 3 is diagnosed from step_3\.safetensors$/);
    expect(other?.message).toBe(`step 5 is also in ${file(5)}; step_5.safetensors is ignored`);
    // Every candidate unreadable: the step is unreadable, each with its reason.
    writeFileSync(join(dir, "step_3.safetensors"), "junk too");
    const both = diagnoseRun(dir, { threads: 1 });
    expect(both.steps.map((s) => s.step)).not.toContain(3);
    expect(both.problems.filter((p) => p.step === 3).map((p) => p.file)).toEqual([
      "step_03.json",
      "step_3.safetensors",
    ]);
  });
});
