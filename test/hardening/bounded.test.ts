/**
 * Enforces docs/cli.md#bounds and docs/io.md#readers (issue 9, "bounded everything"): no user
 * file kind, nesting, size, budget or string can hang polgrad, crash it, or print more than one
 * short, escaped error line. Cases that would block forever if the fix regressed (a FIFO, a
 * folder under /proc) run the built binary in a child process with a 20 s timeout, so that a
 * regression fails the test instead of hanging the runner (requires `npm run build`, as the
 * test script does); everything else runs in process through the CLI's `main`. Both go through
 * the shared runner test/cli/_run.ts, which validates every `--json` document against its schema.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { driftCheck } from "../../src/conformance/drift.js";
import { MAX_PYTHON_SOURCE_BYTES } from "../../src/conformance/python/checkout.js";
import { extractDefinitions } from "../../src/conformance/python/definitions.js";
import { checkContract } from "../../src/contracts/signature.js";
import { closestNames } from "../../src/core/names.js";
import { DEMO_RUN_LIMITS, demoRunPlan, writeDemoRun } from "../../src/demo/demoRun.js";
import {
  ConfigError,
  IoError,
  PolgradError,
  parsePolicyLossConfig,
  readTensors,
  tensorsFromJson,
} from "../../src/index.js";
import { parseStrictJson } from "../../src/io/_internal/strictJson.js";
import { ALGORITHMS } from "../../src/registry/index.js";
import { gradcheckLoss } from "../../src/verify/gradcheckLoss.js";
import { checkAgainstReference } from "../../src/verify/referenceCheck.js";
import { type BinRun, type CliRun, runBin, runMain } from "../cli/_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-bounded-"));
const path = (name: string) => join(dir, name);
const hasMkfifo = spawnSync("mkfifo", ["--version"]).status === 0;

/**
 * Run the built CLI in a child process through the shared runner (`--json` documents validated);
 * a hang is a timeout (`timedOut`), never a stuck runner.
 */
function spawnCli(...args: string[]): BinRun {
  return runBin(args, { timeoutMs: 20_000 });
}

/** Run a library call from the built dist in a child process; prints the error's name and code. */
function spawnLib(module: string, call: string) {
  const url = new URL(`../../dist/${module}`, import.meta.url).href;
  const script = `import(${JSON.stringify(url)}).then((m) => { try { ${call}; console.log("NO ERROR"); } catch (e) { console.log(e.name, e.code); console.log(e.message); } })`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 20_000,
  });
  return { stdout: r.stdout, timedOut: r.error !== undefined };
}

/** Run the CLI in process through the shared runner and capture its streams. */
function cli(...args: string[]): Promise<CliRun> {
  return runMain(args);
}

function fifo(name: string): string {
  const p = path(name);
  if (!existsSync(p)) expect(spawnSync("mkfifo", [p]).status).toBe(0);
  return p;
}

const BATCH = {
  logprobs: [
    [-0.2, -1.0],
    [-0.5, 123],
  ],
  old_logprobs: [
    [-0.5, -0.7],
    [-0.6, 123],
  ],
  advantages: [1.5, -0.8],
  response_mask: [
    [1, 1],
    [1, 0],
  ],
};

