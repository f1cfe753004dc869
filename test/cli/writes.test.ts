/**
 * Enforces docs/cli.md#writing-files: every file polgrad writes is written beside its destination
 * and renamed onto it (a failed write leaves the old file; a link is never written through; the
 * mode is kept), an output is never one of the command's inputs nor inside a folder it reads,
 * demo-run never replaces a file it did not write, and a large `--json` document reaches a slow
 * pipe whole. Each regression reproduces a finding of issue 31.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { readBatch } from "../../src/io/readBatch.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { getAlgorithm } from "../../src/registry/index.js";
import { useTmpDir } from "../io/_kit.js";
import { BIN, contractViolations, runBin } from "./_run.js";

const tmp = useTmpDir();

/** A ragged B×T batch (masked and reference logprobs included, for PAPO) written as safetensors. */
function batchFile(path: string, B = 6, T = 9): string {
  const n = B * T;
  let s = 7;
  const u = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const lp = Array.from({ length: n }, () => -0.2 - 2 * u());
  const mask = Array.from({ length: n }, (_, i) => (i % T < 1 + (((i / T) | 0) % T) ? 1 : 0));
  writeSafetensors(path, {
    logprobs: { dtype: "F64", shape: [B, T], data: lp },
    old_logprobs: { dtype: "F64", shape: [B, T], data: lp.map((x) => x - 0.1 + 0.2 * u()) },
    masked_logprobs: { dtype: "F64", shape: [B, T], data: lp.map((x) => x - 0.3) },
    ref_logprobs: { dtype: "F64", shape: [B, T], data: lp.map((x) => x - 0.05) },
    advantages: { dtype: "F64", shape: [B], data: Array.from({ length: B }, () => 2 * u() - 1) },
    response_mask: { dtype: "BOOL", shape: [B, T], data: mask },
  });
  return path;
}

