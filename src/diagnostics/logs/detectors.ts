/**
 * The detectors on a run's logged scalars (docs/diagnostics/log-detectors.md#detectors): each reads one
 * quantity (quantities.ts) and raises an alarm only when its test rejects at its share of the
 * run's α and the effect is at least its minimum size. The run's tests form one family: each
 * runs at α/m, m the number of tests that ran (Bonferroni), so a healthy run raises any alarm with
 * probability at most α (measured: test/diagnostics/logs/calibration.test.ts). Trends are
 * reported, never alarms by themselves: a run drifting linearly is healthy.
 */

import { fmtValue } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { ConfigError, fail } from "../../errors.js";
import { MAX_PERMUTATION_WORK, MAX_PERMUTATIONS } from "../trend.js";
import type { LogQuantity } from "./quantities.js";
import {
  levelTest,
  MIN_TEST_POINTS,
  type Reduced,
  reduceSeries,
  shiftTest,
  spikeTest,
} from "./shift.js";

/** How a detector tests its quantity. */
export type LogDetectorKind = "shift" | "level" | "spike";

/** The detectors' names, in report order (for --only/--skip and alarm codes). */
export const LOG_DETECTOR_NAMES = [
  "entropy_collapse",
  "clip_shift",
  "length_shift",
  "truncation_shift",
  "kl_ref_shift",
  "kl_old_shift",
  "mismatch_shift",
  "mismatch_level",
  "is_ratio_shift",
  "dead_groups",
  "grad_norm_spike",
] as const;

/** A detector's name. */
export type LogDetectorName = (typeof LOG_DETECTOR_NAMES)[number];

/** One detector: its name (for --only/--skip), quantity, test, direction and default effect size. */
export interface LogDetector {
  readonly name: LogDetectorName;
  readonly quantity: LogQuantity;
  readonly kind: LogDetectorKind;
  /** shift: the bad direction ("both": either). */
  readonly direction: "up" | "down" | "both";
  /**
   * The smallest effect that is an alarm, in the quantity's units: a shift's |δ̂| (or, with
   * `relative`, |δ̂| / |level before|); a level's bound; a spike's ratio to its running median.
   */
  readonly minEffect: number;
  readonly relative?: true;
  /** What it means, for reports. */
  readonly what: string;
}

/** Every detector on logged scalars, in the order of LOG_DETECTOR_NAMES. */
export const LOG_DETECTORS: readonly LogDetector[] = [
  {
    name: "entropy_collapse",
    quantity: "entropy",
    kind: "shift",
    direction: "down",
    minEffect: 0.1,
    what: "the policy's entropy drops beyond its trend",
  },
  {
    name: "clip_shift",
    quantity: "clip_total",
    kind: "shift",
    direction: "up",
    minEffect: 0.05,
    what: "the clipped fraction rises beyond its trend",
  },
  {
    name: "length_shift",
    quantity: "response_length",
    kind: "shift",
    direction: "both",
    minEffect: 0.25,
    relative: true,
    what: "the mean response length jumps beyond its trend",
  },
  {
    name: "truncation_shift",
    quantity: "truncation_rate",
    kind: "shift",
    direction: "up",
    minEffect: 0.1,
    what: "the fraction of truncated responses rises beyond its trend",
  },
  {
    name: "kl_ref_shift",
    quantity: "kl_ref",
    kind: "shift",
    direction: "up",
    minEffect: 0.05,
    what: "the KL to the reference jumps beyond its trend",
  },
  {
    name: "kl_old_shift",
    quantity: "kl_old",
    kind: "shift",
    direction: "up",
    minEffect: 0.01,
    what: "the KL between the old and the new policy jumps beyond its trend",
  },
  {
    name: "mismatch_shift",
    quantity: "logp_diff_mean",
    kind: "shift",
    direction: "up",
    minEffect: 0.05,
    what: "the rollout↔trainer log-probability gap jumps beyond its trend",
  },
  {
    name: "mismatch_level",
    quantity: "logp_diff_mean",
    kind: "level",
    direction: "up",
    minEffect: 0.1,
    what: "the rollout↔trainer log-probability gap sits above its bound",
  },
  {
    name: "is_ratio_shift",
    quantity: "is_ratio_mean",
    kind: "shift",
    direction: "both",
    minEffect: 0.05,
    what: "the mean rollout↔trainer importance ratio moves beyond its trend (verl's rollout_corr, TRL's vLLM IS correction)",
  },
  {
    name: "dead_groups",
    quantity: "zero_std_frac",
    kind: "level",
    direction: "up",
    minEffect: 0.5,
    what: "the fraction of prompt groups with zero reward spread (no GRPO gradient) sits above its bound",
  },
  {
    name: "grad_norm_spike",
    quantity: "grad_norm",
    kind: "spike",
    direction: "up",
    minEffect: 5,
    what: "the gradient norm spikes above its running median",
  },
];

