import { fmtValue } from "../core/message.js";
import { createRng } from "../core/rng.js";
import { isMatrix, type Matrix } from "../core/tensor.js";
import {
  checkEps,
  checkPositive,
  requireFunction,
  requireInteger,
  requireObject,
} from "../core/validate.js";
import { ConfigError, fail, VerificationError } from "../errors.js";
import { checkVerifyBudget, MAX_VERIFY_ATTEMPTS } from "./budget.js";
import { type DrawnBatch, drawBatch } from "./draw.js";
import { formatFailure } from "./failure.js";

/** What a checked function returns: its value and its gradient w.r.t. `logprobs`. */
export interface ValueAndGrad {
  readonly value: number;
  readonly grad: Matrix | readonly (readonly number[])[];
}

/** Options of {@link gradcheck}. */
export interface GradcheckOptions {
  /** Batch shapes `[B, T]`, cycled over the cases (default `[[2, 3], [3, 5]]`). */
  readonly shapes?: readonly (readonly [number, number])[];
  /** Number of cases (default: 2 per shape). */
  readonly cases?: number;
  /** Master seed; each case draws its own seed from it (default 0). */
  readonly seed?: number;
  /** Replay exactly one case, as printed by a failure report. */
  readonly replay?: { readonly seed: number; readonly shape: readonly [number, number] };
  /** Ragged right-padded masks (default true). */
  readonly ragged?: boolean;
  /** Central-difference step (default 1e-6). */
  readonly h?: number;
  /** Tolerance: |analytic − numeric| ≤ atol + rtol·max|numeric| at every coordinate (defaults 1e-9, 1e-6). */
  readonly rtol?: number;
  readonly atol?: number;
  /** Distance of a batch to the nearest kink of the function (clip edge, tie, |x| = 0); draws closer than `margin` are redrawn. */
  readonly kinkDistance?: (batch: DrawnBatch) => number;
  /** Minimum kink distance (default 1e-3). */
  readonly margin?: number;
  /** Redraws allowed per case before giving up (default 64). */
  readonly maxAttempts?: number;
  /** Name used in failure messages and hints (default "fn"). */
  readonly label?: string;
  /** A CLI command that replays the failure, with `{seed}`, `{B}` and `{T}` placeholders, printed as a hint. */
  readonly replayCommand?: string;
}

/** The worst coordinate of a gradcheck. */
export interface GradcheckWorst {
  readonly seed: number;
  readonly shape: readonly [number, number];
  readonly b: number;
  readonly t: number;
  readonly analytic: number;
  readonly numeric: number;
  readonly absErr: number;
  readonly tolerance: number;
}

/** Result of {@link gradcheck}. */
export interface GradcheckReport {
  readonly ok: boolean;
  readonly cases: number;
  /** max over cases of max|analytic − numeric| / max(max|numeric|, 1e-300). */
  readonly maxRelErr: number;
  readonly worst: GradcheckWorst | null;
  /** Response-position count checked, summed over cases. */
  readonly coordinates: number;
  /** Padding positions whose analytic gradient was not exactly 0. */
  readonly paddingLeaks: number;
}

function gradAt(g: ValueAndGrad["grad"], b: number, t: number, T: number): number {
  return isMatrix(g) ? (g.data[b * T + t] as number) : ((g[b] as readonly number[])[t] as number);
}

/**
 * Check a function's analytic gradient w.r.t. `logprobs` against central finite differences on
 * seeded ragged batches drawn away from its kinks; for any `(batch) => { value, grad }`, your own
 * losses included.
 *
 * Formula: numeric_{b,t} = (f(lp + h·e_{b,t}) − f(lp − h·e_{b,t}))/(2h) at every response position;
 * pass iff |analytic − numeric| ≤ atol + rtol·max|numeric| everywhere and the analytic gradient is
 * exactly 0 at padding.
 * Gradient / stop-gradient: finite differences see through stop-gradients, so a loss with sg[·]
 * must be checked through its sg-frozen equivalent (see gradcheckLoss).
 *
 * @param fn - The function under test; reads `batch.logprobs` (and any other stream it needs). The
 *   second argument is the unperturbed batch of the case, for functions whose stop-gradient
 *   factors must stay frozen at the base point.
 * @param options - Shapes, seed or replay, tolerances, kink distance and margin.
 * @returns The report, when every case passes.
 * @throws {VerificationError} E_VERIFY with the worst coordinate and the replay seed when a case fails, or when no kink-free batch could be drawn.
 * @throws {ConfigError} E_CONFIG when an option is invalid or over its cap (cases ≤ 1000,
 *   maxAttempts ≤ 10000, shapes B, T ≤ 1024 with B·T ≤ 4096; docs/cli.md#bounds).
 * @derivation docs/derivations/verify.md#gradcheck
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheck > golden: a correct gradient passes and a dropped factor fails with its replay seed
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheck > identity: the printed replay reproduces the failing case
 * @since 0.1.0
 */
