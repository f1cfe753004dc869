#!/usr/bin/env node
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import v8 from "node:v8";
import vm from "node:vm";
import { getAlgorithm, policyLoss, VERSION } from "../dist/index.js";
import { benchCli } from "./_cli.mjs";
import { benchDiagnose, loadDist } from "./_diagnose.mjs";
import { PEER_HOW_TO, peerMissing, startPeer } from "./_peer.mjs";
import { interleave, median, timeSync } from "./_timing.mjs";
import { makeBatch, nestedInputs, parseSize, typedInputs, writeBatchNpy } from "./cases.mjs";
import { FIELDS_FLOORS, floorOutputs, floorPass } from "./floor.mjs";
// polgrad's benchmark (docs/performance.md): loss + gradient through the public API (dist/) for
// four registered configs on deterministic ragged and full batches, in typed and nested input
// forms, beside the bare exp pass and, when present, polgrad 0.2.0 on PyTorch, interleaved
// round by round, medians; then the CLI end to end and run diagnosis. Run after `npm run build`:
//   node bench/losses.mjs [--quick] [--rounds N] [--sizes 64x4096,…] [--configs dapo,…]
//                         [--fills ragged,full] [--only losses,cli,diagnose] [--no-peer]
//                         [--cli-size BxT] [--diagnose-steps N] [--seed N] [--json FILE]
import { fieldsVerdicts, targetVerdicts } from "./targets.mjs";

const { values: opt } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    rounds: { type: "string" },
    sizes: { type: "string" },
    configs: { type: "string", default: "dapo,grpo,gspo,cispo" },
    fills: { type: "string", default: "ragged,full" },
    only: { type: "string", default: "losses,cli,diagnose" },
    "no-peer": { type: "boolean", default: false },
    "cli-size": { type: "string" },
    "diagnose-steps": { type: "string" },
    seed: { type: "string", default: "0" },
    json: { type: "string" },
  },
});
const list = (s) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
const rounds = Number(opt.rounds ?? (opt.quick ? 3 : 7));
if (!Number.isInteger(rounds) || rounds < 1) throw new Error("bench: --rounds must be ≥ 1");
const sizes = list(opt.sizes ?? (opt.quick ? "64x4096" : "64x4096,256x8192,512x32768")).map(
  parseSize,
);
const configs = list(opt.configs);
for (const c of configs) getAlgorithm(c);
const fills = list(opt.fills);
for (const f of fills)
  if (f !== "ragged" && f !== "full") throw new Error(`bench: a fill is ragged or full; got ${f}`);
const sections = new Set(list(opt.only));
const cliSize = parseSize(opt["cli-size"] ?? (opt.quick ? "64x4096" : "256x8192"));
const diagnoseSteps = Number(opt["diagnose-steps"] ?? (opt.quick ? 50 : 1000));
const seed = Number(opt.seed);

// The thread counts to measure, one row each: policyLoss's `threads` option on our side, torch's
// set_num_threads on the peer's (docs/performance.md#threads).
const THREADS = [1, 2];
const threadLabel = (t) => String(t);
const callOurs = (config, inputs, threads, out) =>
  policyLoss(config, inputs, out === undefined ? { threads } : { threads, out });
/** What torch's loss.backward() returns, and no more (issue 36): `fields: ["loss", "gradLogprobs"]`. */
const LOSS_AND_GRAD = ["loss", "gradLogprobs"];
const callFields = (config, inputs, threads, grad) =>
  policyLoss(
    config,
    inputs,
    grad === undefined
      ? { threads, fields: LOSS_AND_GRAD }
      : { threads, fields: LOSS_AND_GRAD, out: { gradLogprobs: grad } },
  );

/** Output arrays for B·T positions, reused call after call (the `out` option's use). */
function reusedOutputs(n) {
  const shared = (bytes) => new SharedArrayBuffer(bytes);
  return {
    gradLogprobs: new Float64Array(shared(8 * n)),
    perTokenObjective: new Float64Array(shared(8 * n)),
    ratio: new Float64Array(shared(8 * n)),
    clippedLow: new Uint8Array(shared(n)),
    clippedHigh: new Uint8Array(shared(n)),
  };
}

