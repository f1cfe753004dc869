#!/usr/bin/env node
/**
 * `npm run fuzz`: the long fuzz campaign on the built dist/ (docs/fuzz.md). Every target of
 * scripts/fuzz/targets.mjs (each reader of TENSOR_READERS, the JSON batch path, the config JSON,
 * run folders, Python sources, CLI argv) runs in a child process that reports each input; the
 * parent kills a child whose input runs past the hang bound and restarts it after that input, and
 * a child that dies (an abort, an out-of-memory) is a crash on its current input. Each input's
 * peak-RSS growth is measured (process.resourceUsage().maxRSS). Prints the inputs tried per
 * target and the outcome classes; exits 1 on any anomaly.
 *
 *   node scripts/fuzz.mjs [--runs N] [--seed S] [--only SUBSTRING] [--jobs J] [--hang-ms MS]
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = fileURLToPath(new URL("../", import.meta.url));
const self = fileURLToPath(import.meta.url);
const GB = 2 ** 30;

/** The fuzzed functions, from dist/ (the quick suite takes the same names from src/). */
async function distApi() {
  const d = (p) => import(new URL(`../dist/${p}`, import.meta.url).href);
  const [
    cli,
    defs,
    demo,
    run,
    errors,
    jsonText,
    batch,
    cfg,
    readers,
    fromJson,
    write,
    loss,
    root_,
    lossOut,
    registry,
  ] = await Promise.all([
    d("cli/main.js"),
    d("conformance/python/definitions.js"),
    d("demo/demoRun.js"),
    d("diagnostics/diagnoseRun.js"),
    d("errors.js"),
    d("io/_internal/jsonText.js"),
    d("io/batch.js"),
    d("io/configJson.js"),
    d("io/readers.js"),
    d("io/tensorsFromJson.js"),
    d("io/writeSafetensors.js"),
    d("losses/policyLoss.js"),
    d("index.js"),
    d("cli/lossOut.js"),
    d("registry/index.js"),
  ]);
  // The metric-log parsers (issue 34).
  const [tensorboard, jsonl, trainerState, wandb, detect] = await Promise.all([
    d("io/metricLogs/tensorboard.js"),
    d("io/metricLogs/jsonl.js"),
    d("io/metricLogs/trainerState.js"),
    d("io/metricLogs/wandb.js"),
    d("io/metricLogs/detect.js"),
  ]);
  const runCli = async (argv) => {
    let stdout = "";
    let stderr = "";
    const code = await cli.main(argv, {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      stderrIsTTY: false,
    });
    return { code, stdout, stderr };
  };
  return {
    COMMANDS: cli.COMMANDS,
    main: cli.main,
    runCli,
    extractDefinitions: defs.extractDefinitions,
    writeDemoRun: demo.writeDemoRun,
    diagnoseRun: run.diagnoseRun,
    PolgradError: errors.PolgradError,
    parseJsonText: jsonText.parseJsonText,
    toBatch: batch.toBatch,
    parsePolicyLossConfig: cfg.parsePolicyLossConfig,
    TENSOR_READERS: readers.TENSOR_READERS,
    tensorsFromJson: fromJson.tensorsFromJson,
    encodeSafetensors: write.encodeSafetensors,
    policyLoss: loss.policyLoss,
    resolveFrameworkConfig: root_.resolveFrameworkConfig,
    evaluateResolution: root_.evaluateResolution,
    BUILTIN_BATCH: root_.BUILTIN_BATCH,
    lossOutStreamed: lossOut.lossOutStreamed,
    getAlgorithm: registry.getAlgorithm,
    parseJsonlLog: jsonl.parseJsonlLog,
    parseTrainerState: trainerState.parseTrainerState,
    parseWandbExport: wandb.parseWandbExport,
    detectMetricLogFormat: detect.detectMetricLogFormat,
    parseTensorboardEvents: tensorboard.parseTensorboardEvents,
  };
}

async function loadTargets(scratch) {
  const { makeTargets } = await import("./fuzz/targets.mjs");
  return makeTargets(await distApi(), { root, scratch });
}

