/**
 * Diagnose a whole run on disk: a folder of per-step batch files `step_<n>.safetensors` or
 * `step_<n>.json`, read one at a time in step order (docs/diagnostics/run.md#a-run). Per step it
 * keeps only scalars (ESS/n, mismatch spread, catastrophic tokens, entropy, clip census, length
 * slope); across steps it computes trends, so memory stays flat in the number of steps.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { checkObject } from "../advantages/checks.js";
import { fmtValue, mustBe, safeText } from "../core/message.js";
import { createRng } from "../core/rng.js";
import { ConfigError, IoError, PolgradError } from "../errors.js";
import { toPartialBatch } from "../io/batch.js";
import { readTensors } from "../io/readTensors.js";
import { type DetectorName, type DiagnoseOptions, diagnoseBatch } from "./diagnoseBatch.js";
import { MAX_THEIL_SEN_POINTS, type TrendReport, theilSenSlope, trendTest } from "./trend.js";

/** Per-step scalars kept for the run (null where the detector was skipped). */
export interface RunStep {
  readonly step: number;
  readonly file: string;
  readonly essRatio: number | null;
  readonly mismatchGapStd: number | null;
  readonly catastrophicCount: number | null;
  /** At most 10 catastrophic positions of the step, row-major. */
  readonly catastrophicIndices: readonly (readonly [number, number])[];
  readonly entropy: number | null;
  readonly clipKilledFrac: number | null;
  readonly lengthSlope: number | null;
  readonly lengthCiLow: number | null;
  readonly lengthCiHigh: number | null;
}

/** A step file that could not be read or diagnosed, or a step missing from the sequence. */
export interface RunProblem {
  readonly file: string;
  readonly step: number | null;
  readonly message: string;
}

/** First, last, extremes and Theil–Sen slope of one per-step series. */
export interface SeriesSummary {
  readonly steps: number;
  readonly first: { readonly step: number; readonly value: number };
  readonly last: { readonly step: number; readonly value: number };
  readonly min: { readonly step: number; readonly value: number };
  readonly max: { readonly step: number; readonly value: number };
  /** Theil–Sen slope per series index (per step when steps are consecutive), over the last 4096 points. */
  readonly slope: number;
}

/** The run-level diagnosis. */
export interface RunDiagnosis {
  readonly dir: string;
  readonly steps: readonly RunStep[];
  readonly problems: readonly RunProblem[];
  /** Detectors skipped on some steps: detector, reason, and on how many steps. */
  readonly skipped: readonly {
    readonly detector: DetectorName;
    readonly reason: string;
    readonly steps: number;
  }[];
  readonly series: {
    readonly essRatio: SeriesSummary | null;
    readonly mismatchGapStd: SeriesSummary | null;
    readonly entropy: SeriesSummary | null;
    readonly clipKilledFrac: SeriesSummary | null;
    readonly lengthSlope: SeriesSummary | null;
  };
  /** CUSUM/permutation changepoint test on the trailing entropy window; `changepointStep` maps the index to a step number. */
  readonly entropyTrend:
    | (TrendReport & { readonly window: number; readonly changepointStep: number | null })
    | null;
  readonly catastrophic: {
    readonly total: number;
    readonly steps: readonly number[];
    readonly positions: readonly (readonly [number, number])[];
  };
  readonly lengthBias: {
    readonly stepsExcludingZero: number;
    readonly firstExcludingZero: number | null;
    readonly lastExcludesZero: boolean;
  } | null;
  /** Human-readable alarms; the CLI exits 1 when there is one. */
  readonly alarms: readonly string[];
}

/** Options of {@link diagnoseRun}. */
export interface DiagnoseRunOptions extends DiagnoseOptions {
  /** Trailing window of the entropy changepoint test (default min(S, 4096, max(20, round(0.6·S)))). */
  readonly window?: number;
  readonly nPerm?: number;
  readonly alpha?: number;
  /** Seed of the permutation test (default 1). */
  readonly seed?: number;
  /** Alarm when the last step's ESS/n is below this (default 0.5). */
  readonly essAlarm?: number;
}

const STEP_FILE = /^step_(\d+)\.(safetensors|json)$/;

/**
 * List a run directory's step files in step order.
 *
 * @param dir - The run directory.
 * @returns Step number and file name of each step file; duplicates (the same step twice) are
 *   returned as problems.
 * @throws {IoError} E_IO when `dir` is not a readable directory.
 * @derivation docs/diagnostics/run.md#a-run
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseRun > rejects: a corrupt and a missing step are reported by name and the rest is diagnosed
 * @since 0.1.0
 */
export function listRunSteps(dir: string): {
  files: { step: number; file: string }[];
  problems: RunProblem[];
} {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new IoError(
      "diagnoseRun",
      "dir",
      mustBe(
        "diagnoseRun",
        "dir",
        "a readable directory of step files",
        `${(e as NodeJS.ErrnoException).code ?? "error"} (${safeText(String(dir))})`,
      ),
      String(dir),
    );
  }
  const seen = new Map<number, string>();
  const problems: RunProblem[] = [];
  for (const name of names.sort()) {
    const m = STEP_FILE.exec(name);
    if (!m) continue;
    const step = Number(m[1]);
    const prev = seen.get(step);
    if (prev !== undefined) {
      problems.push({
        file: name,
        step,
        message: `step ${step} is also in ${prev}; ${name} is ignored`,
      });
      continue;
    }
    seen.set(step, name);
  }
  const files = [...seen].map(([step, file]) => ({ step, file })).sort((a, b) => a.step - b.step);
  return { files, problems };
}