// A full collection before every timed JS call, outside its timing, so that no call pays for the
// garbage another arm left behind (the collections a call triggers itself stay in its time).
v8.setFlagsFromString("--expose-gc");
const collect = vm.runInNewContext("gc");
const timed = (fn) => {
  collect();
  return timeSync(fn);
};

// Peak working set per B·T position, for the skip rule: the typed streams (3·8 + 1 + exp 8),
// the nested copies (3·8 + 4), policyLoss's [B, T] temporaries and outputs (≈ 14·8) and the
// peer's tensors and autograd buffers (≈ 24·8); measured peaks are printed with each size.
const BYTES_PER_POSITION = 33 + 28 + 112 + 192;

// The issue's targets (issue 12), shown beside the measurements; nothing here claims them.
const TARGET = {
  ratioTyped: "≥ 3× at 256x8192",
  nestedOverTyped: "≤ 1.5",
  expFractionDapo: "≥ 40 %",
  diagnoseMBps: "≥ 400 MB/s",
  cliRatio: "≥ 2×",
  cliRssOverFile: "≤ 2×",
};

const startedAt = new Date().toISOString();
const cpus = os.cpus();
const doc = {
  schemaVersion: 1,
  bench: "polgrad losses",
  startedAt,
  finishedAt: null,
  argv: process.argv.slice(2),
  machine: {
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model ?? "unknown",
    cpuCount: cpus.length,
    totalMemMiB: Math.round(os.totalmem() / 1048576),
    freeMemMiB: Math.round(os.freemem() / 1048576),
  },
  node: process.version,
  polgrad: VERSION,
  threads: THREADS,
  settings: { rounds, sizes, configs, fills, seed, sections: [...sections] },
  peer: { available: false, reason: null, versions: null },
  targets: TARGET,
  exp: [],
  floor: [],
  rows: [],
  skipped: [],
  cli: null,
  diagnose: null,
};

const say = (s) => process.stdout.write(`${s}\n`);
say(`polgrad ${VERSION} bench, node ${process.version}, ${doc.machine.cpuModel} × ${cpus.length}`);
say(`threads: ${THREADS.join(", ")} (policyLoss threads; torch set_num_threads)`);
say(`rounds: ${rounds} (interleaved; medians)`);

let peer = null;
if (opt["no-peer"]) doc.peer.reason = "--no-peer";
else {
  doc.peer.reason = peerMissing();
  if (doc.peer.reason === null) {
    peer = await startPeer();
    doc.peer.available = true;
    doc.peer.versions = peer.versions;
    say(`peer: polgrad ${peer.versions.polgrad} on torch ${peer.versions.torch} (float64)`);
  } else {
    say(`peer: absent (${doc.peer.reason})`);
    for (const line of PEER_HOW_TO) say(line);
  }
}

/** The bare pass: z = exp(lp − old) over all B·T positions into a preallocated array. */
function expPass(lp, old, z) {
  const n = z.length;
  for (let i = 0; i < n; i++) z[i] = Math.exp(lp[i] - old[i]);
}

function absSum(x) {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += Math.abs(x[i]);
  return s;
}

const relDiff = (a, b) => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)));
const fmt = (x, d = 2) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(d) : "—");
const times = (x) => (typeof x === "number" && Number.isFinite(x) ? `${x.toFixed(2)}×` : "—");
const mtok = (x) => fmt(x / 1e6, 1);