function preview(input) {
  const text =
    input instanceof Uint8Array
      ? Buffer.from(input.subarray(0, 120)).toString("latin1")
      : Array.isArray(input) && input.every((x) => typeof x === "string")
        ? JSON.stringify(
            input.map((a) => (a.length > 80 ? `${a.slice(0, 60)}…(${a.length} chars)` : a)),
          )
        : `${input.length} step files`;
  return JSON.stringify(text).slice(0, 240);
}

/** Peak-RSS growth after which a child is replaced by a fresh one (see child()). */
const RESTART_GROWTH = 256 * 2 ** 20;

/** The child: run inputs [from, to) of one target and report each to the parent. */
async function child(ti, from, to, seed) {
  const scratch = mkdtempSync(join(tmpdir(), "polgrad-fuzz-"));
  const { inputOf } = await import("./fuzz/targets.mjs");
  const target = (await loadTargets(scratch))[ti];
  const base = process.resourceUsage().maxRSS * 1024;
  for (let i = from; i < to; i++) {
    const input = inputOf(target, seed, ti, i);
    const size = target.size(input);
    process.send({ t: "start", i, size, preview: preview(input) });
    const t0 = performance.now();
    const o = await target.run(input);
    const ms = performance.now() - t0;
    const grow = process.resourceUsage().maxRSS * 1024 - base;
    await new Promise((r) => process.send({ t: "done", i, ms, grow, o }, r));
    // A fresh process after an anomaly, so that one input cannot poison the next ones; and once
    // the peak RSS (a high-water mark that never falls) has grown past RESTART_GROWTH, so that
    // every input's growth is measured from a baseline at most that far above a fresh child's:
    // an input reported over 1 GB then allocated at least 1 GB − RESTART_GROWTH itself.
    if (o.kind === "other" || grow > RESTART_GROWTH) break;
  }
  rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
}

/** The parent: run one target's inputs through children, with the hang bound. */
function campaign(ti, name, runs, seed, hangMs) {
  const stats = {
    name,
    tried: 0,
    result: 0,
    typed: {},
    other: [],
    hangs: [],
    crashes: [],
    big: [],
    nonFinite: 0,
    maxMs: 0,
    maxGrow: 0,
    maxSize: 0,
  };
  return new Promise((resolve) => {
    const startAt = (from) => {
      if (from >= runs) return resolve(stats);
      const c = fork(self, ["--child", String(ti), String(from), String(runs), String(seed)], {
        execArgv: ["--max-old-space-size=3072"],
        stdio: ["ignore", "ignore", "pipe", "ipc"],
      });
      let current = null;
      let lastDone = from - 1;
      let timer = null;
      let stderr = "";
      c.stderr.on("data", (d) => {
        stderr = (stderr + d.toString()).slice(-2000);
      });
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          stats.hangs.push({ ...current, note: `no outcome after ${hangMs} ms` });
          stats.tried++;
          c.kill("SIGKILL");
        }, hangMs);
      };
      c.on("message", (m) => {
        if (m.t === "start") {
          current = m;
          arm();
          return;
        }
        clearTimeout(timer);
        stats.tried++;
        stats.maxMs = Math.max(stats.maxMs, m.ms);
        stats.maxGrow = Math.max(stats.maxGrow, m.grow);
        stats.maxSize = Math.max(stats.maxSize, current.size);
        if (m.grow > GB && current.size < 1e6) stats.big.push({ ...current, grow: m.grow });
        if (m.o.kind === "result") stats.result++;
        else if (m.o.kind === "typed") stats.typed[m.o.code] = (stats.typed[m.o.code] ?? 0) + 1;
        else {
          if (m.o.detail.includes("non-finite")) stats.nonFinite++;
          if (stats.other.length < 20) stats.other.push({ ...current, detail: m.o.detail });
          else stats.other.push(null);
        }
        lastDone = current.i;
        current = null;
      });
      c.on("exit", (code, signal) => {
        clearTimeout(timer);
        if (current !== null && !stats.hangs.some((h) => h.i === current.i)) {
          stats.tried++;
          stats.crashes.push({
            ...current,
            note: `child died (${signal ?? `exit ${code}`}): ${stderr.trim().split("\n").slice(-3).join(" | ")}`,
          });
        }
        if (current === null && code !== 0) {
          stats.crashes.push({
            i: -1,
            note: `child failed outside an input: ${stderr.trim().slice(-500)}`,
          });
          return resolve(stats);
        }
        startAt(current === null ? lastDone + 1 : current.i + 1);
      });
    };
    startAt(0);
  });
}