function summarize(points: readonly { step: number; value: number }[]): SeriesSummary | null {
  if (points.length === 0) return null;
  let min = points[0] as { step: number; value: number };
  let max = min;
  for (const p of points) {
    if (p.value < min.value) min = p;
    if (p.value > max.value) max = p;
  }
  return {
    steps: points.length,
    first: points[0] as { step: number; value: number },
    last: points[points.length - 1] as { step: number; value: number },
    min,
    max,
    // Theil–Sen sorts n(n − 1)/2 slopes: past MAX_THEIL_SEN_POINTS steps, the trailing ones.
    slope:
      points.length >= 2
        ? theilSenSlope(points.slice(-MAX_THEIL_SEN_POINTS).map((p) => p.value))
        : 0,
  };
}

/**
 * Diagnose every step file of a run directory, one step in memory at a time, and compute the
 * cross-step trends.
 *
 * Formula: per step, diagnoseBatch; across steps, Theil–Sen slopes of each series and the
 * entropy changepoint test (trendTest: CUSUM vs the m-th largest of nPerm permuted CUSUMs, exact
 * level ≤ α) on the trailing window.
 * Null distributions: docs/diagnostics/*.md; alarms fire on a detected entropy changepoint, any
 * catastrophic token, a last-step ESS/n below `essAlarm`, and a last-step length-slope CI that
 * excludes 0.
 *
 * @param dir - The run directory.
 * @param options - Detector options, trend window/permutations/seed, ESS alarm level.
 * @param onStep - Called after each step file (for a progress display).
 * @returns The run diagnosis; unreadable or invalid step files are listed in `problems` and the
 *   other steps are still diagnosed.
 * @throws {IoError} E_IO when `dir` is not a directory or holds no step files.
 * @throws {ConfigError} E_CONFIG for invalid trend options (window ≤ 4096, nPerm ≤ 1e6 and
 *   nPerm·window ≤ 1e8 are capped), a non-object options or a non-function onStep.
 * @throws {OverflowError} E_OVERFLOW when a cross-step slope or trend statistic exceeds float64.
 * @derivation docs/diagnostics/run.md#a-run
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseRun > golden: the demo run fires every detector at its injection point
 * @enforcedBy test/diagnostics/diagnose.test.ts > diagnoseRun > rejects: a corrupt and a missing step are reported by name and the rest is diagnosed
 * @enforcedBy test/diagnostics/hardening.test.ts > diagnoseRun > regression: a rollout gap beyond 709 nats raises an alarm instead of passing as a skipped detector
 * @since 0.1.0
 */
