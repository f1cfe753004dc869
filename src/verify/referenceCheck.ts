import { createRng } from "../core/rng.js";
import { VerificationError } from "../errors.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { policyLoss } from "../losses/policyLoss.js";
import { checkShape, checkVerifyBudget } from "./budget.js";
import { drawBatch } from "./draw.js";
import { formatFailure } from "./failure.js";
import { inputsFor } from "./gradcheckLoss.js";
import { policyLossRef } from "./reference/index.js";

/** Options of {@link checkAgainstReference}. */
export interface ReferenceCheckOptions {
  readonly seed?: number;
  readonly cases?: number;
  readonly shapes?: readonly (readonly [number, number])[];
  /** Norm-wise tolerance max|x − x_ref| ≤ tol·max(1, max|x_ref|) (default 1e-13). */
  readonly tolerance?: number;
  /** Replay exactly one case. */
  readonly replay?: { readonly seed: number; readonly shape: readonly [number, number] };
  /** A CLI command replaying a failure, with `{seed}`, `{B}`, `{T}` placeholders. */
  readonly replayCommand?: string;
}

/** Result of {@link checkAgainstReference}. */
export interface ReferenceCheckReport {
  readonly ok: boolean;
  readonly cases: number;
  /** Worst |loss − loss_ref| / max(1, |loss_ref|). */
  readonly maxLossErr: number;
  /** Worst max|g − g_ref| / max(1, max|g_ref|). */
  readonly maxGradErr: number;
  readonly worstSeed: number | null;
}

/**
 * Compare polgrad's closed-form loss and gradient with the equation-level reference differentiated
 * by exact autodiff, on seeded ragged batches (no kink avoidance is needed: both sides pick the same
 * branch and share the tie conventions).
 *
 * Formula: errors max|x − x_ref| / max(1, max|x_ref|) for the loss and the gradient; pass iff both ≤ tol.
 * Gradient / stop-gradient: the reference places every sg[·] literally on its tape.
 *
 * @param config - The policy-loss config.
 * @param options - Seed, cases, shapes, tolerance, replay.
 * @returns The report when every case passes.
 * @throws {VerificationError} E_VERIFY with the replay seed when a case disagrees.
 * @throws {ConfigError} E_CONFIG when `cases` exceeds 1000 or a shape exceeds B, T ≤ 1024,
 *   B·T ≤ 4096 (docs/cli.md#bounds).
 * @derivation docs/derivations/verify.md#checkagainstreference
 * @enforcedBy test/verify/referenceCheck.test.ts > checkAgainstReference > golden: every registry algorithm agrees with its reference to 1e-13
 * @since 0.1.0
 */
export function checkAgainstReference(
  config: PolicyLossConfig,
  options: ReferenceCheckOptions = {},
): ReferenceCheckReport {
  const name = "checkAgainstReference";
  const tol = options.tolerance ?? 1e-13;
  const shapes = options.shapes ?? [
    [2, 3],
    [3, 5],
    [4, 7],
  ];
  // Budgets first: nothing is allocated for a case count or a shape over its cap.
  if (!Array.isArray(shapes) || shapes.length === 0) checkShape(name, "options.shapes", shapes);
  const cases = checkVerifyBudget(name, shapes, options.replay, options.cases);
  const master = createRng(options.seed ?? 0);
  const plan = options.replay
    ? [options.replay]
    : Array.from({ length: cases }, (_, i) => ({
        seed: master.childSeed(),
        shape: shapes[i % shapes.length] as readonly [number, number],
      }));
  let maxLossErr = 0;
  let maxGradErr = 0;
  let worstSeed: number | null = null;
  let worst = {
    err: -1,
    seed: 0,
    shape: [0, 0] as readonly [number, number],
    loss: 0,
    lossRef: 0,
    gradErr: 0,
  };
  for (const { seed, shape } of plan) {
    const batch = drawBatch(seed, shape);
    const inputs = inputsFor(config, batch);
    const got = policyLoss(config, inputs);
    const ref = policyLossRef(config, inputs as Parameters<typeof policyLossRef>[1]);
    const lossErr = Math.abs(got.loss - ref.loss) / Math.max(1, Math.abs(ref.loss));
    let scale = 1;
    let diff = 0;
    for (let i = 0; i < ref.grad.data.length; i++) {
      scale = Math.max(scale, Math.abs(ref.grad.data[i] as number));
      diff = Math.max(
        diff,
        Math.abs((got.gradLogprobs.data[i] as number) - (ref.grad.data[i] as number)),
      );
    }
    const gradErr = diff / scale;
    maxLossErr = Math.max(maxLossErr, lossErr);
    maxGradErr = Math.max(maxGradErr, gradErr);
    const err = Math.max(lossErr, gradErr);
    if (err > worst.err) {
      worst = { err, seed, shape, loss: got.loss, lossRef: ref.loss, gradErr };
      worstSeed = seed;
    }
  }
  const ok = !(worst.err > tol);
  const report: ReferenceCheckReport = {
    ok,
    cases: plan.length,
    maxLossErr,
    maxGradErr,
    worstSeed,
  };
  if (!ok) {
    throw new VerificationError(
      name,
      formatFailure({
        headline: `${name}: policyLoss(${config.surrogate}, ${config.ratio}, ${config.aggregation}) disagrees with its autodiff reference`,
        replay: { seed: worst.seed, shape: worst.shape },
        lines: [
          `loss ${worst.loss} vs reference ${worst.lossRef}; gradient error ${worst.gradErr.toExponential(3)} (norm-wise)`,
          `worst error ${worst.err.toExponential(3)} > tolerance ${tol}`,
        ],
        hints: [
          `replay this case alone: checkAgainstReference(config, { replay: { seed: ${worst.seed}, shape: [${worst.shape.join(", ")}] } })`,
          ...(options.replayCommand
            ? [
                `from a shell: ${options.replayCommand.replace("{seed}", String(worst.seed)).replace("{B}", String(worst.shape[0])).replace("{T}", String(worst.shape[1]))}`,
              ]
            : []),
        ],
      }),
      worst.seed,
      report,
    );
  }
  return report;
}
