/**
 * A synthetic training run with injected pathologies, written as a run directory of per-step
 * batch files (docs/diagnostics/run.md#demo-run). The design follows polgrad 0.2.0's
 * diagnose_run example (its §12.2 schedule), re-drawn with polgrad's own seeded generator:
 * rollout↔trainer mismatch whose spread grows over the run, policy drift that decays the importance
 * ESS, an entropy collapse at `changepointStep`, a length bias that grows from zero, and two
 * catastrophic tokens (rollout −7 at (0, 0) and (1, 1)) from `catastrophicFrom` on.
 */
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fmtValue } from "../core/message.js";
import { createRng, type Rng } from "../core/rng.js";
import { requireObject } from "../core/validate.js";
import { ConfigError, fail, IoError } from "../errors.js";
import { fileKind, fsError, ioError } from "../io/_internal/files.js";
import { type TensorToWrite, writeSafetensors } from "../io/writeSafetensors.js";
import { fsPath, readdirNames } from "../platform/fsPath.js";

/** Caps of a demo run (docs/cli.md#bounds): the run is bounded in steps and in bytes per step. */
export const DEMO_RUN_LIMITS: Readonly<{
  steps: number;
  batchSize: number;
  width: number;
  cells: number;
}> = Object.freeze({ steps: 10_000, batchSize: 4096, width: 4096, cells: 1_048_576 });

/** Options of {@link writeDemoRun}; defaults reproduce the 200-step schedule. */
export interface DemoRunOptions {
  readonly steps?: number;
  readonly batchSize?: number;
  readonly width?: number;
  readonly minLength?: number;
  readonly seed?: number;
  /** Step at which the entropy level drops (default 140 of 200, scaled with `steps`). */
  readonly changepointStep?: number;
  /** First step with the two catastrophic tokens (default 190 of 200, scaled with `steps`). */
  readonly catastrophicFrom?: number;
  /** Storage dtype of the float streams (default F64). */
  readonly dtype?: "F64" | "F32";
  /**
   * Write into a folder that is not empty: replace the step files an earlier demo run wrote
   * (and remove those of its steps this run does not write), leave every other file alone.
   * A step file demo-run did not write is never replaced. @defaultValue false
   */
  readonly force?: boolean;
}

/** The resolved schedule of a demo run. */
export interface DemoRunPlan {
  readonly steps: number;
  readonly batchSize: number;
  readonly width: number;
  readonly minLength: number;
  readonly seed: number;
  readonly changepointStep: number;
  readonly catastrophicFrom: number;
  readonly dtype: "F64" | "F32";
}