export function gradcheck(
  fn: (batch: DrawnBatch, base: DrawnBatch) => ValueAndGrad,
  options: GradcheckOptions = {},
): GradcheckReport {
  requireFunction("gradcheck", "fn", fn, "a function of (batch, base) returning {value, grad}");
  requireObject("gradcheck", "options", options, "GradcheckOptions");
  const name = "gradcheck";
  const h = checkPositive(name, "options.h", options.h ?? 1e-6);
  const rtol = checkEps(name, "options.rtol", options.rtol ?? 1e-6);
  const atol = checkEps(name, "options.atol", options.atol ?? 1e-9);
  const margin = checkEps(name, "options.margin", options.margin ?? 1e-3);
  const maxAttempts = options.maxAttempts ?? 64;
  requireInteger(name, "options.maxAttempts", maxAttempts, 1, MAX_VERIFY_ATTEMPTS);
  const shapes = options.shapes ?? [
    [2, 3],
    [3, 5],
  ];
  if (
    shapes.length === 0 ||
    shapes.some((s) => s.length !== 2 || !s.every((d) => Number.isInteger(d) && d >= 1))
  ) {
    throw fail(
      ConfigError,
      name,
      "options.shapes",
      "a non-empty list of [B, T] with B, T >= 1",
      fmtValue(shapes),
    );
  }
  const cases = checkVerifyBudget(name, shapes, options.replay, options.cases);
  const label = options.label ?? "fn";
  const master = createRng(options.seed ?? 0);
  const plan: { seed: number; shape: readonly [number, number] }[] = [];
  if (options.replay) plan.push({ seed: options.replay.seed, shape: options.replay.shape });
  else {
    const n = cases;
    for (let i = 0; i < n; i++)
      plan.push({ seed: -1, shape: shapes[i % shapes.length] as [number, number] });
  }
  let worst: GradcheckWorst | null = null;
  let worstRatio = -1;
  let maxRelErr = 0;
  let coordinates = 0;
  let paddingLeaks = 0;
  for (const item of plan) {
    let seed = item.seed;
    let batch: DrawnBatch | null = null;
    for (let attempt = 0; attempt < (options.replay ? 1 : maxAttempts); attempt++) {
      if (!options.replay) seed = master.childSeed();
      const candidate = drawBatch(seed, item.shape, options.ragged ?? true);
      if (!options.kinkDistance || options.kinkDistance(candidate) >= margin) {
        batch = candidate;
        break;
      }
    }
    if (batch === null) {
      throw new VerificationError(
        name,
        `${name}: could not draw a batch at least ${margin} from every kink of ${label} in ${maxAttempts} attempts (shape [${item.shape.join(", ")}])`,
      );
    }
    const [B, T] = item.shape;
    const base = batch;
    const analytic = fn(base, base).grad;
    const numeric: number[][] = batch.logprobs.map((row) => row.map(() => 0));
    let scale = 0;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        if (!(batch.responseMask[b] as boolean[])[t]) {
          if (!Object.is(Math.abs(gradAt(analytic, b, t, T)), 0)) paddingLeaks++;
          continue;
        }
        const shifted = (d: number): number => {
          const lp = batch.logprobs.map((r) => r.slice());
          (lp[b] as number[])[t] = ((batch.logprobs[b] as number[])[t] as number) + d;
          return fn({ ...base, logprobs: lp }, base).value;
        };
        const g = (shifted(h) - shifted(-h)) / (2 * h);
        (numeric[b] as number[])[t] = g;
        scale = Math.max(scale, Math.abs(g));
        coordinates++;
      }
    }
    const tolerance = atol + rtol * scale;
    let caseMax = 0;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        if (!(batch.responseMask[b] as boolean[])[t]) continue;
        const a = gradAt(analytic, b, t, T);
        const nu = (numeric[b] as number[])[t] as number;
        const err = Number.isFinite(a) ? Math.abs(a - nu) : Number.POSITIVE_INFINITY;
        caseMax = Math.max(caseMax, err);
        if (err / tolerance > worstRatio) {
          worstRatio = err / tolerance;
          worst = {
            seed,
            shape: item.shape,
            b,
            t,
            analytic: a,
            numeric: nu,
            absErr: err,
            tolerance,
          };
        }
      }
    }
    maxRelErr = Math.max(maxRelErr, caseMax / Math.max(scale, 1e-300));
  }
  const ok = worstRatio <= 1 && paddingLeaks === 0;
  const report: GradcheckReport = {
    ok,
    cases: plan.length,
    maxRelErr,
    worst,
    coordinates,
    paddingLeaks,
  };
  if (!ok && worst !== null) {
    const w = worst;
    throw new VerificationError(
      name,
      formatFailure({
        headline:
          paddingLeaks > 0 && worstRatio <= 1
            ? `${name}: ${label} has a non-zero gradient at ${paddingLeaks} padding position(s)`
            : `${name}: ${label}'s analytic gradient disagrees with central finite differences`,
        replay: { seed: w.seed, shape: w.shape },
        lines: [
          `worst coordinate (b=${w.b}, t=${w.t}): analytic ${w.analytic}, numeric ${w.numeric}`,
          `|analytic - numeric| = ${w.absErr.toExponential(3)} vs tolerance ${w.tolerance.toExponential(3)} (atol ${atol} + rtol ${rtol} * max|numeric|; h = ${h})`,
        ],
        hints: [
          `replay this case alone: gradcheck(fn, { replay: { seed: ${w.seed}, shape: [${w.shape.join(", ")}] } })`,
          ...(options.replayCommand
            ? [
                `from a shell: ${options.replayCommand.replace("{seed}", String(w.seed)).replace("{B}", String(w.shape[0])).replace("{T}", String(w.shape[1]))}`,
              ]
            : []),
        ],
      }),
      w.seed,
      report,
    );
  }
  return report;
}
