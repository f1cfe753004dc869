// Run diagnosis from disk, as bench/diagnoseMemory.js does it: `polgrad demo-run` writes the run
// (steps × B = 32 × T, F64) to a temporary folder, then a separate Node process calls the public
// diagnoseRun on it, timing the call itself and reporting its own peak RSS; MB/s is the run's
// bytes on disk over that time. One measurement (a run takes seconds; it is not repeated).
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { zipSync } from "fflate";
import { npyBytes as npy } from "./npyFiles.mjs";
import { torchSaveNpzDir } from "./torchSave.mjs";

const BIN = fileURLToPath(new URL("../bin/polgrad.js", import.meta.url));
const DIST = new URL("../dist/index.js", import.meta.url).href;

/** Write a steps × 32 × width run, diagnose it in a child, delete it; returns the measurement. */
export function benchDiagnose(steps, width) {
  const root = mkdtempSync(join(tmpdir(), "polgrad-bench-run-"));
  const dir = join(root, "run");
  try {
    const t0 = process.hrtime.bigint();
    const w = spawnSync(
      process.execPath,
      [BIN, "demo-run", dir, "--steps", String(steps), "--width", String(width)],
      { encoding: "utf8" },
    );
    if (w.status !== 0) throw new Error(`bench: demo-run failed: ${w.stderr}`);
    const writeSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const bytes = readdirSync(dir).reduce((a, f) => a + statSync(join(dir, f)).size, 0);
    // One child per thread count (1, then 2: diagnoseRun's threads option), the same run.
    const measure = (threads, at = dir, size = bytes) => {
      const probe = `
        import { diagnoseRun } from ${JSON.stringify(DIST)};
        const t0 = process.hrtime.bigint();
        const d = diagnoseRun(${JSON.stringify(at)}, { threads: ${threads} });
        const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
        // Linux's VmHWM is this process's own peak; maxRSS can carry the spawning process's
        // (a spawn shares the parent's memory until exec, and the kernel keeps its high water).
        const { readFileSync } = await import("node:fs");
        let hwm = null;
        try {
          hwm = Number(/VmHWM:s+(d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN);
        } catch {}
        const maxRssKiB = Number.isFinite(hwm) ? hwm : process.resourceUsage().maxRSS;
        console.log(JSON.stringify({ steps: d.steps.length, seconds, maxRssKiB }));
      `;
      const t1 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], {
        encoding: "utf8",
        maxBuffer: 1 << 24,
      });
      const wallSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
      if (r.status !== 0) throw new Error(`bench: diagnoseRun failed: ${r.stderr}`);
      const out = JSON.parse(r.stdout);
      return {
        threads,
        steps: out.steps,
        diagnoseSeconds: out.seconds,
        processWallSeconds: wallSeconds,
        mbPerSecond: size / 1e6 / out.seconds,
        peakRssMiB: out.maxRssKiB / 1024,
        peakRssOverRun: (out.maxRssKiB * 1024) / size,
      };
    };
    const one = measure(1);
    const two = measure(2);
    const formats = benchFormats(dir, root, measure);
    return {
      steps: one.steps,
      batchSize: 32,
      width,
      runBytes: bytes,
      writeSeconds,
      // The one-thread figures at the top level (the document's earlier shape), both rows below.
      diagnoseSeconds: one.diagnoseSeconds,
      processWallSeconds: one.processWallSeconds,
      mbPerSecond: one.mbPerSecond,
      peakRssMiB: one.peakRssMiB,
      peakRssOverRun: one.peakRssOverRun,
      threads: [one, two],
      formats,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Bytes under `path` (a file, or a folder of files and folders). */
function sizeOf(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((a, f) => a + sizeOf(join(path, f)), 0);
}

/**
 * The same run in the other formats a trainer dumps (issue 36, point 3), each step with what real
 * dumps carry beside the loss's streams (int64 token ids [B, 2T] and the attention mask, a value
 * head's outputs [B, T]), so that reading only the tensors used counts: `.npz` stored (np.savez)
 * and deflated (np.savez_compressed, level 6), a `.npy` folder per step, and `.pt` (torch.save,
 * with python3-torch; skipped otherwise). Each diagnosed on one thread: MB/s of its bytes on disk
 * and peak RSS.
 */
function benchFormats(src, root, measureAt) {
  const { readTensors } = importDist();
  const out = [];
  const dirs = {
    "npz (stored)": join(root, "npz"),
    "npz (deflated)": join(root, "npzc"),
    "npy folders": join(root, "npy"),
  };
  for (const d of Object.values(dirs)) mkdirSync(d);
  for (const f of readdirSync(src).sort()) {
    const set = readTensors(join(src, f));
    const files = {};
    for (const [name, t] of set.tensors)
      files[`${name}.npy`] = npy(t.dtype === "BOOL" ? "|b1" : "<f8", t.shape, t.data);
    const [B, T] = set.tensors.get("logprobs").shape;
    const ids = new Array(B * 2 * T);
    for (let i = 0; i < ids.length; i++) ids[i] = (i * 7919) % 150000;
    files["input_ids.npy"] = npy("<i8", [B, 2 * T], ids);
    files["attention_mask.npy"] = npy("<i8", [B, 2 * T], new Array(B * 2 * T).fill(1));
    files["values.npy"] = npy(
      "<f8",
      [B, T],
      Array.from({ length: B * T }, (_, i) => Math.sin(i)),
    );
    const stem = f.replace(/\.safetensors$/, "");
    writeFileSync(join(dirs["npz (stored)"], `${stem}.npz`), zipSync(files, { level: 0 }));
    writeFileSync(join(dirs["npz (deflated)"], `${stem}.npz`), zipSync(files, { level: 6 }));
    mkdirSync(join(dirs["npy folders"], stem));
    for (const [name, bytes] of Object.entries(files))
      writeFileSync(join(dirs["npy folders"], stem, name), bytes);
  }
  const pt = join(root, "pt");
  mkdirSync(pt);
  const why = torchSaveNpzDir(dirs["npz (stored)"], pt);
  if (why === null) dirs[".pt (torch.save)"] = pt;
  else out.push({ format: ".pt (torch.save)", skipped: why });
  for (const [format, dir] of Object.entries(dirs)) {
    const bytes = sizeOf(dir);
    const m = measureAt(1, dir, bytes);
    out.push({ format, bytes, ...m });
  }
  // The deflated run against the inflate itself: every step read and the members the diagnosis
  // uses inflated by the zip reader (zlib, bounded), nothing else: the floor of that format.
  const deflated = out.find((f) => f.format === "npz (deflated)");
  if (deflated !== undefined) {
    const { openZip } = importZip();
    const used = new Set(
      [...readTensors(join(src, readdirSync(src)[0])).tensors.keys()].map((n) => `${n}.npy`),
    );
    const t0 = process.hrtime.bigint();
    for (const f of readdirSync(dirs["npz (deflated)"])) {
      const z = openZip("bench", readFileSync(join(dirs["npz (deflated)"], f)), f);
      for (const e of z.entries) if (used.has(e.name)) z.read(e.name);
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    deflated.inflateFloor = { seconds, mbPerSecond: deflated.bytes / 1e6 / seconds };
  }
  return out;
}

let distModule = null;
/** dist/index.js, loaded once (the bench runs after npm run build). */
function importDist() {
  if (distModule === null) throw new Error("bench: call loadDist() first");
  return distModule;
}

let zipModule = null;
function importZip() {
  return zipModule;
}

/** Load dist/index.js for the format conversion (readTensors) and the zip reader (its native zlib registered by the entry). */
export async function loadDist() {
  distModule = await import(DIST);
  zipModule = await import(new URL("../dist/io/_internal/zip.js", import.meta.url).href);
}