async function benchLosses() {
  say("");
  say(
    "config  size        fill    thr  typed ms  Mtok/s  of exp  out ms  nested ms  Mtok/s  n/t   torch ms  ratio typed  out    nested  agree (rel)",
  );
  for (const { B, T } of sizes) {
    const n = B * T;
    const need = n * BYTES_PER_POSITION;
    const free = os.freemem();
    if (need > 0.7 * free) {
      const why = `needs ≈ ${(need / 2 ** 30).toFixed(1)} GiB, over 70 % of the ${(free / 2 ** 30).toFixed(1)} GiB free`;
      say(`${B}x${T}: skipped (${why})`);
      doc.skipped.push({ B, T, reason: why });
      continue;
    }
    for (const fill of fills) {
      const batch = makeBatch(B, T, fill, seed);
      const typed = typedInputs(batch);
      const nested = nestedInputs(batch);
      const z = new Float64Array(n);
      const out = reusedOutputs(n);
      const floorReused = floorOutputs(n);
      const floorGrad = new Float64Array(n);
      if (peer !== null) {
        const dir = mkdtempSync(join(os.tmpdir(), "polgrad-bench-npy-"));
        writeBatchNpy(dir, batch);
        await peer.request({ cmd: "load", dir });
        rmSync(dir, { recursive: true, force: true });
      }
      const expTimes = [];
      const floorTimes = { fresh: [], out: [] };
      for (const name of configs) {
        const config = getAlgorithm(name).loss;
        const fieldsFloor = FIELDS_FLOORS[name] ?? null;
        // One set of rounds per config for every thread count, so that "two threads against one"
        // compares arms that saw the same machine (docs/performance.md#threads): arms that do
        // not depend on the thread count (exp, the floors) once, the others once per count.
        const per = new Map();
        const arms = [
          { name: "exp", run: () => timed(() => expPass(batch.logprobs, batch.oldLogprobs, z)) },
          // The output-contract floor (bench/floor.mjs): dapo's outputs in one plain pass.
          { name: "floor", run: () => timed(() => floorPass(batch, floorOutputs(n), true)) },
          { name: "floorOut", run: () => timed(() => floorPass(batch, floorReused, false)) },
        ];
        for (const threads of THREADS) {
          // Untimed first calls: warm-up, and the check that all sides compute the same thing.
          const rt = callOurs(config, typed, threads);
          const rn = callOurs(config, nested, threads);
          const agreement = {
            nestedBitwise:
              Object.is(rt.loss, rn.loss) &&
              absSum(rt.gradLogprobs.data) === absSum(rn.gradLogprobs.data),
            peerLossRel: null,
            peerGradAbsSumRel: null,
          };
          const loss = rt.loss;
          const gradAbsSum = absSum(rt.gradLogprobs.data);
          if (peer !== null) {
            const p = await peer.request({ cmd: "time", config: name, threads, reps: 1 });
            agreement.peerLossRel = relDiff(loss, p.loss);
            agreement.peerGradAbsSumRel = relDiff(gradAbsSum, p.grad_abs_sum);
          }
          // Minor page faults of each typed call and each peer call (the warm-up round's first).
          per.set(threads, { agreement, loss, gradAbsSum, faults: { typed: [], peer: [] } });
        }
        // Each call, at one thread and then at two, side by side in every round (arm@1, arm@2):
        // a ratio of the two is taken round by round, so that drift slower than a call cancels.
        const kinds = {
          typed: (threads) => () => {
            const { faults } = per.get(threads);
            const f0 = process.resourceUsage().minorPageFault;
            const s = timed(() => callOurs(config, typed, threads));
            faults.typed.push(process.resourceUsage().minorPageFault - f0);
            return s;
          },
          out: (threads) => () => timed(() => callOurs(config, typed, threads, out)),
          // Issue 36: the loss and the gradient only, fresh and into a reused gradient, right
          // after this config's floor for them (a loss and gradient in one plain pass).
          fields: (threads) => () => timed(() => callFields(config, typed, threads)),
          fieldsOut: (threads) => () =>
            timed(() => callFields(config, typed, threads, out.gradLogprobs)),
          ...(peer === null
            ? {}
            : {
                peer: (threads) => async () => {
                  const p = await peer.request({ cmd: "time", config: name, threads, reps: 1 });
                  per.get(threads).faults.peer.push(p.faults[0]);
                  return p.times[0];
                },
              }),
          nested: (threads) => () => timed(() => callOurs(config, nested, threads)),
        };
        for (const [kind, make] of Object.entries(kinds)) {
          if (kind === "fields" && fieldsFloor !== null)
            arms.push({
              name: "floorFields",
              run: () => timed(() => fieldsFloor(batch, new Float64Array(n), config)),
            });
          if (kind === "fieldsOut" && fieldsFloor !== null)
            // The same floor into the reused gradient `fieldsOut` writes (padding written 0).
            arms.push({
              name: "floorFieldsOut",
              run: () => timed(() => fieldsFloor(batch, floorGrad, config, false)),
            });
          for (const threads of THREADS)
            arms.push({ name: `${kind}@${threads}`, run: make(threads) });
        }
        const t = await interleave(rounds, arms);
        expTimes.push(...t.exp.times);
        floorTimes.fresh.push(...t.floor.times);
        floorTimes.out.push(...t.floorOut.times);
        const side = (m) => ({
          medianSeconds: m.median,
          times: m.times,
          tokensPerSecond: n / m.median,
          fractionOfExp: t.exp.median / m.median,
        });
        const ff = t.floorFields ?? null;
        const ffo = t.floorFieldsOut ?? null;
        // a over b, paired: rounds 2k and 2k + 1 run the arms in opposite orders (interleave), so
        // over the two each arm has run in either place; the median over such pairs of rounds of
        // (a's two times) / (b's two times). One round alone: its ratio.
        const paired = (a, b) => {
          const k = a.times.length >> 1;
          if (k === 0) return a.times[0] / b.times[0];
          const two = (x, j) => x.times[2 * j] + x.times[2 * j + 1];
          return median(Array.from({ length: k }, (_, j) => two(a, j) / two(b, j)));
        };
        for (const threads of THREADS) {
          const { agreement, loss, gradAbsSum, faults } = per.get(threads);
          const arm = (a) => t[`${a}@${threads}`];
          const pm = peer === null ? null : arm("peer").median;
          const row = {
            config: name,
            B,
            T,
            fill,
            validTokens: batch.valid,
            threads,
            loss,
            gradAbsSum,
            exp: { medianSeconds: t.exp.median, tokensPerSecond: n / t.exp.median },
            floor: { fresh: side(t.floor), out: side(t.floorOut) },
            // Median minor page faults per call, the warm-up round left out (null: no peer).
            faults: {
              typed: median(faults.typed.slice(1)),
              peer: peer === null ? null : median(faults.peer.slice(1)),
            },
            typed: side(arm("typed")),
            out: side(arm("out")),
            fields: side(arm("fields")),
            fieldsOut: side(arm("fieldsOut")),
            // This config's floor for the fields (null: bench/floor.mjs has none for it).
            floorFields: ff === null ? null : side(ff),
            floorFieldsOut: ffo === null ? null : side(ffo),
            // Ours over the floor and two threads over one: paired, round by round (above).
            fieldsOverFloor: ff === null ? null : paired(arm("fields"), ff),
            nested: side(arm("nested")),
            nestedOverTyped: arm("nested").median / arm("typed").median,
            peer: peer === null ? null : { threads, ...side(arm("peer")) },
            ratio:
              peer === null
                ? null
                : {
                    typed: pm / arm("typed").median,
                    out: pm / arm("out").median,
                    nested: pm / arm("nested").median,
                    floor: pm / t.floor.median,
                    floorOut: pm / t.floorOut.median,
                    fields: pm / arm("fields").median,
                    fieldsOut: pm / arm("fieldsOut").median,
                    floorFields: ff === null ? null : pm / ff.median,
                    floorFieldsOut: ffo === null ? null : pm / ffo.median,
                  },
            // Two threads over one, measured in the same rounds (null on the one-thread row).
            overOneThread:
              threads === 1
                ? null
                : Object.fromEntries(
                    ["typed", "out", "fields", "fieldsOut"].map((a) => [
                      a,
                      paired(arm(a), t[`${a}@1`]),
                    ]),
                  ),
            agreement,
          };
          doc.rows.push(row);
          const agree =
            peer === null
              ? "no peer"
              : `${agreement.peerLossRel.toExponential(1)}${agreement.peerLossRel <= 1e-12 ? "" : " (!)"}`;
          say(
            [
              name.padEnd(6),
              `${B}x${T}`.padEnd(10),
              fill.padEnd(6),
              threadLabel(threads).padStart(3),
              fmt(row.typed.medianSeconds * 1e3, 1).padStart(8),
              mtok(row.typed.tokensPerSecond).padStart(6),
              `${fmt(100 * row.typed.fractionOfExp, 0)} %`.padStart(6),
              fmt(row.out.medianSeconds * 1e3, 1).padStart(6),
              fmt(row.nested.medianSeconds * 1e3, 1).padStart(9),
              mtok(row.nested.tokensPerSecond).padStart(6),
              fmt(row.nestedOverTyped).padStart(4),
              fmt(row.peer?.medianSeconds * 1e3, 1).padStart(9),
              times(row.ratio?.typed).padStart(11),
              times(row.ratio?.out).padStart(5),
              times(row.ratio?.nested).padStart(7),
              ` ${agree}${agreement.nestedBitwise ? "" : " (nested differs!)"}`,
            ].join("  "),
          );
          const floorText =
            row.floorFields === null
              ? "no floor for this config"
              : `${name}'s floor for these fields ${fmt(row.floorFields.medianSeconds * 1e3, 1)} ms (${times(row.ratio?.floorFields)} torch), ours ${fmt(row.fieldsOverFloor)}× the floor`;
          say(
            `        fields loss,gradLogprobs: ${fmt(row.fields.medianSeconds * 1e3, 1)} ms (${times(row.ratio?.fields)} torch), into a reused gradient ${fmt(row.fieldsOut.medianSeconds * 1e3, 1)} ms (${times(row.ratio?.fieldsOut)}); ${floorText}`,
          );
          if (row.overOneThread !== null)
            say(
              `        ${threads} threads over 1: ${Object.entries(row.overOneThread)
                .map(([a, x]) => `${a} ${fmt(x)}`)
                .join(", ")}`,
            );
        }
      }
      const expMedian = expTimes.sort((a, b) => a - b)[expTimes.length >> 1];
      doc.exp.push({ B, T, fill, medianSeconds: expMedian, tokensPerSecond: n / expMedian });
      say(
        `exp     ${`${B}x${T}`.padEnd(10)}  ${fill.padEnd(6)}  bare exp(lp − old) pass: ${mtok(n / expMedian)} Mtok/s (${(expMedian * 1e3).toFixed(1)} ms)`,
      );
      const floorFresh = median(floorTimes.fresh);
      const floorOut = median(floorTimes.out);
      doc.floor.push({
        B,
        T,
        fill,
        fresh: { medianSeconds: floorFresh, tokensPerSecond: n / floorFresh },
        out: { medianSeconds: floorOut, tokensPerSecond: n / floorOut },
        fractionOfExp: { fresh: expMedian / floorFresh, out: expMedian / floorOut },
      });
      say(
        `floor   ${`${B}x${T}`.padEnd(10)}  ${fill.padEnd(6)}  dapo's outputs in one plain pass: ${(floorFresh * 1e3).toFixed(1)} ms fresh, ${(floorOut * 1e3).toFixed(1)} ms reused (${fmt((100 * expMedian) / floorFresh, 0)} % / ${fmt((100 * expMedian) / floorOut, 0)} % of exp)`,
      );
    }
    const rss = process.resourceUsage().maxRSS / 1024;
    say(`${B}x${T}: peak RSS of this process so far ${rss.toFixed(0)} MiB`);
  }
}