function report(all, opts, seconds) {
  const lines = [
    `polgrad fuzz campaign: seed ${opts.seed}, ${opts.runs} inputs per target, hang bound ${opts.hangMs} ms (${seconds.toFixed(0)} s)`,
    "",
  ];
  let anomalies = 0;
  for (const s of all) {
    const typed = Object.values(s.typed).reduce((a, b) => a + b, 0);
    const codes = Object.entries(s.typed)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    const bad = s.other.length + s.hangs.length + s.crashes.length + s.big.length;
    anomalies += bad;
    lines.push(`${s.name}`);
    lines.push(
      `  inputs ${s.tried}: result ${s.result}, typed error ${typed}${codes ? ` (${codes})` : ""}, anything else ${s.other.length} (non-finite ${s.nonFinite})`,
    );
    lines.push(
      `  hangs ${s.hangs.length}, crashes ${s.crashes.length}, allocations over 1 GB ${s.big.length}; slowest input ${s.maxMs.toFixed(0)} ms, peak RSS growth ${(s.maxGrow / 2 ** 20).toFixed(0)} MB, largest input ${s.maxSize} bytes`,
    );
    for (const a of [
      ...s.hangs,
      ...s.crashes,
      ...s.big,
      ...s.other.filter((x) => x !== null),
    ].slice(0, 10))
      lines.push(
        `  ! input ${a.i} (${a.size ?? "?"} bytes) ${a.preview ?? ""}: ${a.note ?? a.detail ?? `RSS +${(a.grow / 2 ** 20).toFixed(0)} MB`}`,
      );
  }
  lines.push(
    "",
    anomalies === 0
      ? "0 anomalies: every input ended in a result or a typed error."
      : `${anomalies} anomalies`,
  );
  return { text: lines.join("\n"), anomalies };
}

/** `--only NAME --dump I`: write input I of the target to stdout (bytes, or argv as JSON). */
async function dump(ti, i, seed) {
  const scratch = mkdtempSync(join(tmpdir(), "polgrad-fuzz-"));
  const { inputOf } = await import("./fuzz/targets.mjs");
  const input = inputOf((await loadTargets(scratch))[ti], seed, ti, i);
  process.stdout.write(
    input instanceof Uint8Array
      ? input
      : `${JSON.stringify(input.map?.((f) => f.name ?? f) ?? input)}\n`,
  );
}

async function parent() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "10000" },
      seed: { type: "string", default: "1" },
      only: { type: "string" },
      jobs: { type: "string", default: "2" },
      "hang-ms": { type: "string", default: "20000" },
      dump: { type: "string" },
    },
  });
  const opts = {
    runs: Number(values.runs),
    seed: Number(values.seed),
    hangMs: Number(values["hang-ms"]),
    jobs: Math.max(1, Number(values.jobs)),
  };
  const scratch = mkdtempSync(join(tmpdir(), "polgrad-fuzz-"));
  const names = (await loadTargets(scratch)).map((t) => t.name);
  rmSync(scratch, { recursive: true, force: true });
  const chosen = names
    .map((n, i) => ({ n, i }))
    .filter(({ n }) => values.only === undefined || n.includes(values.only));
  if (values.dump !== undefined) return dump(chosen[0]?.i ?? 0, Number(values.dump), opts.seed);
  const t0 = performance.now();
  const results = new Array(chosen.length);
  let next = 0;
  const worker = async () => {
    while (next < chosen.length) {
      const k = next++;
      const { n, i } = chosen[k];
      results[k] = await campaign(i, n, opts.runs, opts.seed, opts.hangMs);
      process.stderr.write(`done: ${n}\n`);
    }
  };
  await Promise.all(Array.from({ length: opts.jobs }, worker));
  const { text, anomalies } = report(results, opts, (performance.now() - t0) / 1000);
  process.stdout.write(`${text}\n`);
  process.exitCode = anomalies === 0 ? 0 : 1;
}

if (process.argv[2] === "--child") {
  const [ti, from, to, seed] = process.argv.slice(3).map(Number);
  await child(ti, from, to, seed);
} else await parent();
