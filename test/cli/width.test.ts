/**
 * Enforces docs/cli.md#width (issue 35, point 2): every command's default text output fits 100
 * columns, on the README's examples and on a real-sized 128×1024 batch; tables too wide are
 * summarised (which, loss), the rest wrapped; help texts wrap at the terminal's width; --wide
 * keeps everything; --json, --markdown and the arguments after `--` are untouched.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import { fitText } from "../../src/cli/textWidth.js";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { asSafetensors, realSizedBatch } from "../_kit/realSizedBatch.js";
import { collapsedRun, writeAllFormats } from "../diagnostics/logs/_runKit.js";
import { runMain } from "./_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-width-"));
const big = join(dir, "b128x1024.safetensors");
const small = join(dir, "b4.json");

/** Code points per line (the output has no wide or combining characters). */
const widest = (text: string) => Math.max(0, ...text.split("\n").map((l) => [...l].length));

async function run(args: readonly string[], columns?: number) {
  return runMain(args, columns === undefined ? {} : { columns });
}

beforeAll(() => {
  // A real-sized ragged batch: B = 128 sequences of up to T = 1024 tokens.
  writeFileSync(big, encodeSafetensors(asSafetensors(realSizedBatch())));
  writeFileSync(
    small,
    JSON.stringify({
      logprobs: [
        [-1, -1.2],
        [-0.7, -0.9],
        [-0.3, -2],
        [-1.1, -0.6],
      ],
      old_logprobs: [
        [-1.1, -1],
        [-0.8, -1],
        [-0.2, -1.9],
        [-1, -0.7],
      ],
      advantages: [1, -0.5, 0.5, -1],
      response_mask: [
        [1, 1],
        [1, 0],
        [1, 1],
        [1, 1],
      ],
    }),
  );
  writeDemoRun(join(dir, "demo"), { steps: 30, batchSize: 6, width: 10 });
  writeAllFormats(join(dir, "logs"), collapsedRun(11, 150, 100));
  mkdirSync(join(dir, "out"), { recursive: true });
});

describe("text width", () => {
  test("golden: no command's default text output exceeds 100 columns (the README's examples, a 128×1024 batch, a run, logs, every listing)", async () => {
    const invocations: string[][] = [
      ["which"],
      ["which", "--batch", big],
      ["which", "--batch", small],
      ["loss", "--algorithm", "dapo", "--batch", big],
      ["loss", "--algorithm", "dr_grpo", "--norm-len", "4096", "--batch", big],
      ["loss", "--algorithm", "dapo", "--batch", big, "--out", join(dir, "out", "t.safetensors")],
      ["diagnose", big],
      ["diagnose", join(dir, "demo")],
      ["diagnose", join(dir, "logs", "trl")],
      ["diagnose", join(dir, "logs")],
      ["verify", "--algorithm", "grpo", "--cases", "2"],
      ["explain", "--framework", "trl@v1.9.0", "--", "--beta", "0.04"],
      ["explain", "--diff", "trl@v0.16.0", "trl@v1.9.0"],
      ["history", "trl", "--key", "loss_type"],
      ["history", "verl"],
      ["frameworks"],
      ["deviations"],
      ["deviations", "--pairs"],
      ["contracts"],
      ["algorithms"],
      ["describe", "gspo"],
      ["coverage"],
    ];
    for (const args of invocations) {
      const r = await run(args);
      expect({ args, code: (r.code ?? 2) <= 1, widest: widest(r.stdout) <= 100 }).toEqual({
        args,
        code: true,
        widest: true,
      });
    }
  }, 120_000);

  test("golden: a batch too wide for per-sequence columns gets its spread and top sequences; --wide keeps every column", async () => {
    const r = await run(["which", "--batch", big]);
    expect(r.stdout).toMatch(/configuration +loss +mass min +median +max\n/);
    expect(r.stdout).toMatch(/\n {4}top: s\d+ \(L=\d+\) \d\.\d{5}, s\d+ \(L=\d+\) \d\.\d{5}, s\d+/);
    expect(r.stdout).toMatch(/\nlongest s\d+ \(L=\d+\), /);
    const wide = await run(["which", "--batch", big, "--wide"]);
    expect(wide.stdout).toContain("seq127 L=");
    expect(widest(wide.stdout)).toBeGreaterThan(1000);
    // The README's table keeps its columns: four sequences fit.
    expect((await run(["which"])).stdout).toMatch(
      /loss {2}seq0 L=2 {2}seq1 L=4 {2}seq2 L=6 {2}seq3 L=8\n/,
    );
    const loss = await run(["loss", "--algorithm", "dapo", "--batch", big]);
    expect(loss.stdout).toMatch(
      /\ngrad mass {5}min \S+, median \S+, max \S+ over 128 sequences; top s\d+ \S+,\s+s\d+ \S+,\s+s\d+ \S+/,
    );
  });

  test("golden: help wraps at the terminal's width, descriptions aligned, usage lines between their groups", async () => {
    for (const columns of [60, 100, 140]) {
      for (const cmd of COMMANDS) {
        const r = await run([cmd.name, "--help"], columns);
        expect({ cmd: cmd.name, columns, fits: widest(r.stdout) <= columns }).toEqual({
          cmd: cmd.name,
          columns,
          fits: true,
        });
      }
      expect(widest((await run(["--help"], columns)).stdout)).toBeLessThanOrEqual(columns);
    }
    // Usage lines break between groups, never inside a group's brackets.
    for (const cmd of COMMANDS) {
      const usage = (await run([cmd.name, "--help"], 100)).stdout.split("\n\n")[0] as string;
      for (const line of usage.split("\n")) {
        const depth = [...line].reduce((d, c) => d + (c === "[" ? 1 : c === "]" ? -1 : 0), 0);
        expect({ cmd: cmd.name, line, depth }).toEqual({ cmd: cmd.name, line, depth: 0 });
      }
    }
    const h = (await run(["diagnose", "--help"], 100)).stdout.split("\n");
    const first = h.findIndex((l) => l.startsWith("  --follow"));
    const at = (h[first] as string).indexOf("follow a run");
    // The description's next line starts under its first.
    expect((h[first + 1] as string).slice(0, at).trim()).toBe("");
    expect((h[first + 1] as string)[at]).not.toBe(" ");
  });

  test("golden: --json and --markdown are never wrapped", async () => {
    const md = await run(["coverage", "--markdown"]);
    expect(widest(md.stdout)).toBeGreaterThan(100);
    // A 40-column terminal changes no byte of a --json document.
    const j = await run(["which", "--batch", small, "--json"], 40);
    expect(j.stdout).toBe((await run(["which", "--batch", small, "--json"])).stdout);
    expect(widest(j.stdout)).toBeGreaterThan(40);
    expect(JSON.parse(j.stdout).command).toBe("which");
  });

  test("property: fitText keeps every non-space character in order and every line within the width", () => {
    const text =
      "  a line of prose that goes on and on well past the width of any terminal somebody uses\nshort\n" +
      `x${"y".repeat(250)} tail`;
    for (const w of [40, 57, 100]) {
      const out = fitText(text, w);
      expect(widest(out)).toBeLessThanOrEqual(w);
      expect(out.replace(/\s+/g, "")).toBe(text.replace(/\s+/g, ""));
    }
    expect(fitText(text, Number.POSITIVE_INFINITY)).toBe(text);
  });
});
