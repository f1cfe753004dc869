/**
 * Enforces docs/cli.md#writing-files under faults (issue 31, build item 7): every writing command
 * of the built binary run under a file-size limit (at each 2^16-position block boundary of the row
 * path, and at fractions of the other outputs), killed by SIGINT, SIGTERM or SIGKILL at seeded
 * random moments, and pointed at a planted destination (a symbolic link, a FIFO, a directory, its
 * own input, a file inside the run it reads). After every run: the destination is the complete
 * new file or the untouched old one (a folder output: each file one or the other), the inputs are
 * byte-identical, nothing was written through a link, and no temporary file is left after a
 * handled signal. POLGRAD_FAULT_RUNS scales the signal runs per command (default 3).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { createRng } from "../../src/core/rng.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
import { BIN } from "../cli/_run.js";
import { useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();
const SIGNAL_RUNS = Number(process.env.POLGRAD_FAULT_RUNS ?? 3);

/** A ragged batch with every stream the writers read (PAPO's masked and reference logprobs). */
function batch(path: string, B: number, T: number): string {
  const rng = createRng(B * 1000 + T);
  const n = B * T;
  const lp = Array.from({ length: n }, () => -0.2 - 2 * rng.uniform());
  writeSafetensors(path, {
    logprobs: { dtype: "F64", shape: [B, T], data: lp },
    old_logprobs: {
      dtype: "F64",
      shape: [B, T],
      data: lp.map((x) => x - 0.1 + 0.2 * rng.uniform()),
    },
    ref_logprobs: { dtype: "F64", shape: [B, T], data: lp.map((x) => x - 0.05) },
    masked_logprobs: { dtype: "F64", shape: [B, T], data: lp.map((x) => x - 0.3) },
    advantages: {
      dtype: "F64",
      shape: [B],
      data: Array.from({ length: B }, () => rng.uniform() - 0.5),
    },
    response_mask: {
      dtype: "BOOL",
      shape: [B, T],
      data: Array.from({ length: n }, (_, i) => (i % T <= (i * 7919) % T ? 1 : 0)),
    },
  });
  return path;
}

const sha = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex");

/** path → sha256 of every regular file below `dir` (or of `dir` itself when it is a file). */
function hashes(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(dir)) return out;
  if (lstatSync(dir).isFile()) return new Map([["", sha(dir)]]);
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (lstatSync(p).isFile()) out.set(name, sha(p));
  }
  return out;
}

const partials = (dir: string) => readdirSync(dir).filter((f) => f.includes(".polgrad-partial"));

interface Writer {
  readonly name: string;
  /** The command line writing to `dest`. */
  readonly args: (dest: string) => string[];
  readonly folder: boolean;
  /** Put the earlier ("old") content at `dest`. */
  readonly old: (dest: string) => void;
  /** Whether the plantings apply (a file destination named by an option). */
  readonly plant: boolean;
  /** Files the command reads: planted as its own destination, each must be refused. */
  readonly own: readonly string[];
}

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Run the binary; kill it with `signal` after `delayMs` when given; `limitKiB` sets ulimit -f. */
function run(
  args: readonly string[],
  opts: { limitKiB?: number; signal?: NodeJS.Signals; delayMs?: number } = {},
): Promise<Outcome> {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const limit = opts.limitKiB === undefined ? "" : `ulimit -f ${opts.limitKiB}; `;
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", `${limit}exec "${process.execPath}" '${BIN}' ${quoted}`], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const timer =
      opts.signal === undefined
        ? undefined
        : setTimeout(() => child.kill(opts.signal), opts.delayMs ?? 0);
    const hang = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      clearTimeout(hang);
      resolve({ code, signal, stderr });
    });
  });
}