if (sections.has("losses")) {
  // No incremental marking while the loss arms run (docs/performance.md#interleaving-medians-agreement):
  // after the full GC before each call, a fresh output's 16 MB crossed V8's allocation limit and
  // the call's next slow-path allocation started marking the whole heap inside its timing (10–11
  // of 11 fields calls, 0.2–2.6 ms each), while the floor, which allocates nothing after its
  // output, never reached that point. Collections stay where the bench puts them, between calls.
  v8.setFlagsFromString("--no-incremental-marking");
  await benchLosses();
  v8.setFlagsFromString("--incremental-marking");
}
if (peer !== null) peer.close();

if (sections.has("cli")) {
  const { B, T } = cliSize;
  say("");
  say(`cli: polgrad loss --algorithm dapo --batch FILE --json > /dev/null on ${B}x${T} ragged F64`);
  const c = await benchCli(B, T, rounds, doc.peer.available, seed);
  doc.cli = c;
  say(
    `cli: ours ${c.ours.medianSeconds.toFixed(2)} s (${mtok(c.ours.tokensPerSecond)} Mtok/s), peak RSS ${c.ours.peakRssMiB.toFixed(0)} MiB = ${c.ours.peakRssOverFile.toFixed(2)}× the ${(c.fileBytes / 1e6).toFixed(0)} MB file (target ${TARGET.cliRssOverFile})`,
  );
  say(
    `cli: ours with --out ${c.oursOut.medianSeconds.toFixed(2)} s, peak RSS ${c.oursOut.peakRssMiB.toFixed(0)} MiB = ${c.oursOut.peakRssOverFile.toFixed(2)}× the file`,
  );
  if (c.peer !== null)
    say(
      `cli: python load + loss + backward ${c.peer.medianSeconds.toFixed(2)} s, peak RSS ${c.peer.peakRssMiB.toFixed(0)} MiB; ratio ${c.ratio.toFixed(2)}× (--json), ${c.ratioOut.toFixed(2)}× (--out) (target ${TARGET.cliRatio}); loss agreement ${c.agreement.relDiff.toExponential(1)}`,
    );
}