/** Options of {@link runLogDetectors}. */
export interface LogDetectorOptions {
  /** The run's family-wise false-alarm level (default 0.05). */
  readonly alpha?: number;
  /** Per detector name, its minimum effect (overrides LOG_DETECTORS' default). */
  readonly minEffect?: Readonly<Record<string, number>>;
  /** Only these detectors (names). */
  readonly only?: readonly string[];
  /** Not these detectors (names). */
  readonly skip?: readonly string[];
  /** Permutations of the shift tests (default 999). */
  readonly nPerm?: number;
  /** Seed of the permutations (default 1). */
  readonly seed?: number;
  /** Tests the caller runs in the same family (a tensor run's length-bias test): they share α. */
  readonly extraTests?: number;
}

/** One detector's outcome. */
export interface LogFinding {
  readonly detector: LogDetectorName;
  readonly quantity: LogQuantity;
  /** The metric name it read. */
  readonly metric: string;
  /** Ran, or skipped with a reason (too few points, not logged). */
  readonly ran: boolean;
  readonly reason?: string;
  /** The level its test ran at (α/m). */
  readonly alpha?: number;
  /** The step it points at (the last step before a shift, a spike, a level window's start). */
  readonly step?: number | null;
  /** The measured effect (δ̂, its relative size, a level's mean, a spike's ratio). */
  readonly effect?: number | null;
  readonly minEffect: number;
  /** The trend per step and its Mann–Kendall p (shift detectors). */
  readonly slope?: number;
  readonly trendP?: number;
  /** Test rejects at its level and the effect is at least the minimum, in the bad direction. */
  readonly alarm: boolean;
  readonly message: string;
}

/** The family's report: every finding, the alarms, and the family's level. */
export interface LogDetectorReport {
  readonly alpha: number;
  /** Tests that ran here (with extraTests, the Bonferroni divisor). */
  readonly tests: number;
  /** The level each test of the family runs at: alpha / (tests + extraTests). */
  readonly perTest: number;
  readonly findings: readonly LogFinding[];
  /** Values logged as NaN or ±∞ in a mapped quantity: an alarm at its first step. */
  readonly nonFinite: readonly {
    readonly metric: string;
    readonly step: number;
    readonly count: number;
  }[];
}

/** A mapped quantity's series: its metric name and points. */
export interface QuantitySeries {
  readonly metric: string;
  readonly steps: ArrayLike<number>;
  readonly values: ArrayLike<number>;
}

const FN = "runLogDetectors";

/**
 * Run the detectors on the mapped series of a run.
 *
 * @param series - Per quantity, the metric it was read from and its points.
 * @param options - α, minimum effects, --only/--skip, permutations and seed.
 * @returns Every detector's finding (ran or skipped, and why) and the non-finite values.
 * @throws {ConfigError} E_CONFIG for an unknown detector name, α outside (0, 1), a minimum effect
 *   that is not a positive finite number.
 */
export function runLogDetectors(
  series: Readonly<Partial<Record<LogQuantity, QuantitySeries>>>,
  options: LogDetectorOptions = {},
): LogDetectorReport {
  const alpha = options.alpha ?? 0.05;
  if (typeof alpha !== "number" || !(alpha > 0 && alpha < 1))
    throw fail(ConfigError, FN, "alpha", "in (0, 1)", fmtValue(alpha));
  const names: readonly string[] = LOG_DETECTOR_NAMES;
  for (const [arg, list] of [
    ["only", options.only ?? []],
    ["skip", options.skip ?? []],
    ["minEffect", Object.keys(options.minEffect ?? {})],
  ] as const)
    for (const n of list)
      if (!names.includes(n))
        throw fail(
          ConfigError,
          FN,
          arg,
          `detector names (${names.join(", ")})${didYouMean(closestNames(n, names))}`,
          fmtValue(n),
        );
  const chosen = LOG_DETECTORS.filter(
    (d) =>
      (options.only === undefined || options.only.includes(d.name)) &&
      !(options.skip ?? []).includes(d.name),
  );
  const reduced = new Map<LogQuantity, Reduced>();
  const runnable = chosen.filter((d) => {
    const s = series[d.quantity];
    if (s === undefined) return false;
    if (!reduced.has(d.quantity)) reduced.set(d.quantity, reduceSeries(s.steps, s.values));
    return (reduced.get(d.quantity) as Reduced).values.length >= minPoints(d);
  });
  const extra = options.extraTests ?? 0;
  const m = Math.max(1, runnable.length + extra);
  const each = alpha / m;
  const findings = chosen.map((d) => {
    const minEffect = effectOf(d, options.minEffect?.[d.name]);
    const s = series[d.quantity];
    if (s === undefined) return skipped(d, "", minEffect, `no logged metric maps to ${d.quantity}`);
    const r = reduced.get(d.quantity) as Reduced;
    if (!runnable.includes(d))
      return skipped(
        d,
        s.metric,
        minEffect,
        `${r.values.length} finite point(s); the test needs ${minPoints(d)}`,
      );
    return run(d, s.metric, r, each, minEffect, options);
  });
  return { alpha, tests: runnable.length, perTest: each, findings, nonFinite: nonFiniteOf(series) };
}