/** A one-line stderr: `error[E_…]: …` and nothing else (no raw newline, no stack). */
function expectOneErrorLine(stderr: string, code: string): string {
  const lines = stderr.split("\n").filter((l) => l !== "" && !l.startsWith("Hint: "));
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^error\\[${code}\\]: `));
  return lines[0] as string;
}

function deepArray(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe("file readers", () => {
  test.skipIf(!hasMkfifo)(
    "regression: a fifo, a directory and a device are rejected before open",
    () => {
      // A FIFO: opening it for reading would block until a writer comes (forever).
      const f = fifo("lib.json");
      for (const call of [
        `m.readTensors(${JSON.stringify(f)})`,
        `m.readBatch(${JSON.stringify(f)})`,
        `m.readJsonFile(${JSON.stringify(f)}, "t")`,
        `m.readSafetensors(${JSON.stringify(f)})`,
      ]) {
        const r = spawnLib("io/index.js", call);
        expect(r.timedOut, call).toBe(false);
        expect(r.stdout, call).toContain("IoError E_IO");
        expect(r.stdout, call).toContain("must be a regular file; got a FIFO");
      }
      // A directory and a character device are rejected in process (neither blocks anyway).
      const d = path("folder.json");
      mkdirSync(d, { recursive: true });
      // A folder is a batch of tensor files (docs/io.md#folders-and-standard-input); one
      // without any is an IoError naming what it must hold.
      expect(() => readTensors(d)).toThrow(/a folder of tensor files .*; got a folder with none/);
      if (existsSync("/dev/zero"))
        expect(() => readTensors("/dev/zero")).toThrow(/a regular file; got a character device/);
    },
  );

  test.skipIf(!hasMkfifo)(
    "regression: a fifo as --batch or --config @fifo exits 2 without blocking",
    () => {
      const f = fifo("batch.json");
      const good = path("good.json");
      writeFileSync(good, JSON.stringify(BATCH));
      for (const args of [
        ["loss", "--algorithm", "ppo", "--batch", f],
        ["which", "--batch", f],
        ["loss", "--config", `@${f}`, "--batch", good],
        ["verify", "--config", `@${f}`],
        ["contract", "reduce", "dual_clip_to_pg_clip", "--batch", f, "--precision", "fp64"],
      ]) {
        const r = spawnCli(...args);
        expect(r.timedOut, args.join(" ")).toBe(false);
        expect(r.code, args.join(" ")).toBe(2);
        expect(r.stdout).toBe("");
        expect(expectOneErrorLine(r.stderr, "E_IO")).toContain("got a FIFO");
      }
    },
  );
});

describe("run folders", () => {
  test.skipIf(!hasMkfifo)(
    "regression: a fifo step is one unreadable step and the good steps are diagnosed",
    () => {
      const run = path("run-fifo");
      writeDemoRun(run, { steps: 4, batchSize: 4, width: 6 });
      expect(spawnSync("mkfifo", [join(run, "step_000004.safetensors")]).status).toBe(0);
      // 1 of 5 steps unreadable: allowed here (the default refuses more than 10 %).
      const r = spawnCli("diagnose", run, "--json", "--max-unreadable", "0.25");
      expect(r.timedOut).toBe(false);
      expect(r.stderr).toBe("");
      const doc = JSON.parse(r.stdout) as {
        result: { steps: { step: number }[]; problems: { file: string; message: string }[] };
      };
      expect(doc.result.steps.map((s) => s.step)).toEqual([0, 1, 2, 3]);
      expect(doc.result.problems).toHaveLength(1);
      expect(doc.result.problems[0]?.file).toBe("step_000004.safetensors");
      expect(doc.result.problems[0]?.message).toContain("got a FIFO");
    },
  );

  test("regression: a folder where every step is unreadable exits 2 with one e_io line", async () => {
    const run = path("run-bad");
    mkdirSync(run);
    writeFileSync(join(run, "step_1.json"), "{");
    writeFileSync(join(run, "step_2.safetensors"), Buffer.from([1, 2, 3]));
    const r = await cli("diagnose", run);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const line = expectOneErrorLine(r.stderr, "E_IO");
    expect(line).toContain("2 step(s) in");
    expect(line).toContain("none diagnosed: step_1.json: ");
    expect(line).toContain(run);
    // Under --json the error is the one JSON line on stderr, and stdout stays empty.
    const j = await cli("diagnose", run, "--json");
    expect(j.code).toBe(2);
    expect(j.stdout).toBe("");
    expect(JSON.parse(j.stderr).error.code).toBe("E_IO");
  });
});

describe("deep json", () => {
  test("regression: --config nested 60000 deep is a usage or io error, inline and as a file", async () => {
    const deep = `${"[".repeat(60_000)}${"]".repeat(60_000)}`;
    const inline = await cli("loss", "--config", deep, "--batch", path("none.json"));
    expect(inline.code).toBe(2);
    expect(expectOneErrorLine(inline.stderr, "E_USAGE")).toContain("nest at most 256 deep");
    const open = await cli("verify", "--config", "[".repeat(60_000));
    expect(open.code).toBe(2);
    expectOneErrorLine(open.stderr, "E_USAGE");
    writeFileSync(path("deep.json"), `{"ratio": ${deep}}`);
    const file = await cli("loss", "--config", `@${path("deep.json")}`, "--batch", "x.json");
    expect(file.code).toBe(2);
    expect(expectOneErrorLine(file.stderr, "E_IO")).toContain("nest at most 256 deep");
  });

  test("regression: the strict parser is iterative and parses 100000 levels when allowed", () => {
    // A recursive descent parser overflows V8's stack near 10^4 levels; the explicit stack does not.
    const r = parseStrictJson(`${"[".repeat(100_000)}1${"]".repeat(100_000)}`, 100_000);
    expect(r.ok).toBe(true);
    let v = (r as { value: unknown }).value;
    let depth = 0;
    while (Array.isArray(v)) {
      v = v[0];
      depth++;
    }
    expect([depth, v]).toEqual([100_000, 1]);
    const capped = parseStrictJson(`${"[".repeat(100_000)}`);
    expect(capped.ok).toBe(false);
    // The cap trips at the 257th '[' (offset 256, column 257).
    expect(capped.ok === false && capped.column).toBe(257);
  });

  test("regression: tensorsFromJson rejects arrays nested 1e5 deep in memory with an IoError", () => {
    expect(() => tensorsFromJson({ logprobs: deepArray(100_000) }, "mem")).toThrow(IoError);
    expect(() => tensorsFromJson({ logprobs: deepArray(100_000) }, "mem")).toThrow(
      /nested at most 256 deep/,
    );
    // A cyclic array would otherwise be followed forever.
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => tensorsFromJson({ logprobs: cyclic }, "mem")).toThrow(IoError);
    // 256 levels are still a (256-D) tensor.
    expect(tensorsFromJson({ x: deepArray(256) }, "mem").tensors.get("x")?.shape).toHaveLength(256);
  });

  test("regression: parsePolicyLossConfig rejects json nested 1e5 deep in memory with a typed error", () => {
    for (const json of [
      deepArray(100_000),
      { ratio: deepArray(100_000) },
      { ratio: "token", surrogate: "pg", aggregation: "token_mean", clip: deepArray(100_000) },
      {
        ratio: "token",
        surrogate: "pg",
        aggregation: "token_mean",
        kl: { kind: "k3", coef: deepArray(100_000) },
      },
    ]) {
      let caught: unknown;
      try {
        parsePolicyLossConfig(json, "mem");
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as Error).message.length).toBeLessThan(400);
    }
  });
});

describe("python sources", () => {
  const CORE = "verl/trainer/ppo/core_algos.py";
  const GRPO = "trl/trainer/grpo_trainer.py";
  const checkout = (name: string, file: string, text: string | null): string => {
    const co = path(name);
    mkdirSync(join(co, file, ".."), { recursive: true });
    if (text !== null) writeFileSync(join(co, file), text);
    return co;
  };

  test("regression: drift and contract on python nested 1e5 deep are io errors instead of overflowing", async () => {
    // 1e5 nested parentheses: CPython's tokenizer refuses more than 200 (nesting.test.ts), so
    // the source is rejected with a typed error before tree-sitter or any tree walk sees it.
    const src = `x = ${"(".repeat(100_000)}1${")".repeat(100_000)}\n`;
    await expect(driftCheck(checkout("deep-verl", CORE, src), "verl")).rejects.toThrow(
      "more than 200 nested brackets at line 1",
    );
    await expect(checkContract(checkout("deep-trl", GRPO, src), "trl@v0.29.1")).rejects.toThrow(
      IoError,
    );
    const r = await cli(
      "drift",
      "--checkout",
      checkout("deep-verl-cli", CORE, src),
      "--framework",
      "verl",
    );
    expect(r.code).toBe(2);
    expectOneErrorLine(r.stderr, "E_IO");
    // At the deepest nesting CPython accepts, a default (codeText's leaf walk) and a last
    // statement (lastTokenRow) 100 brackets deep each are extracted exactly.
    const deepDef = `def f(x=${"[".repeat(100)}${"]".repeat(100)}):\n    return ${"(".repeat(200)}1${")".repeat(200)}\n`;
    const defs = await extractDefinitions(deepDef);
    expect(defs.get("f")?.parameters?.[0]?.default?.length).toBe(200);
    expect([defs.get("f")?.startLine, defs.get("f")?.endLine]).toEqual([1, 2]);
  }, 60_000);

  test("regression: a tracked file over 8 mib or over 2 gib is an io error before it is read", async () => {
    for (const size of [52_000_007, 2 ** 31 + 1]) {
      const co = checkout(`big-${size}`, CORE, null);
      // Sparse files: the size is real, no byte is written, nothing is read.
      const fd = openSync(join(co, CORE), "w");
      ftruncateSync(fd, size);
      closeSync(fd);
      await expect(driftCheck(co, "verl")).rejects.toThrow(IoError);
      await expect(driftCheck(co, "verl")).rejects.toThrow(
        `at most ${MAX_PYTHON_SOURCE_BYTES} bytes (8 MiB); got ${size} bytes`,
      );
      const r = await cli("drift", "--checkout", co, "--framework", "verl");
      expect(r.code).toBe(2);
      expectOneErrorLine(r.stderr, "E_IO");
    }
    // In memory, the same bound holds before tree-sitter sees the text.
    await expect(extractDefinitions("#".repeat(8 * 2 ** 20 + 1))).rejects.toThrow(IoError);
  }, 60_000);

  test.skipIf(!hasMkfifo)("regression: a fifo as a tracked file is an io error", () => {
    const co = checkout("fifo-verl", CORE, null);
    expect(spawnSync("mkfifo", [join(co, CORE)]).status).toBe(0);
    const r = spawnCli("drift", "--checkout", co, "--framework", "verl");
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(expectOneErrorLine(r.stderr, "E_IO")).toContain("a regular file; got a FIFO");
  });
});

describe("demo-run", () => {
  test("regression: an existing file, an empty path and a folder under /proc are io errors", async () => {
    const file = path("a-file");
    writeFileSync(file, "x");
    expect(() => writeDemoRun(file, { steps: 2 })).toThrow(/got a regular file/);
    expect(() => writeDemoRun(join(file, "sub"), { steps: 2 })).toThrow(IoError);
    expect(() => writeDemoRun("", { steps: 2 })).toThrow(IoError);
    const onFile = await cli("demo-run", file);
    expect(onFile.code).toBe(2);
    expectOneErrorLine(onFile.stderr, "E_IO");
    const empty = await cli("demo-run", "");
    expect(empty.code).toBe(2);
    expectOneErrorLine(empty.stderr, "E_USAGE");
    if (existsSync("/proc/self")) {
      // Node's recursive mkdir retried ENOENT from procfs forever; ours makes one mkdir per part.
      const r = spawnCli("demo-run", "/proc/polgrad-bounded-test/run", "--steps", "2");
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(2);
      expectOneErrorLine(r.stderr, "E_IO");
    }
  });

  test("regression: steps and batch size over their caps are config errors", async () => {
    expect(() => demoRunPlan({ steps: DEMO_RUN_LIMITS.steps + 1 })).toThrow(ConfigError);
    expect(() => demoRunPlan({ batchSize: 1e9 })).toThrow(/\[3, 4096\]/);
    // 1024 · 2048 = 2^21 > 2^20 cells per step, although each is within its own cap.
    expect(() => demoRunPlan({ batchSize: 1024, width: 2048 })).toThrow(/<= 1048576/);
    expect(demoRunPlan({ batchSize: 1024, width: 1024 }).batchSize).toBe(1024);
    const r = await cli("demo-run", path("never"), "--steps", "1000000000");
    expect(r.code).toBe(2);
    expect(expectOneErrorLine(r.stderr, "E_CONFIG")).toContain("[2, 10000]");
    expect(existsSync(path("never"))).toBe(false);
  });

  test("regression: every logprob stream the demo writes is a log-probability", () => {
    // After the changepoint the entropy level is ≈ 0.9 nats, so old_logprobs hit the −0.01 clamp
    // and fresh/rollout draws around it used to land above 0 (readBatch now rejects those).
    const run = path("run-valid");
    writeDemoRun(run, { steps: 30, batchSize: 32, width: 24 });
    for (let s = 0; s < 30; s++) {
      const t = readTensors(join(run, `step_${String(s).padStart(6, "0")}.safetensors`));
      for (const name of ["logprobs", "old_logprobs", "rollout_logprobs"]) {
        const data = t.tensors.get(name)?.data as Float64Array;
        expect(Math.max(...data), `${name} at step ${s}`).toBeLessThanOrEqual(0);
      }
    }
  });
});

describe("verify budgets", () => {
  const ppo = ALGORITHMS.ppo.loss;

  test("regression: cases and replay shapes over their caps are config errors naming the cap", async () => {
    expect(() => checkAgainstReference(ppo, { cases: 1e9 })).toThrow(/\[1, 1000\]/);
    expect(() => checkAgainstReference(ppo, { replay: { seed: 1, shape: [1e6, 1e6] } })).toThrow(
      /B·T <= 4096/,
    );
    expect(() => checkAgainstReference(ppo, { shapes: [[64, 65]] })).toThrow(ConfigError);
    expect(() => gradcheckLoss(ppo, { cases: 1e9 })).toThrow(ConfigError);
    expect(() => gradcheckLoss(ppo, { maxAttempts: 1e9 })).toThrow(/\[1, 10000\]/);
    expect(() => gradcheckLoss(ppo, { replay: { seed: 1, shape: [2, 1e6] } })).toThrow(ConfigError);
    // Within the caps the checks still run: one 64 × 64 = 4096-cell case.
    expect(checkAgainstReference(ppo, { replay: { seed: 1, shape: [64, 64] } }).ok).toBe(true);
    for (const [args, cap] of [
      [["--cases", "1000000000"], "<= 1000"],
      [["--replay", "1:1000000x1000000"], "B·T <= 4096"],
      [["--replay", "1:1x99999999999999999999"], "SEED:BxT"],
    ] as const) {
      const r = await cli("verify", "--algorithm", "ppo", ...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(expectOneErrorLine(r.stderr, "E_USAGE")).toContain(cap);
    }
  });
});

describe("hostile text", () => {
  test("regression: a newline in a path is escaped and cannot forge an error line", async () => {
    const evil = path("x\nerror[E_FAKE]: forged\u001b[31m.json");
    writeFileSync(evil, "{");
    const r = await cli("loss", "--algorithm", "ppo", "--batch", evil);
    expect(r.code).toBe(2);
    const line = expectOneErrorLine(r.stderr, "E_IO");
    expect(line).toContain("x\\nerror[E_FAKE]: forged\\u001b[31m.json");
    expect(r.stderr).not.toContain("\u001b");
    const missing = await cli(
      "loss",
      "--algorithm",
      "ppo",
      "--batch",
      path("m\r\nerror[E_X].json"),
    );
    expectOneErrorLine(missing.stderr, "E_IO");
    const co = await cli("drift", "--checkout", "no\nerror[E_X]: such", "--framework", "verl");
    expectOneErrorLine(co.stderr, "E_IO");
  });

  test("regression: a 1 mb tensor name gives a short error line quickly without a suggestion", async () => {
    const name = `old_logprob${"s".repeat(1_000_000)}`;
    const file = path("huge-name.json");
    writeFileSync(file, JSON.stringify({ ...BATCH, [name]: [[0, 0]] }));
    const started = performance.now();
    // --strict makes the unused tensor an error, naming it.
    const r = await cli("loss", "--algorithm", "ppo", "--batch", file, "--strict");
    expect(performance.now() - started).toBeLessThan(1500);
    expect(r.code).toBe(2);
    const line = expectOneErrorLine(r.stderr, "E_IO");
    expect(line.length).toBeLessThan(1500);
    expect(line).toContain("chars)");
    expect(line).not.toContain("did you mean");
    // The cap: 64 characters still get a suggestion, 65 do not.
    expect(closestNames(`old_logprob${"s".repeat(53)}`, ["old_logprobs"])).toEqual([]);
    // Without --strict it is set aside with one short notice line.
    const lax = await cli("loss", "--algorithm", "ppo", "--batch", file);
    expect(lax.code).toBe(0);
    expect(lax.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1);
    expect(lax.stderr.length).toBeLessThan(1500);
    expect(closestNames("old_logprob", ["old_logprobs"])).toEqual(["old_logprobs"]);
  });

  test("regression: an inline --config with a duplicate key is rejected like the file form", async () => {
    const dup =
      '{"ratio": "token", "surrogate": "pg", "aggregation": "token_mean", "ratio": "sequence"}';
    const batch = path("dup-batch.json");
    writeFileSync(batch, JSON.stringify(BATCH));
    const inline = await cli("loss", "--config", dup, "--batch", batch);
    expect(inline.code).toBe(2);
    expect(expectOneErrorLine(inline.stderr, "E_USAGE")).toContain('duplicate key "ratio"');
    writeFileSync(path("dup.json"), dup);
    const file = await cli("loss", "--config", `@${path("dup.json")}`, "--batch", batch);
    expect(file.code).toBe(2);
    expect(expectOneErrorLine(file.stderr, "E_IO")).toContain('duplicate key "ratio"');
    const verify = await cli("verify", "--config", dup);
    expect(verify.code).toBe(2);
    expectOneErrorLine(verify.stderr, "E_USAGE");
  });

  test("regression: diagnose --clip with an empty or ill-formed list is a usage error", async () => {
    const batch = path("clip-batch.json");
    writeFileSync(batch, JSON.stringify(BATCH));
    for (const clip of [",", "", "0.2,", ",0.2", "0.2,,3", "0.2, ", "1e,2", "0.2,0.2,3,4", "a,b"]) {
      const r = await cli("diagnose", batch, "--clip", clip);
      expect(r.code, JSON.stringify(clip)).toBe(2);
      expect(r.stdout).toBe("");
      expectOneErrorLine(r.stderr, "E_USAGE");
    }
    const ok = await cli("diagnose", batch, "--clip", " 0.2 , .28 ,3e0");
    expect([0, 1]).toContain(ok.code);
  });

  test("regression: every cli error a hostile string causes is a polgrad error", async () => {
    // None of these may reach the E_INTERNAL branch (exit 70) or print a stack.
    for (const args of [
      ["contract", "check", "--checkout", dir, "--pin", "__proto__"],
      ["contract", "check", "--checkout", dir, "--pin", "constructor"],
      ["contract", "x\ny"],
      ["loss", "--config", "@", "--batch", "x.json"],
      ["loss", "--algorithm", "ppo", "--batch", "\u0000.json"],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).not.toContain("E_INTERNAL");
      expect(r.stderr.split("\n").filter((l) => l.startsWith("error[")).length).toBe(1);
    }
    expect(new IoError("f", "a", "m")).toBeInstanceOf(PolgradError);
  });
});
