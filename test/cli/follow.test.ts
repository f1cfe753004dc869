/**
 * Enforces docs/diagnostics/run.md#following-a-run: `polgrad diagnose RUN --follow` reads the steps
 * a training process adds, prints an alarm once, within a poll of the step that makes it fire,
 * and on Ctrl-C (or --until-step) prints the summary and exits with the usual code.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { BIN } from "./_run.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The demo run (entropy drop after step 139) and an empty folder a "trainer" copies it into. */
function demoAndLive(): { all: string; live: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "polgrad-follow-"));
  const all = join(dir, "all");
  writeDemoRun(all, { steps: 200, batchSize: 6, width: 10 });
  const live = join(dir, "live");
  mkdirSync(live);
  return { all, live, files: readdirSync(all).sort() };
}

/** Start `diagnose --follow` and collect its output as it comes. */
function follow(args: readonly string[]) {
  const child = spawn(process.execPath, [BIN, "diagnose", ...args], {
    env: { ...process.env, NO_COLOR: "1" },
  });
  const out = { stdout: "", stderr: "", lines: [] as { at: number; text: string }[] };
  child.stdout.on("data", (d: Buffer) => {
    out.stdout += d.toString();
    for (const text of d
      .toString()
      .split("\n")
      .filter((x) => x !== ""))
      out.lines.push({ at: Date.now(), text });
  });
  child.stderr.on("data", (d: Buffer) => {
    out.stderr += d.toString();
  });
  const done = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  return { child, out, done };
}

describe("diagnose --follow", () => {
  test("golden: an entropy collapse in a run being written is reported once, within a poll of its step; Ctrl-C prints the summary and exits 1", async () => {
    const { all, live, files } = demoAndLive();
    const f = follow([live, "--follow", "--poll", "0.2", "--only", "entropy_collapse"]);
    // The trainer writes steps 0..159: the drop after step 139 is then 20 steps old.
    for (const name of files.slice(0, 160)) copyFileSync(join(all, name), join(live, name));
    const written = Date.now();
    let seen: { at: number; text: string } | undefined;
    for (let i = 0; i < 100 && seen === undefined; i++) {
      await sleep(100);
      seen = f.out.lines.find((l) => l.text.includes("[entropy_collapse]"));
    }
    expect(seen?.text).toMatch(
      /^step 1[34]\d: \[entropy_collapse\] entropy_collapse: entropy estimate shifts by -0\.\d+ after step 1[34]\d/,
    );
    // Within a poll (0.2 s) of the write, and the time to read 160 small steps.
    expect((seen?.at as number) - written).toBeLessThan(5000);
    // More steps: the alarm is not printed again.
    for (const name of files.slice(160, 180)) copyFileSync(join(all, name), join(live, name));
    await sleep(800);
    f.child.kill("SIGINT");
    expect(await f.done).toBe(1);
    expect(
      f.out.lines.filter(
        (l) => l.text.startsWith("step ") && l.text.includes("[entropy_collapse]"),
      ),
    ).toHaveLength(1);
    // The summary: the usual report of the run as read, 180 steps.
    expect(f.out.stdout).toContain("180 step(s) diagnosed (steps 0..179)");
    expect(f.out.stderr).toBe("");
  }, 60_000);

  test("golden: --until-step ends the follow by itself; a healthy start exits 0 with --json", async () => {
    const { all, live, files } = demoAndLive();
    for (const name of files.slice(0, 60)) copyFileSync(join(all, name), join(live, name));
    const f = follow([
      live,
      "--follow",
      "--poll",
      "0.2",
      "--until-step",
      "50",
      "--only",
      "entropy_collapse",
      "--json",
    ]);
    expect(await f.done).toBe(0);
    const doc = JSON.parse(f.out.stdout) as { ok: boolean; result: { steps: unknown[] } };
    expect(doc.ok).toBe(true);
    expect(doc.result.steps).toHaveLength(60);
  }, 60_000);
});