function minPoints(d: LogDetector): number {
  return d.kind === "level" ? 10 : MIN_TEST_POINTS;
}

function effectOf(d: LogDetector, given: number | undefined): number {
  if (given === undefined) return d.minEffect;
  if (typeof given !== "number" || !(given > 0) || !Number.isFinite(given))
    throw fail(ConfigError, FN, `minEffect.${d.name}`, "a positive finite number", fmtValue(given));
  return given;
}

function skipped(d: LogDetector, metric: string, minEffect: number, reason: string): LogFinding {
  return {
    detector: d.name,
    quantity: d.quantity,
    metric,
    ran: false,
    reason,
    minEffect,
    alarm: false,
    message: `${d.name}: not run (${reason})`,
  };
}

function run(
  d: LogDetector,
  metric: string,
  r: Reduced,
  alpha: number,
  minEffect: number,
  options: LogDetectorOptions,
): LogFinding {
  const base = { detector: d.name, quantity: d.quantity, metric, ran: true, alpha, minEffect };
  if (d.kind === "level") {
    const l = levelTest(r, minEffect);
    const alarm = l.p <= alpha;
    return {
      ...base,
      step: l.from,
      effect: l.mean,
      alarm,
      message: `${d.name}: ${metric} averages ${fmt(l.mean)} over its last ${l.window} point(s) from step ${l.from} (bound ${minEffect}, one-sided p ${fmt(l.p)})${alarm ? ": alarm" : ""}`,
    };
  }
  if (d.kind === "spike") {
    const sp = spikeTest(r, alpha, minEffect);
    const alarm = sp.step !== null;
    return {
      ...base,
      step: sp.step,
      effect: sp.ratio,
      alarm,
      message: alarm
        ? `${d.name}: ${metric} spikes to ${fmt(sp.ratio as number)}× its running median at step ${sp.step} (${sp.count} spike(s)): alarm`
        : `${d.name}: no spike of ${metric} (≥ ${minEffect}× the running median beyond the Bonferroni bound)`,
    };
  }
  const sh = shiftTest(
    r,
    alpha,
    permutationsFor(alpha, options.nPerm ?? 999, r.values.length),
    options.seed ?? 1,
  );
  const size =
    sh.shift === null
      ? null
      : d.relative === true
        ? sh.before === 0
          ? Number.POSITIVE_INFINITY
          : sh.shift / Math.abs(sh.before as number)
        : sh.shift;
  const bad =
    size !== null &&
    (d.direction === "up"
      ? size >= minEffect
      : d.direction === "down"
        ? -size >= minEffect
        : Math.abs(size) >= minEffect);
  const trend = { slope: sh.slope, trendP: sh.trendP };
  return {
    ...base,
    ...trend,
    step: sh.step,
    effect: size,
    alarm: bad,
    message:
      sh.step === null
        ? `${d.name}: no shift of ${metric} beyond its trend (${fmt(sh.slope)} per step, Mann–Kendall p ${fmt(sh.trendP)})`
        : `${d.name}: ${metric} shifts by ${fmt(size as number)}${d.relative ? " (relative)" : ""} after step ${sh.step} beyond its trend (minimum ${d.direction === "both" ? "±" : d.direction === "up" ? "+" : "−"}${minEffect})${bad ? ": alarm" : ""}`,
  };
}

/**
 * The permutations of a shift test at level `alpha`: `base` while it can reject at that level
 * (⌊alpha · (base + 1)⌋ ≥ 1); below that (a family of many tests, a folder of many runs, a small
 * --alpha) the fewest that can, with two permuted statistics beyond the threshold, ⌈2 / alpha⌉ − 1,
 * within the bounds of seriesTrend (MAX_PERMUTATIONS, MAX_PERMUTATION_WORK over n points).
 * @internal
 */
export function permutationsFor(alpha: number, base: number, n: number): number {
  if (Math.floor(alpha * (base + 1)) >= 1) return base;
  const need = Math.ceil(2 / alpha) - 1;
  return Math.max(base, Math.min(need, MAX_PERMUTATIONS, Math.floor(MAX_PERMUTATION_WORK / n)));
}

function nonFiniteOf(
  series: Readonly<Partial<Record<LogQuantity, QuantitySeries>>>,
): LogDetectorReport["nonFinite"] {
  const out: { metric: string; step: number; count: number }[] = [];
  for (const s of Object.values(series)) {
    if (s === undefined) continue;
    let first: number | null = null;
    let count = 0;
    for (let i = 0; i < s.values.length; i++)
      if (!Number.isFinite(s.values[i] as number)) {
        count++;
        first ??= s.steps[i] as number;
      }
    if (first !== null) out.push({ metric: s.metric, step: first, count });
  }
  return out;
}

function fmt(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(4))) : String(x);
}
