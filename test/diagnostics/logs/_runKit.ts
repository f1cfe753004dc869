/**
 * Simulated training runs for the detectors on logged scalars, and writers that log them as the
 * frameworks do: TRL's HF Trainer output folder (checkpoint-N/trainer_state.json), verl's
 * FileLogger JSONL, and TensorBoard event files with `simple_value` (tensorboardX, torch) or
 * tensor-style scalars (TF2, torch new_style). The writers follow the byte forms the recorded
 * fixtures of test/fixtures/logs/ show (the readers' tests check those against the real writers).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { createRng, type Rng } from "../../../src/core/rng.js";
import type { QuantitySeries } from "../../../src/diagnostics/logs/detectors.js";
import type { LogQuantity } from "../../../src/diagnostics/logs/quantities.js";
import { frame } from "../../io/metricLogs/_tensorboardKit.js";

/** The 0.99 quantile of Binomial(n, p), by summing the pmf. */
export function binomialQuantile99(n: number, p: number): number {
  let cdf = 0;
  let pmf = (1 - p) ** n;
  for (let k = 0; k <= n; k++) {
    cdf += pmf;
    if (cdf >= 0.99) return k;
    pmf *= ((n - k) / (k + 1)) * (p / (1 - p));
  }
  return n;
}

/** A standard normal draw (Box–Muller). */
export function normal(rng: Rng): number {
  let u = 0;
  while (u === 0) u = rng.uniform();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.uniform());
}

/**
 * A healthy run of n steps (steps 1..n): every quantity a line (a level and a drift over the run
 * drawn per run) plus independent Gaussian noise at `sigma` (entropy's scale; the others' scaled
 * to their units); the gradient norm log-normal around 1. Keys are the quantities; `metric` is
 * TRL's name (the writers rename).
 */
export function healthyRun(
  rng: Rng,
  n: number,
  sigma: number,
): Partial<Record<LogQuantity, QuantitySeries>> {
  const steps = Float64Array.from({ length: n }, (_, i) => i + 1);
  const line = (metric: string, level: number, drift: number, s: number): QuantitySeries => ({
    metric,
    steps,
    values: Float64Array.from(steps, (t) => level + (drift * t) / n + s * normal(rng)),
  });
  return {
    entropy: line("entropy", 0.8, -0.3 * rng.uniform(), sigma),
    clip_total: line("clip_ratio/region_mean", 0.1, 0.02 * rng.uniform(), sigma / 3),
    response_length: line(
      "completions/mean_length",
      300,
      100 * (rng.uniform() - 0.5),
      sigma * 1000,
    ),
    truncation_rate: line("completions/clipped_ratio", 0.05, 0.02 * rng.uniform(), sigma / 3),
    kl_ref: line("kl", 0.01, 0.04 * rng.uniform(), sigma / 10),
    kl_old: line("actor/ppo_kl", 0.002, 0, sigma / 30),
    logp_diff_mean: line("sampling/sampling_logp_difference/mean", 0.02, 0, sigma / 5),
    is_ratio_mean: line("sampling/importance_sampling_ratio/mean", 1, 0, sigma / 5),
    zero_std_frac: line("frac_reward_zero_std", 0.2, 0.1 * rng.uniform(), sigma),
    grad_norm: {
      metric: "grad_norm",
      steps,
      values: Float64Array.from(steps, () => Math.exp(0.3 * normal(rng))),
    },
  };
}

/** A healthy run whose entropy drops by `drop` nats after step `at` (the collapse to find). */
export function collapsedRun(
  seed: number,
  n: number,
  at: number,
  drop = 0.4,
): Partial<Record<LogQuantity, QuantitySeries>> {
  const run = healthyRun(createRng(seed), n, 0.02);
  const e = run.entropy as QuantitySeries;
  const values = Float64Array.from(e.values as Float64Array, (v, i) =>
    (e.steps[i] as number) > at ? v - drop : v,
  );
  return { ...run, entropy: { ...e, values } };
}

/** The quantities each framework's writer logs, under its names (nameMaps.ts). */
export const NAMES: Readonly<Record<"trl" | "verl", Partial<Record<LogQuantity, string>>>> = {
  trl: {
    entropy: "entropy",
    clip_total: "clip_ratio/region_mean",
    response_length: "completions/mean_length",
    truncation_rate: "completions/clipped_ratio",
    kl_ref: "kl",
    logp_diff_mean: "sampling/sampling_logp_difference/mean",
    is_ratio_mean: "sampling/importance_sampling_ratio/mean",
    zero_std_frac: "frac_reward_zero_std",
    grad_norm: "grad_norm",
  },
  verl: {
    entropy: "actor/entropy",
    clip_total: "actor/pg_clipfrac",
    response_length: "response_length/mean",
    truncation_rate: "response_length/clip_ratio",
    kl_old: "actor/ppo_kl",
    is_ratio_mean: "rollout_corr/rollout_is_mean",
    grad_norm: "actor/grad_norm",
  },
};