if (sections.has("diagnose")) {
  say("");
  say(`diagnose: ${diagnoseSteps} steps × 32 × 1024 (F64, written by polgrad demo-run)`);
  await loadDist();
  const d = benchDiagnose(diagnoseSteps, 1024);
  doc.diagnose = d;
  for (const t of d.threads)
    say(
      `diagnose: ${(d.runBytes / 1e9).toFixed(3)} GB on ${t.threads} thread(s) in ${t.diagnoseSeconds.toFixed(2)} s = ${t.mbPerSecond.toFixed(0)} MB/s of run data (target ${TARGET.diagnoseMBps}), peak RSS ${t.peakRssMiB.toFixed(0)} MiB (${t.peakRssOverRun.toFixed(3)}× the run); peer: n/a (polgrad 0.2.0 has no run-level diagnosis)`,
    );
  for (const f of d.formats)
    say(
      f.skipped !== undefined
        ? `diagnose: ${f.format}: skipped (${f.skipped})`
        : `diagnose: ${f.format}, with a dump's extra tensors: ${(f.bytes / 1e9).toFixed(3)} GB in ${f.diagnoseSeconds.toFixed(2)} s = ${f.mbPerSecond.toFixed(0)} MB/s (stored entries: target ${TARGET.diagnoseMBps}), peak RSS ${f.peakRssMiB.toFixed(0)} MiB${f.inflateFloor === undefined ? "" : `; reading it and inflating the members used, nothing else: ${f.inflateFloor.mbPerSecond.toFixed(0)} MB/s`}`,
    );
}