describe("fault injection", () => {
  test("property: under file-size limits, signals and planted destinations, no output is destroyed, no input modified, nothing written through a link, no temporary file left after a handled signal", async () => {
    const root = tmp("faults");
    mkdirSync(root);
    const inputs = join(root, "inputs");
    mkdirSync(inputs);
    // 200 × 700 = 140,000 positions: the row path writes three 2^16-position blocks per tensor.
    const big = batch(join(inputs, "big.safetensors"), 200, 700);
    const small = batch(join(inputs, "small.safetensors"), 8, 24);
    const runDir = join(inputs, "run");
    expect(
      spawnSync(process.execPath, [
        BIN,
        "demo-run",
        runDir,
        "--steps",
        "12",
        "--batch-size",
        "16",
        "--width",
        "32",
      ]).status,
    ).toBe(0);
    const oldFile = (dest: string) => writeFileSync(dest, `the user's earlier file at ${dest}\n`);
    const writers: Writer[] = [
      {
        name: "loss-rows",
        args: (d) => ["loss", "--algorithm", "dapo", "--batch", big, "--out", d],
        folder: false,
        old: oldFile,
        plant: true,
        own: [big],
      },
      {
        name: "loss-threads",
        args: (d) => ["loss", "--algorithm", "dapo", "--batch", big, "--out", d, "--threads", "2"],
        folder: false,
        old: oldFile,
        plant: true,
        own: [big],
      },
      {
        name: "loss-framework",
        args: (d) => [
          "loss",
          "--framework",
          "verl@1dda039b:token-mean",
          "--batch",
          big,
          "--out",
          d,
        ],
        folder: false,
        old: oldFile,
        plant: true,
        own: [big],
      },
      {
        name: "loss-papo",
        args: (d) => ["loss", "--algorithm", "papo_g", "--batch", big, "--out", d],
        folder: false,
        old: oldFile,
        plant: true,
        own: [big],
      },
      {
        name: "report",
        args: (d) => ["report", small, "--out", d],
        folder: false,
        old: oldFile,
        plant: true,
        own: [small],
      },
      {
        name: "diagnose-html",
        args: (d) => ["diagnose", runDir, "--html", d],
        folder: false,
        old: oldFile,
        plant: true,
        own: [join(runDir, "step_000003.safetensors"), join(runDir, "new.html")],
      },
      {
        name: "diagnose-summary",
        args: (d) => ["diagnose", runDir, "--summary-out", d],
        folder: false,
        old: oldFile,
        plant: true,
        own: [join(runDir, "step_000003.safetensors"), join(runDir, "new.json")],
      },
      {
        name: "vectors",
        args: (d) => [
          "vectors",
          "emit",
          "--algorithm",
          "dapo",
          "--cases",
          "40",
          "--seed",
          "2",
          "--out",
          d,
        ],
        folder: true,
        old: (d) => {
          spawnSync(process.execPath, [
            BIN,
            "vectors",
            "emit",
            "--algorithm",
            "dapo",
            "--cases",
            "40",
            "--seed",
            "1",
            "--out",
            d,
          ]);
        },
        plant: false,
        own: [],
      },
      {
        name: "demo-run",
        args: (d) => [
          "demo-run",
          d,
          "--steps",
          "10",
          "--batch-size",
          "8",
          "--width",
          "16",
          "--seed",
          "2",
          "--force",
        ],
        folder: true,
        old: (d) => {
          spawnSync(process.execPath, [
            BIN,
            "demo-run",
            d,
            "--steps",
            "12",
            "--batch-size",
            "8",
            "--width",
            "16",
            "--seed",
            "1",
          ]);
        },
        plant: false,
        own: [],
      },
    ];
    const inputHashes = hashes(inputs);
    const victim = join(root, "victim.txt");
    writeFileSync(victim, "a file a planted link points to");
    const victimHash = sha(victim);
    const tally = { runs: 0, destroyed: 0, inputsModified: 0, throughLink: 0, leftovers: 0 };
    const failures: string[] = [];
    const check = (label: string, ok: boolean) => {
      if (!ok) failures.push(label);
    };
    const rng = createRng(31);
    let k = 0;
    for (const w of writers) {
      const base = join(root, w.name);
      mkdirSync(base);
      // The complete new output, and the old one.
      const refDest = join(base, `ref${w.folder ? "" : ".out"}`);
      if (w.folder) w.old(refDest);
      const t0 = Date.now();
      const ref = await run(w.args(refDest));
      const duration = Date.now() - t0;
      // diagnose exits 1 when an alarm fires (the demo run's do): the output is written either way.
      expect([0, 1], `${w.name}: ${ref.stderr}`).toContain(ref.code);
      const refHashes = hashes(refDest);
      const oldOf = (dest: string): Map<string, string> => {
        rmSync(dest, { recursive: true, force: true });
        w.old(dest);
        return hashes(dest);
      };
      /** The destination after a run: the new output or the old one (per file, for a folder). */
      const intact = (dest: string, old: Map<string, string>): boolean => {
        const now = hashes(dest);
        if (!w.folder) return now.get("") === old.get("") || now.get("") === refHashes.get("");
        for (const [name, h] of now) {
          if (name.includes(".polgrad-partial")) continue;
          if (h !== old.get(name) && h !== refHashes.get(name)) return false;
        }
        return true;
      };
      const inspect = (label: string, dest: string, old: Map<string, string>, handled: boolean) => {
        tally.runs++;
        const ok = intact(dest, old);
        if (!ok) tally.destroyed++;
        check(`${label}: destination neither old nor new`, ok);
        const inputsOk = JSON.stringify([...hashes(inputs)]) === JSON.stringify([...inputHashes]);
        if (!inputsOk) tally.inputsModified++;
        check(`${label}: an input changed`, inputsOk);
        const where = w.folder ? dest : dirname(dest);
        const left = existsSync(where) ? partials(where) : [];
        if (handled && left.length > 0) {
          tally.leftovers++;
          failures.push(`${label}: temporary files left: ${left.join(", ")}`);
        }
        for (const f of left) rmSync(join(where, f));
      };
      // A. File-size limits: the row path at each block boundary (±1 KiB), the others at fractions.
      const size = [...refHashes.keys()].reduce(
        (s, name) => s + readFileSync(name === "" ? refDest : join(refDest, name)).length,
        0,
      );
      const kib = Math.ceil(size / 1024);
      const limits =
        w.name === "loss-rows"
          ? [1, 511, 513, 1023, 1025, 1535, 1537, kib - 1]
          : [1, Math.max(1, Math.floor(kib / 3)), Math.max(1, Math.floor((2 * kib) / 3)), kib - 1];
      for (const limitKiB of limits) {
        const dest = join(base, `limit${w.folder ? "" : ".out"}`);
        const old = oldOf(dest);
        const r = await run(w.args(dest), { limitKiB });
        inspect(`${w.name} limit ${limitKiB} KiB (exit ${r.code})`, dest, old, true);
        check(
          `${w.name} limit ${limitKiB} KiB: exit ${r.code} ${r.stderr}`,
          r.code === 2 || (w.folder && r.code === 0),
        );
      }
      // B. Signals at seeded random moments.
      for (let i = 0; i < SIGNAL_RUNS; i++) {
        const signal = (["SIGINT", "SIGTERM", "SIGKILL"] as const)[k++ % 3] as NodeJS.Signals;
        const delayMs = Math.floor(rng.uniform() * duration * 1.1);
        const dest = join(base, `sig${w.folder ? "" : ".out"}`);
        const old = oldOf(dest);
        const r = await run(w.args(dest), { signal, delayMs });
        inspect(
          `${w.name} ${signal} at ${delayMs} ms (exit ${r.code ?? r.signal})`,
          dest,
          old,
          signal !== "SIGKILL",
        );
      }
      // C. Planted destinations (file outputs): a link, a FIFO, a directory, an input, a run file.
      if (!w.plant) continue;
      const plants: [string, (p: string) => void][] = [
        ["a symbolic link", (p) => symlinkSync(victim, p)],
        ["a FIFO", (p) => spawnSync("mkfifo", [p])],
        ["a directory", (p) => mkdirSync(p)],
      ];
      for (const [what, make] of plants) {
        const dest = join(base, `planted-${what.replaceAll(" ", "-")}`);
        make(dest);
        const r = await run(w.args(dest));
        tally.runs++;
        check(`${w.name} onto ${what}: exit ${r.code}`, r.code === 2);
        if (sha(victim) !== victimHash) tally.throughLink++;
      }
      for (const dest of w.own) {
        const r = await run(w.args(dest));
        tally.runs++;
        check(`${w.name} onto the input ${dest}: exit ${r.code}`, r.code === 2);
      }
      check(
        `${w.name}: inputs unchanged after plantings`,
        JSON.stringify([...hashes(inputs)]) === JSON.stringify([...inputHashes]),
      );
    }
    check("the victim of the links is unchanged", sha(victim) === victimHash);
    // The campaign's tally, for the record (docs/cli.md#writing-files).
    console.log(`fault injection: ${JSON.stringify(tally)}`);
    expect(failures).toEqual([]);
    expect(tally).toMatchObject({ destroyed: 0, inputsModified: 0, throughLink: 0, leftovers: 0 });
  }, 600_000);
});