/** Per step, the metrics logged (name → value), as `names` renames the run's quantities. */
function rows(
  run: Partial<Record<LogQuantity, QuantitySeries>>,
  names: Partial<Record<LogQuantity, string>>,
): { step: number; metrics: Record<string, number> }[] {
  const n = (run.entropy as QuantitySeries).steps.length;
  return Array.from({ length: n }, (_, i) => {
    const metrics: Record<string, number> = {};
    for (const [q, name] of Object.entries(names)) {
      const s = run[q as LogQuantity];
      if (s !== undefined) metrics[name] = s.values[i] as number;
    }
    return { step: (run.entropy as QuantitySeries).steps[i] as number, metrics };
  });
}

/**
 * A TRL output folder: `checkpoint-K/trainer_state.json` every `every` steps (each holding the
 * log_history so far, as the HF Trainer saves it: indent 2, keys sorted) and the last one at n.
 */
export function writeTrlOutput(
  dir: string,
  run: Partial<Record<LogQuantity, QuantitySeries>>,
  every = 50,
): void {
  const history = rows(run, NAMES.trl).map((r) => ({
    ...r.metrics,
    epoch: r.step / 100,
    learning_rate: 1e-6,
    step: r.step,
  }));
  const last = history.length;
  for (let k = every; k < last + every; k += every) {
    const at = Math.min(k, last);
    const state = {
      best_global_step: null,
      epoch: at / 100,
      global_step: at,
      log_history: history.slice(0, at).map(sortKeys),
      logging_steps: 1,
      max_steps: last,
    };
    mkdirSync(join(dir, `checkpoint-${at}`), { recursive: true });
    writeFileSync(
      join(dir, `checkpoint-${at}`, "trainer_state.json"),
      `${JSON.stringify(sortKeys(state), null, 2)}\n`,
    );
  }
}

function sortKeys<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))) as T;
}

/** verl's FileLogger: one `{"step": s, "data": {...}}` line per step. */
export function verlJsonl(run: Partial<Record<LogQuantity, QuantitySeries>>): string {
  return rows(run, NAMES.verl)
    .map((r) => `${JSON.stringify({ step: r.step, data: r.metrics })}\n`)
    .join("");
}

const LD = WireType.LengthDelimited;

/** One Event record's data: wall time, step, and one scalar summary value per metric. */
function scalarEvent(
  step: number,
  metrics: Record<string, number>,
  style: "simple" | "tensor",
  first: boolean,
): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.Bit64)
    .double(1.7e9 + step)
    .tag(2, WireType.Varint)
    .int64(step);
  w.tag(5, LD).fork();
  for (const [name, value] of Object.entries(metrics)) {
    w.tag(1, LD).fork().tag(1, LD).string(name);
    if (style === "simple") w.tag(2, WireType.Bit32).float(value);
    else {
      // The scalars plugin's metadata with the tag's first value, then a rank-0 DT_FLOAT tensor.
      if (first) w.tag(9, LD).fork().tag(1, LD).fork().tag(1, LD).string("scalars").join().join();
      w.tag(8, LD).fork().tag(1, WireType.Varint).int32(1).tag(2, LD).fork().join();
      w.tag(5, LD).fork().float(value).join();
      w.join();
    }
    w.join();
  }
  w.join();
  return w.finish();
}

/** The file_version event every writer starts a file with. */
function fileVersion(): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.Bit64).double(1.7e9).tag(3, LD).string("brain.Event:2");
  return w.finish();
}

/**
 * A TensorBoard event file of the run under TRL's names with the HF Trainer's `train/` prefix
 * (its TensorBoardCallback), scalars as `simple_value` or as tensors.
 */
export function tensorboardEvents(
  run: Partial<Record<LogQuantity, QuantitySeries>>,
  style: "simple" | "tensor",
): Uint8Array {
  const prefixed = Object.fromEntries(Object.entries(NAMES.trl).map(([q, n]) => [q, `train/${n}`]));
  return frame(
    fileVersion(),
    ...rows(run, prefixed).map((r, i) => scalarEvent(r.step, r.metrics, style, i === 0)),
  );
}

/**
 * The run written in each format under `dir`: `trl/` (a TRL output folder), `verl.jsonl`, and
 * `tb-simple/`, `tb-tensor/` (TensorBoard folders, the event file in `runs/Dec05_12-00-00_host/`
 * as the HF Trainer names its run); returns the path to diagnose per format.
 */
export function writeAllFormats(
  dir: string,
  run: Partial<Record<LogQuantity, QuantitySeries>>,
): Record<"trainer_state" | "jsonl" | "tensorboard simple_value" | "tensorboard tensor", string> {
  mkdirSync(dir, { recursive: true });
  writeTrlOutput(join(dir, "trl"), run);
  writeFileSync(join(dir, "verl.jsonl"), verlJsonl(run));
  for (const style of ["simple", "tensor"] as const) {
    const at = join(dir, `tb-${style}`, "runs", "Dec05_12-00-00_host");
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, "events.out.tfevents.1700000000.host"), tensorboardEvents(run, style));
  }
  return {
    trainer_state: join(dir, "trl"),
    jsonl: join(dir, "verl.jsonl"),
    "tensorboard simple_value": join(dir, "tb-simple"),
    "tensorboard tensor": join(dir, "tb-tensor"),
  };
}