export function diagnoseRun(
  dir: string,
  options: DiagnoseRunOptions = {},
  onStep?: (done: number, total: number) => void,
): RunDiagnosis {
  const opts = checkObject("diagnoseRun", "options", options);
  if (onStep !== undefined && typeof onStep !== "function") {
    throw new ConfigError(
      "diagnoseRun",
      "onStep",
      mustBe("diagnoseRun", "onStep", "a function or undefined", fmtValue(onStep)),
    );
  }
  const { files, problems } = listRunSteps(dir);
  if (files.length === 0) {
    throw new IoError(
      "diagnoseRun",
      "dir",
      mustBe(
        "diagnoseRun",
        "dir",
        "a directory holding step_<n>.safetensors or step_<n>.json files",
        `none in ${safeText(dir)}`,
      ),
      dir,
    );
  }
  const essAlarm = opts.essAlarm ?? 0.5;
  if (typeof essAlarm !== "number" || !(essAlarm >= 0 && essAlarm <= 1)) {
    throw new ConfigError(
      "diagnoseRun",
      "essAlarm",
      mustBe("diagnoseRun", "essAlarm", "in [0, 1]", fmtValue(essAlarm)),
    );
  }
  for (let i = 1; i < files.length; i++) {
    const a = (files[i - 1] as { step: number }).step;
    const b = (files[i] as { step: number }).step;
    if (b - a > 1) {
      const gap = b - a - 1;
      problems.push({
        file: `step ${a + 1}${gap > 1 ? `..${b - 1}` : ""}`,
        step: a + 1,
        message: `${gap} step file(s) missing between steps ${a} and ${b}`,
      });
    }
  }
  const steps: RunStep[] = [];
  const skipCounts = new Map<string, { detector: DetectorName; reason: string; steps: number }>();
  // Steps whose rollout↔trainer gap is so large (|Δ| > 709.78) that the mismatch KL overflows:
  // catastrophic by any threshold, so they raise an alarm rather than pass as a skipped detector.
  const mismatchOverflowSteps: number[] = [];
  files.forEach(({ step, file }, k) => {
    try {
      const d = diagnoseBatch(toPartialBatch(readTensors(join(dir, file))), opts);
      if (d.skipped.some((s) => s.detector === "mismatch" && s.code === "E_OVERFLOW"))
        mismatchOverflowSteps.push(step);
      for (const s of d.skipped) {
        const reason = s.reason.replace(/ \(in [^)]*\)$/, "");
        const key = `${s.detector}\u0000${reason}`;
        const entry = skipCounts.get(key) ?? { detector: s.detector, reason, steps: 0 };
        entry.steps++;
        skipCounts.set(key, entry);
      }
      steps.push({
        step,
        file,
        essRatio: d.ess?.essRatio ?? null,
        mismatchGapStd: d.mismatch?.gapStd ?? null,
        catastrophicCount: d.mismatch?.catastrophicCount ?? null,
        catastrophicIndices: (d.mismatch?.catastrophicIndices ?? []).slice(0, 10),
        entropy: d.entropy?.entropyEstimate ?? null,
        clipKilledFrac: d.clip?.gradientKilledFrac ?? null,
        lengthSlope: d.lengthBias?.slope ?? null,
        lengthCiLow: d.lengthBias?.ciLow ?? null,
        lengthCiHigh: d.lengthBias?.ciHigh ?? null,
      });
    } catch (e) {
      if (!(e instanceof PolgradError)) throw e;
      problems.push({ file, step, message: e.message });
    }
    onStep?.(k + 1, files.length);
  });
  const series = (pick: (s: RunStep) => number | null) =>
    steps.flatMap((s) => {
      const v = pick(s);
      return v === null ? [] : [{ step: s.step, value: v }];
    });
  const entropyPoints = series((s) => s.entropy);
  let entropyTrend: RunDiagnosis["entropyTrend"] = null;
  if (entropyPoints.length >= 3) {
    const S = entropyPoints.length;
    const window =
      opts.window ?? Math.min(S, MAX_THEIL_SEN_POINTS, Math.max(20, Math.round(0.6 * S)));
    const t = trendTest(
      entropyPoints.map((p) => p.value),
      {
        window: Math.min(window, S),
        nPerm: opts.nPerm ?? 999,
        alpha: opts.alpha ?? 0.05,
        rng: createRng(opts.seed ?? 1),
      },
      { fn: "diagnoseRun", arg: "entropy series" },
    );
    entropyTrend = {
      ...t,
      window: Math.min(window, S),
      changepointStep:
        t.changepointIndex === null
          ? null
          : (entropyPoints[t.changepointIndex] as { step: number }).step,
    };
  }
  const catSteps = steps.filter((s) => (s.catastrophicCount ?? 0) > 0);
  const positions = new Map<string, [number, number]>();
  for (const s of catSteps)
    for (const [b, t] of s.catastrophicIndices) positions.set(`${b},${t}`, [b, t]);
  const withCi = steps.filter((s) => s.lengthCiLow !== null && s.lengthCiHigh !== null);
  const excludes = (s: RunStep) => (s.lengthCiLow as number) > 0 || (s.lengthCiHigh as number) < 0;
  const lengthBias =
    withCi.length === 0
      ? null
      : {
          stepsExcludingZero: withCi.filter(excludes).length,
          firstExcludingZero: withCi.find(excludes)?.step ?? null,
          lastExcludesZero: excludes(withCi[withCi.length - 1] as RunStep),
        };
  const essSummary = summarize(series((s) => s.essRatio));
  const alarms: string[] = [];
  if (entropyTrend?.changepointStep != null)
    alarms.push(`entropy changepoint after step ${entropyTrend.changepointStep}`);
  const total = catSteps.reduce((a, s) => a + (s.catastrophicCount as number), 0);
  if (total > 0) alarms.push(`${total} catastrophic token(s) on ${catSteps.length} step(s)`);
  if (mismatchOverflowSteps.length > 0)
    alarms.push(
      `rollout/trainer logprob gap beyond 709 nats (the mismatch KL overflows float64) on ${mismatchOverflowSteps.length} step(s), first at step ${mismatchOverflowSteps[0]}`,
    );
  if (essSummary !== null && essSummary.last.value < essAlarm)
    alarms.push(
      `ESS/n ${essSummary.last.value.toFixed(3)} < ${essAlarm} at step ${essSummary.last.step}`,
    );
  if (lengthBias?.lastExcludesZero) alarms.push("length-bias slope CI excludes 0 at the last step");
  return {
    dir,
    steps,
    problems: problems.sort((a, b) => (a.step ?? -1) - (b.step ?? -1)),
    skipped: [...skipCounts.values()],
    series: {
      essRatio: essSummary,
      mismatchGapStd: summarize(series((s) => s.mismatchGapStd)),
      entropy: summarize(entropyPoints),
      clipKilledFrac: summarize(series((s) => s.clipKilledFrac)),
      lengthSlope: summarize(series((s) => s.lengthSlope)),
    },
    entropyTrend,
    catastrophic: { total, steps: catSteps.map((s) => s.step), positions: [...positions.values()] },
    lengthBias,
    alarms,
  };
}