/** Print a list of verdicts under `title`; a bound is printed as `floorName`'s. */
function sayVerdicts(title, verdicts, floorName) {
  say("");
  say(title);
  for (const v of verdicts) {
    say(`  ${v.met === null ? "-  " : v.met ? "yes" : "no "}  ${v.target}: ${v.measured}`);
    if (v.bound !== null)
      say(
        `       ${floorName}: ${v.bound}${v.reachable ? "" : `: the target lies beyond even ${floorName} on this machine`}`,
      );
  }
}

// Issue 36's targets (the loss and the gradient only, against torch's loss.backward()), then
// issue 12's, judged from this run (bench/targets.mjs).
doc.fieldsVerdicts = fieldsVerdicts(doc);
sayVerdicts(
  "targets (issue 36: fields loss,gradLogprobs; every format at disk speed), this run:",
  doc.fieldsVerdicts,
  "the floors for the fields",
);
doc.verdicts = targetVerdicts(doc);
sayVerdicts("targets (issue 12), this run:", doc.verdicts, "the floor pass");

doc.finishedAt = new Date().toISOString();
if (opt.json !== undefined) {
  mkdirSync(dirname(opt.json), { recursive: true });
  writeFileSync(opt.json, `${JSON.stringify(doc, null, 2)}\n`);
  say(`\njson: ${opt.json}`);
}