/** Every file below `dir` with its bytes (hidden temporary files included). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (lstatSync(p).isFile()) out.set(name, readFileSync(p).toString("base64"));
  }
  return out;
}

/** Run the binary under bash with a file-size limit of `kib` KiB (writes past it fail with EFBIG). */
function underFileLimit(kib: number, args: readonly string[]) {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const r = spawnSync(
    "bash",
    ["-c", `ulimit -f ${kib}; exec "${process.execPath}" '${BIN}' ${quoted}`],
    {
      encoding: "utf8",
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("never over an input", () => {
  test("regression: loss --out onto its own --batch is refused before anything is read or written, on every path", () => {
    const dir = tmp("self");
    mkdirSync(dir);
    const x = batchFile(join(dir, "batch.safetensors"));
    const before = snapshot(dir);
    for (const extra of [
      [],
      ["--threads", "2"],
      ["--json"],
      ["--framework", "verl@1dda039b:token-mean"],
    ]) {
      const algo = extra[0] === "--framework" ? [] : ["--algorithm", "dapo"];
      const r = runBin(["loss", ...algo, "--batch", x, "--out", x, ...extra]);
      expect(contractViolations(r, 2), extra.join(" ")).toEqual([]);
      expect(r.stderr).toContain("--out must not be an input of the command");
      expect(r.stderr).toContain("the --batch file it reads");
      expect(snapshot(dir)).toEqual(before);
    }
    // The same file by another name (a hard link's twin is the same inode; a symlink resolves).
    symlinkSync(x, join(dir, "alias.safetensors"));
    const r = runBin([
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      join(dir, "alias.safetensors"),
      "--out",
      x,
    ]);
    expect(contractViolations(r, 2)).toEqual([]);
    expect(snapshot(dir)).toEqual(before);
  });

  test("regression: report --out onto its batch, and diagnose --summary-out or --html into the run it reads, are refused", () => {
    const dir = tmp("run-out");
    mkdirSync(dir);
    const x = batchFile(join(dir, "batch.safetensors"));
    const run = join(dir, "run");
    expect(
      runBin(["demo-run", run, "--steps", "5", "--batch-size", "3", "--width", "4"]).code,
    ).toBe(0);
    const before = snapshot(dir);
    const cases = [
      ["report", x, "--out", x],
      ["diagnose", run, "--steps", "0-2", "--summary-out", join(run, "step_000003.safetensors")],
      ["diagnose", run, "--html", join(run, "step_000003.safetensors")],
      ["diagnose", run, "--html", join(run, "new-report.html")],
    ];
    for (const args of cases) {
      const r = runBin(args);
      expect(contractViolations(r, 2), args.join(" ")).toEqual([]);
      expect(r.stderr, args.join(" ")).toMatch(/must not be an input of the command/);
      expect(snapshot(dir), args.join(" ")).toEqual(before);
    }
  });

  test("regression: demo-run refuses a folder that is not empty, and with --force never replaces a file it did not write", () => {
    const dir = tmp("demo-user");
    mkdirSync(dir);
    batchFile(join(dir, "step_000000.safetensors"));
    const before = snapshot(dir);
    for (const force of [[], ["--force"]]) {
      const r = runBin(["demo-run", dir, "--steps", "3", ...force]);
      expect(contractViolations(r, 2), force.join(" ")).toEqual([]);
      expect(r.stderr).toContain(force.length === 0 ? "empty folder" : "did not write");
      expect(snapshot(dir)).toEqual(before);
    }
    // An earlier demo run: --force replaces its steps and removes the ones the new run lacks.
    const demo = tmp("demo-own");
    expect(runBin(["demo-run", demo, "--steps", "6", "--width", "4"]).code).toBe(0);
    writeFileSync(join(demo, "notes.txt"), "mine");
    expect(runBin(["demo-run", demo, "--steps", "3", "--width", "4"]).code).toBe(2);
    expect(runBin(["demo-run", demo, "--steps", "3", "--width", "4", "--force"]).code).toBe(0);
    expect(readdirSync(demo).sort()).toEqual([
      "notes.txt",
      "step_000000.safetensors",
      "step_000001.safetensors",
      "step_000002.safetensors",
    ]);
  });
});

describe("atomic writes", () => {
  test("regression: a write that fails half-way (EFBIG) leaves the previous file of every writing command, and no temporary file", () => {
    const dir = tmp("efbig");
    mkdirSync(dir);
    const x = batchFile(join(dir, "batch.safetensors"), 40, 300);
    const run = join(dir, "run");
    expect(
      runBin(["demo-run", run, "--steps", "4", "--batch-size", "8", "--width", "16"]).code,
    ).toBe(0);
    const out = join(dir, "out");
    mkdirSync(out);
    const vec = join(out, "vectors");
    expect(
      runBin(["vectors", "emit", "--algorithm", "dapo", "--cases", "3", "--out", vec]).code,
    ).toBe(0);
    // Each destination holds an earlier, complete file.
    const old = "an earlier complete file\n";
    const dest = (name: string) => {
      const p = join(out, name);
      writeFileSync(p, old);
      return p;
    };
    const cases: string[][] = [
      [
        "loss",
        "--algorithm",
        "dapo",
        "--batch",
        x,
        "--out",
        dest("a.safetensors"),
        "--threads",
        "2",
      ],
      ["loss", "--algorithm", "dapo", "--batch", x, "--out", dest("b.safetensors")],
      [
        "loss",
        "--framework",
        "verl@1dda039b:token-mean",
        "--batch",
        x,
        "--out",
        dest("c.safetensors"),
      ],
      ["loss", "--algorithm", "papo_g", "--batch", x, "--out", dest("d.safetensors")],
      ["report", x, "--out", dest("e.html")],
      ["diagnose", run, "--html", dest("f.html")],
      ["diagnose", run, "--summary-out", dest("g.json")],
      ["vectors", "emit", "--algorithm", "grpo", "--cases", "50", "--out", vec],
    ];
    const before = snapshot(out);
    for (const args of cases) {
      const r = underFileLimit(2, args);
      expect([args.join(" "), r.code], r.stderr).toEqual([args.join(" "), 2]);
      expect(r.stderr, args.join(" ")).toMatch(/EFBIG/);
      expect(r.stdout, args.join(" ")).toBe("");
      expect(snapshot(out), args.join(" ")).toEqual(before);
    }
  });

  test("regression: a link planted at the destination or at the old predictable temporary name is never written through", () => {
    const dir = tmp("links");
    mkdirSync(dir);
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "do not touch");
    // The destination itself is a link: refused, nothing written.
    const link = join(dir, "out.safetensors");
    symlinkSync(victim, link);
    const x = batchFile(join(dir, "batch.safetensors"));
    const r = runBin(["loss", "--algorithm", "dapo", "--batch", x, "--out", link]);
    expect(contractViolations(r, 2)).toEqual([]);
    expect(r.stderr).toContain("never writes through a link");
    expect(readFileSync(victim, "utf8")).toBe("do not touch");
    // The old temporary name (.NAME.PID.polgrad-partial) planted as a link for this process: the
    // writer's name is random and created exclusively, so the link is never opened.
    const dest = join(dir, "result.safetensors");
    symlinkSync(victim, join(dir, `.result.safetensors.${process.pid}.polgrad-partial`));
    writeSafetensors(dest, { x: { dtype: "F64", shape: [2], data: [1, 2] } });
    expect(readFileSync(victim, "utf8")).toBe("do not touch");
    expect(statSync(dest).size).toBeGreaterThan(8);
  });

  test("regression: the destination's mode is kept (0600 stays 0600) on the row path and the whole path", () => {
    const dir = tmp("mode");
    mkdirSync(dir);
    const x = batchFile(join(dir, "batch.safetensors"));
    for (const extra of [[], ["--threads", "2"]]) {
      const out = join(dir, `out${extra.length}.safetensors`);
      writeFileSync(out, "old");
      chmodSync(out, 0o600);
      const r = runBin(["loss", "--algorithm", "dapo", "--batch", x, "--out", out, ...extra]);
      expect(r.code, r.stderr).toBe(0);
      expect(statSync(out).mode & 0o777, extra.join(" ")).toBe(0o600);
    }
    expect(readdirSync(dir).filter((f) => f.includes("polgrad-partial"))).toEqual([]);
  });
});

describe("large output", () => {
  test("regression: loss --json of a 300x3000 batch through a pipe reaches the reader whole", () => {
    const dir = tmp("pipe");
    mkdirSync(dir);
    const x = batchFile(join(dir, "batch.safetensors"), 300, 3000);
    const json = join(dir, "out.json");
    const r = spawnSync(
      "bash",
      [
        "-c",
        `"${process.execPath}" '${BIN}' loss --algorithm dapo --batch '${x}' --json | cat > '${json}'; exit \${PIPESTATUS[0]}`,
      ],
      { encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(json, "utf8")) as {
      result: { loss: number; grad_logprobs: number[][] };
    };
    expect(doc.result.grad_logprobs.length).toBe(300);
    const direct = policyLoss(getAlgorithm("dapo").loss, readBatch(x));
    expect(doc.result.loss).toBe(direct.loss);
    expect(existsSync(json)).toBe(true);
  });
});