function positiveInt(arg: string, x: unknown, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof x !== "number" || !Number.isSafeInteger(x) || x < min || x > max) {
    const rule =
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in [${min}, ${max}]`;
    throw fail(ConfigError, "writeDemoRun", arg, rule, fmtValue(x));
  }
  return x;
}

/**
 * Resolve demo-run options to a plan (defaults: 200 steps, B = 32, T = 24, min length 4, seed 0,
 * changepoint at 70 % of the run, catastrophic tokens in the last 5 %). Caps: steps ≤ 10000,
 * batchSize ≤ 4096, width ≤ 4096, batchSize·width ≤ 2^20 ({@link DEMO_RUN_LIMITS}).
 *
 * @param options - The options.
 * @returns The plan.
 * @throws {ConfigError} E_CONFIG for a non-integer or out-of-range option (a cap named).
 * @derivation docs/diagnostics/run.md#demo-run
 * @enforcedBy test/demo/demoRun.test.ts > writeDemoRun > golden: the schedule's injections are in the written files
 * @enforcedBy test/hardening/bounded.test.ts > demo-run > regression: steps and batch size over their caps are config errors
 * @since 0.1.0
 */
export function demoRunPlan(options: DemoRunOptions = {}): DemoRunPlan {
  requireObject("demoRunPlan", "options", options, "a DemoRunOptions object");
  const L = DEMO_RUN_LIMITS;
  const steps = positiveInt("options.steps", options.steps ?? 200, 2, L.steps);
  const width = positiveInt("options.width", options.width ?? 24, 2, L.width);
  const batchSize = positiveInt("options.batchSize", options.batchSize ?? 32, 3, L.batchSize);
  if (batchSize * width > L.cells)
    throw fail(
      ConfigError,
      "writeDemoRun",
      "options.batchSize",
      `such that batchSize·width <= ${L.cells}`,
      `${batchSize}·${width} = ${batchSize * width}`,
    );
  const minLength = positiveInt("options.minLength", options.minLength ?? Math.min(4, width), 2);
  if (minLength > width)
    throw fail(
      ConfigError,
      "writeDemoRun",
      "options.minLength",
      `<= width ${width}`,
      String(minLength),
    );
  return {
    steps,
    batchSize,
    width,
    minLength,
    seed: positiveInt("options.seed", options.seed ?? 0, 0),
    changepointStep: positiveInt(
      "options.changepointStep",
      options.changepointStep ?? Math.round(0.7 * steps),
      1,
    ),
    catastrophicFrom: positiveInt(
      "options.catastrophicFrom",
      options.catastrophicFrom ?? Math.round(0.95 * steps),
      0,
    ),
    dtype: options.dtype ?? "F64",
  };
}

/**
 * Draw the tensors of one step. With progress p = step/(steps − 1): entropy level
 * H = 2.0 − 0.0015·199·p·(step < cp) … (a linear decline, then a drop of ≈ 0.69 nats at cp);
 * sampled logprobs min(−H + 0.3·ε, −0.01) are the trainer's `old_logprobs`; rollout =
 * min(old − (0.002 + 0.08p)·ε, −0.01); new = min(old + (0.01 + 0.19p)·ε, −0.01) (every stream a
 * log-probability ≤ 0); |advantage| = |0.2 + 0.04p·L + 0.05ε| with a random sign.
 * @internal
 */
export function demoStep(plan: DemoRunPlan, step: number, rng: Rng): Record<string, TensorToWrite> {
  const { batchSize: B, width: T, minLength, changepointStep: cp, catastrophicFrom } = plan;
  const p = step / (plan.steps - 1);
  const cpP = cp / (plan.steps - 1);
  // Entropy level: 2.0 → 2.0 − 0.2985·cpP linearly, then a drop to 1.1 and a slower decline.
  const H = step < cp ? 2.0 - 0.2985 * p : 1.1 - 0.199 * (p - cpP);
  const sigmaMismatch = 0.002 + 0.08 * p;
  // Sequence log-weights sum ≈ L̄ = 14 tokens of N(0, σ_d²): ESS/n → exp(−σ_d²·L̄) ≈ 0.57 at the end.
  const sigmaDrift = 0.01 + 0.19 * p;
  const slope = 0.04 * p;
  const lengths = Array.from({ length: B }, () => rng.int(minLength, T));
  const mask = new Uint8Array(B * T);
  const old = new Float64Array(B * T);
  const rollout = new Float64Array(B * T);
  const fresh = new Float64Array(B * T);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < (lengths[b] as number); t++) {
      const i = b * T + t;
      mask[i] = 1;
      old[i] = Math.min(-H + 0.3 * rng.normal(), -0.01);
      // Every stream is a log-probability: clamped at −0.01 like old, so that a batch file never
      // holds a logprob above 0 (readBatch rejects one).
      rollout[i] = Math.min((old[i] as number) - sigmaMismatch * rng.normal(), -0.01);
      fresh[i] = Math.min((old[i] as number) + sigmaDrift * rng.normal(), -0.01);
    }
  }
  if (step >= catastrophicFrom) {
    rollout[0] = (rollout[0] as number) - 7;
    rollout[T + 1] = (rollout[T + 1] as number) - 7;
  }
  const adv = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    const mag = Math.abs(0.2 + slope * (lengths[b] as number) + 0.05 * rng.normal());
    adv[b] = rng.uniform() < 0.5 ? -mag : mag;
  }
  const dtype = plan.dtype;
  return {
    logprobs: { dtype, shape: [B, T], data: fresh },
    old_logprobs: { dtype, shape: [B, T], data: old },
    rollout_logprobs: { dtype, shape: [B, T], data: rollout },
    advantages: { dtype, shape: [B], data: adv },
    response_mask: { dtype: "BOOL", shape: [B, T], data: mask },
  };
}

/**
 * Make `dir` a directory: missing components are created one at a time (at most one mkdir per
 * path component, no retry loop, so a file system that refuses a name — /proc — is an IoError,
 * not a spin), and an existing non-directory is an IoError naming what it is.
 */
function ensureDir(fn: string, dir: string): void {
  if (typeof dir !== "string" || dir.length === 0) {
    throw fail(IoError, fn, "dir", "a non-empty directory path", fmtValue(dir));
  }
  const missing: string[] = [];
  let cur = resolve(dir);
  for (;;) {
    let st: Stats | undefined;
    try {
      st = statSync(fsPath(cur));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw fsError(fn, dir, e, "writing");
    }
    if (st !== undefined) {
      if (!st.isDirectory()) {
        const what = cur === resolve(dir) ? fileKind(st) : `under ${fileKind(st)} (${cur})`;
        throw ioError(fn, dir, "dir", "a directory or a path where one can be created", what);
      }
      break;
    }
    missing.push(cur);
    const up = dirname(cur);
    if (up === cur) break;
    cur = up;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(fsPath(d));
    } catch (e) {
      throw fsError(fn, dir, e, "writing");
    }
  }
}

/**
 * Write the demo run to `dir` as `step_000000.safetensors`, … (one file per step, one step in
 * memory at a time).
 *
 * @param dir - The run directory (created if missing).
 * @param options - Size, seed, injection points, dtype.
 * @param onStep - Called after each step is written (for progress display).
 * @returns The plan and the bytes written.
 * @throws {ConfigError} E_CONFIG for invalid options.
 * @throws {IoError} E_IO when `dir` is empty, an existing file, cannot be created (e.g. under
 *   /proc), or a file cannot be written; when the folder is not empty (unless `force`), or, with
 *   `force`, holds a step file demo-run did not write.
 * @derivation docs/diagnostics/run.md#demo-run
 * @enforcedBy test/demo/demoRun.test.ts > writeDemoRun > golden: the schedule's injections are in the written files
 * @enforcedBy test/hardening/bounded.test.ts > demo-run > regression: an existing file, an empty path and a folder under /proc are io errors
 * @enforcedBy test/cli/writes.test.ts > never over an input > regression: demo-run refuses a folder that is not empty, and with --force never replaces a file it did not write
 * @since 0.1.0
 */
export function writeDemoRun(
  dir: string,
  options: DemoRunOptions = {},
  onStep?: (step: number, steps: number) => void,
): { plan: DemoRunPlan; files: number } {
  const fn = "writeDemoRun";
  const plan = demoRunPlan(options);
  ensureDir(fn, dir);
  const digits = Math.max(6, String(plan.steps - 1).length);
  const names = Array.from(
    { length: plan.steps },
    (_, step) => `step_${String(step).padStart(digits, "0")}.safetensors`,
  );
  const stale = claimFolder(fn, dir, names, options.force === true);
  const rng = createRng(plan.seed);
  names.forEach((name, step) => {
    writeSafetensors(join(dir, name), demoStep(plan, step, rng), {
      generator: GENERATOR,
      step: String(step),
    });
    onStep?.(step, plan.steps);
  });
  // An earlier, longer demo run's later steps would make the run a mix: they are ours, removed.
  for (const name of stale) {
    try {
      unlinkSync(fsPath(join(dir, name)));
    } catch (e) {
      throw fsError(fn, join(dir, name), e, "writing");
    }
  }
  return { plan, files: plan.steps };
}

/** The `generator` metadata of every step file demo-run writes: how it knows its own files. */
const GENERATOR = "polgrad demo-run";

/** A step file name of any run layout (docs/diagnostics/run.md#a-run). */
const STEP_NAME = /^(step|global_step|iter)[_-]?\d+/;

/** Whether `path` is a safetensors file whose metadata says demo-run wrote it (read without following a link). */
function writtenByDemoRun(path: string): boolean {
  let fd: number | undefined;
  try {
    if (!lstatSync(fsPath(path)).isFile()) return false;
    fd = openSync(fsPath(path), "r");
    const first8 = new Uint8Array(8);
    if (readSync(fd, first8, 0, 8, 0) !== 8) return false;
    const n = Number(new DataView(first8.buffer).getBigUint64(0, true));
    if (n < 2 || n > 2 ** 20) return false;
    const head = new Uint8Array(n);
    if (readSync(fd, head, 0, n, 8) !== n) return false;
    const meta = (JSON.parse(new TextDecoder().decode(head)) as { __metadata__?: unknown })
      .__metadata__;
    return (meta as { generator?: unknown } | undefined)?.generator === GENERATOR;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Check that demo-run may write `names` into `dir`: an empty folder always; a non-empty one only
 * with `force`, and then every step file in it (one of `names` or another step) must be one
 * demo-run wrote. Returns the earlier run's step files this run does not write (to remove).
 */
function claimFolder(fn: string, dir: string, names: readonly string[], force: boolean): string[] {
  let entries: string[];
  try {
    entries = readdirNames(dir);
  } catch (e) {
    throw fsError(fn, dir, e, "writing");
  }
  if (entries.length === 0) return [];
  if (!force) {
    const shown = entries.slice(0, 5).join(", ") + (entries.length > 5 ? ", …" : "");
    throw ioError(
      fn,
      dir,
      "dir",
      "a new or empty folder (--force / options.force writes over an earlier demo run there)",
      `a folder holding ${entries.length} entr${entries.length === 1 ? "y" : "ies"}: ${shown}`,
    );
  }
  const planned = new Set(names);
  const stale: string[] = [];
  for (const name of entries) {
    if (!planned.has(name) && !STEP_NAME.test(name)) continue;
    if (!writtenByDemoRun(join(dir, name)))
      throw ioError(
        fn,
        join(dir, name),
        "dir",
        "a folder whose step files demo-run wrote (it never replaces or mixes in a file it did not write)",
        `${name}, which polgrad demo-run did not write`,
      );
    if (!planned.has(name)) stale.push(name);
  }
  return stale;
}
