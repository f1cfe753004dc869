/**
 * Enforces docs/diagnostics/logs.md#the-command: `polgrad diagnose PATH` on a TRL output folder, a
 * verl JSONL log and TensorBoard folders (simple_value and tensor-style scalars) finds an
 * injected entropy collapse at its step and exits 1, exits 0 on a healthy run, writes the same
 * JSON document kind and an HTML report, and --follow reports an alarm on a log a writer process
 * appends to within one poll of the step.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { ALARM_CODES } from "../../src/diagnostics/diagnoseBatch.js";
import {
  collapsedRun,
  healthyRun,
  verlJsonl,
  writeAllFormats,
} from "../diagnostics/logs/_runKit.js";
import { BIN, runMain, SCHEMA_DIR } from "./_run.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run in each format under a fresh folder (writeAllFormats). */
function logsOf(run: ReturnType<typeof healthyRun>): Record<string, string> {
  return writeAllFormats(mkdtempSync(join(tmpdir(), "polgrad-cli-logs-")), run);
}

describe("diagnose on metric logs", () => {
  test("golden: a TRL output folder, a verl JSONL log and TensorBoard folders (both scalar styles) with an injected collapse exit 1 at its step", async () => {
    const collapsed = logsOf(collapsedRun(11, 150, 100));
    for (const [what, path] of Object.entries(collapsed)) {
      const r = await runMain(["diagnose", path, "--wide"]);
      expect({ what, code: r.code, stderr: r.stderr }).toEqual({ what, code: 1, stderr: "" });
      expect(r.stdout).toMatch(
        /alarms \(1\): \[entropy_collapse\] entropy_collapse: (train\/entropy|entropy|actor\/entropy) shifts by -0\.\d+ after step 100 beyond its trend/,
      );
    }
    const healthy = logsOf(healthyRun(createRng(5), 150, 0.02));
    for (const [what, path] of Object.entries(healthy)) {
      const r = await runMain(["diagnose", path]);
      expect({ what, code: r.code, tail: r.stdout.trim().split("\n").at(-1) }).toEqual({
        what,
        code: 0,
        tail: "alarms: none",
      });
    }
  });

  test("golden: runs recorded by the real writers (transformers TrainerState, verl's FileLogger, tensorboardX, torch new_style): the collapse exits 1 at step 100, the healthy run 0", async () => {
    const dir = fileURLToPath(new URL("../fixtures/logs/runs/", import.meta.url));
    const prov = JSON.parse(readFileSync(join(dir, "provenance.json"), "utf8")) as {
      files: Record<string, { sha256: string }>;
      runs: Record<string, { entropy_drop_after_step: number | null }>;
    };
    for (const [rel, f] of Object.entries(prov.files))
      expect({
        rel,
        sha256: createHash("sha256")
          .update(readFileSync(join(dir, rel)))
          .digest("hex"),
      }).toEqual({ rel, sha256: f.sha256 });
    expect(prov.runs.collapse?.entropy_drop_after_step).toBe(100);
    for (const what of ["trl", "verl/gsm8k/qwen_grpo.jsonl", "tb-simple", "tb-tensor"]) {
      const bad = await runMain(["diagnose", join(dir, "collapse", what), "--wide"]);
      expect({ what, code: bad.code, stderr: bad.stderr }).toEqual({ what, code: 1, stderr: "" });
      expect(bad.stdout).toMatch(
        /alarms \(1\): \[entropy_collapse\] entropy_collapse: (train\/entropy|entropy|actor\/entropy) shifts by -0\.4\d* after step 100 beyond its trend/,
      );
      const ok = await runMain(["diagnose", join(dir, "healthy", what)]);
      expect({ what, code: ok.code, tail: ok.stdout.trim().split("\n").at(-1) }).toEqual({
        what,
        code: 0,
        tail: "alarms: none",
      });
    }
  });

  test("golden: a TRL output folder that also logged to TensorBoard (runs/<name>/) is one run, diagnosed once; --format tensorboard reads the event files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-cli-logs-"));
    const paths = writeAllFormats(dir, collapsedRun(11, 150, 100));
    const out = paths.trainer_state as string;
    const tb = join(out, "runs", "Dec05_12-00-00_host");
    mkdirSync(tb, { recursive: true });
    writeFileSync(
      join(tb, "events.out.tfevents.1700000000.host"),
      readFileSync(
        join(
          dir,
          "tb-simple",
          "runs",
          "Dec05_12-00-00_host",
          "events.out.tfevents.1700000000.host",
        ),
      ),
    );
    const r = await runMain(["diagnose", out, "--json"]);
    const doc = JSON.parse(r.stdout) as {
      result: {
        runs: { run: string; format: string; files: { note?: string }[] }[];
        alarms: unknown[];
      };
    };
    expect(doc.result.runs.map((x) => [x.run, x.format])).toEqual([["", "trainer_state"]]);
    expect(doc.result.runs[0]?.files[0]?.note).toContain(
      "the same run's TensorBoard event files in runs/Dec05_12-00-00_host (the HF Trainer's TensorBoardCallback) are not read again (--format tensorboard reads them instead)",
    );
    expect(doc.result.alarms).toHaveLength(1);
    const t = await runMain(["diagnose", out, "--format", "tensorboard", "--json"]);
    expect(JSON.parse(t.stdout).result.runs.map((x: { run: string }) => x.run)).toEqual([
      "runs/Dec05_12-00-00_host",
    ]);
  });

  test("golden: --html and --json on logs: the alarm links to the entropy panel, the document validates", async () => {
    const { trainer_state: trl } = logsOf(collapsedRun(11, 150, 100));
    const html = join(mkdtempSync(join(tmpdir(), "polgrad-cli-logs-")), "r.html");
    const r = await runMain(["diagnose", trl as string, "--json", "--html", html]);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as {
      ok: boolean;
      result: { runs: { names: { mapped: Record<string, string> } }[]; alarms: unknown[] };
    };
    expect(doc.ok).toBe(false);
    expect(doc.result.runs[0]?.names.mapped.entropy).toBe("entropy");
    expect(doc.result.alarms).toEqual([
      {
        code: "entropy_collapse",
        step: 100,
        message: expect.stringMatching(/^entropy_collapse: entropy shifts by/),
      },
    ]);
    const page = readFileSync(html, "utf8");
    expect(page).toContain('<a href="#panel-0-entropy">entropy_collapse (step 100)');
    expect(page).toMatch(/id="panel-0-entropy"[\s\S]*data-alarm-steps="100"/);
    expect(r.stderr).toMatch(/^polgrad diagnose: wrote .*r\.html/);
  });

  test("golden: report LOGS --out writes the page diagnose --html writes for them", async () => {
    const { trainer_state: trl } = logsOf(collapsedRun(11, 150, 100));
    const dir = mkdtempSync(join(tmpdir(), "polgrad-cli-logs-"));
    const r = await runMain(["report", trl as string, "--out", join(dir, "a.html")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^wrote .*a\.html \(\d+ bytes\): the report of 1 logged run\(s\), 1 alarm\(s\)\n$/,
    );
    const d = await runMain(["diagnose", trl as string, "--html", join(dir, "b.html")]);
    expect(d.code).toBe(1);
    expect(readFileSync(join(dir, "a.html"), "utf8")).toBe(
      readFileSync(join(dir, "b.html"), "utf8"),
    );
  });

  test("identity: the schema's alarm codes are ALARM_CODES", () => {
    const schema = JSON.parse(readFileSync(join(SCHEMA_DIR, "diagnose.schema.json"), "utf8"));
    expect(schema.$defs.alarm.properties.code.enum).toEqual([...ALARM_CODES]);
  });

  test("rejects: a folder with both dumps and logs needs --format; tensor options and unknown runs and formats are usage errors", async () => {
    const { jsonl: verl } = logsOf(healthyRun(createRng(5), 40, 0.02));
    const dir = mkdtempSync(join(tmpdir(), "polgrad-cli-logs-"));
    writeFileSync(join(dir, "metrics.jsonl"), readFileSync(verl as string));
    writeFileSync(join(dir, "step_1.json"), JSON.stringify({ logprobs: [[-1]] }));
    const both = await runMain(["diagnose", dir]);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe("");
    expect(both.stderr).toMatch(
      /--format must say how to read .*, which holds both per-step dumps \(step_1\.json\) and metric logs/,
    );
    const asLogs = await runMain(["diagnose", dir, "--format", "jsonl"]);
    expect(asLogs.code).toBe(0);
    // report reads PATH the same way, with the same --format.
    const page = join(mkdtempSync(join(tmpdir(), "polgrad-cli-logs-")), "p.html");
    const rep = await runMain(["report", dir, "--out", page]);
    expect([rep.code, rep.stdout]).toEqual([2, ""]);
    expect(rep.stderr).toMatch(/polgrad report: --format must say how to read/);
    expect((await runMain(["report", dir, "--format", "jsonl", "--out", page])).code).toBe(0);
    for (const [args, re] of [
      [
        ["--clip", "0.2,0.2"],
        /--clip must come with per-step tensor dumps or a batch, not metric logs/,
      ],
      [
        ["--run", "metrix"],
        /--run must be names of the runs found \("metrics"\) \(did you mean "metrics"\?\); got "metrix"/,
      ],
      [
        ["--format", "tensorbord"],
        /--format must be one of tensorboard, jsonl, trainer_state, wandb, dumps \(did you mean "tensorboard"\?\)/,
      ],
      [["--names", "verl@nope"], /--names release must be one of "v0\.4\.1", .*; got "nope"/],
      [
        ["--only", "entropy_colapse"],
        /--only must be detector names .*\(did you mean "entropy_collapse"\?\)/,
      ],
    ] as const) {
      const base = args[0] === "--format" ? [dir] : [dir, "--format", "jsonl"];
      const r = await runMain(["diagnose", ...base, ...args]);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toMatch(re);
    }
  });

  test("golden: --follow reports the collapse of a log a writer process appends to within one poll of the step; Ctrl-C prints the summary and exits 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-cli-follow-logs-"));
    const lines = verlJsonl(collapsedRun(11, 150, 100))
      .trimEnd()
      .split("\n");
    const path = join(dir, "verl.jsonl");
    writeFileSync(path, "");
    // The writer: another process that appends one step every 20 ms, as verl's FileLogger does.
    const writer = spawn(
      process.execPath,
      [
        "-e",
        `const fs=require("fs");const lines=JSON.parse(process.argv[1]);let i=0;const t=setInterval(()=>{fs.appendFileSync(process.argv[2],lines[i]+"\\n");process.stdout.write(Date.now()+" "+(i+1)+"\\n");if(++i===lines.length)clearInterval(t);},20);`,
        JSON.stringify(lines),
        path,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const written = new Map<number, number>();
    writer.stdout.on("data", (d: Buffer) => {
      for (const l of d.toString().trim().split("\n")) {
        const [at, step] = l.split(" ").map(Number);
        written.set(step as number, at as number);
      }
    });
    const child = spawn(
      process.execPath,
      [BIN, "diagnose", path, "--follow", "--poll", "0.25", "--wide"],
      {
        env: { ...process.env, NO_COLOR: "1" },
      },
    );
    let stdout = "";
    let stderr = "";
    let seenAt = 0;
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (seenAt === 0 && stdout.includes("[entropy_collapse]")) seenAt = Date.now();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const done = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    await new Promise<void>((resolve) => writer.on("close", () => resolve()));
    for (let i = 0; i < 50 && seenAt === 0; i++) await sleep(100);
    await sleep(600);
    child.kill("SIGINT");
    expect(await done).toBe(1);
    const alarmLines = stdout.split("\n").filter((l) => /^step \d+: \[entropy_collapse\]/.test(l));
    expect(alarmLines).toHaveLength(1);
    expect(alarmLines[0]).toMatch(
      /^step 100: \[entropy_collapse\] entropy_collapse: actor\/entropy shifts by/,
    );
    // The alarm needs about 20 steps after the drop to pass its test: the step that made it fire
    // was written at most one poll (0.25 s) plus a read before it was printed.
    const firedBy = [...written.entries()].filter(([, at]) => at <= seenAt).map(([s]) => s);
    const lastBefore = Math.max(...firedBy);
    expect(seenAt - (written.get(lastBefore) as number)).toBeLessThan(250 + 1000);
    expect(stdout).toContain("steps 1..150 (150)");
    expect(stderr).toBe("");
  }, 60_000);
});
