/**
 * Certify a loss implementation against polgrad's (polgrad's `assert_conforms`,
 * docs/testing.md#assertconforms): the implementation's loss and its own gradient w.r.t.
 * logprobs are compared with the reference's on seeded random batches; a drift throws a
 * VerificationError carrying the whole report, its diagnosis and a replay line. Usable from any
 * test runner (vitest, node:test, jest): it throws or returns. Browser-safe.
 */

import { caseMetrics } from "../conformance/compare.js";
import type { ConformanceReport } from "../conformance/conformanceReport.js";
import { getFrameworkModel } from "../conformance/frameworks/registry.js";
import { type CaseResult, nearestMatch } from "../conformance/nearestMatch.js";
import {
  checkShapes,
  DEFAULT_TEST_SHAPES,
  randomBatches,
  type TestBatch,
} from "../conformance/randomBatches.js";
import { fmtValue } from "../core/message.js";
import { pyExp } from "../core/pyFormat.js";
import { checkEps } from "../core/validate.js";
import { ConfigError, fail, VerificationError } from "../errors.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import { getAlgorithm } from "../registry/registry.js";
import { conformanceSummary } from "../report/conformanceText.js";

/** What the implementation under test returns for one batch. */
export interface ImplementationResult {
  readonly loss: number;
  /** ∂loss/∂logprobs from the implementation's own autodiff: `[B][T]` rows or a row-major Matrix. */
  readonly gradLogprobs:
    | readonly (readonly number[])[]
    | { readonly rows: number; readonly cols: number; readonly data: ArrayLike<number> };
}

/** The implementation under test. */
export type LossImplementation = (inputs: PolicyLossInputs) => ImplementationResult;

/** Options of {@link assertConforms}. */
export interface ConformsOptions {
  /** Cases (default 64). */
  readonly nCases?: number;
  /** Shapes, cycled (default [[4, 8], [2, 12]]). */
  readonly shapes?: readonly (readonly [number, number])[];
  /** Master seed of randomBatches (default 0). */
  readonly seed?: number;
  /** Max loss relative difference (default 1e-9). */
  readonly lossRtol?: number;
  /** Max gradient relative difference (default 1e-9). */
  readonly gradRtol?: number;
  /** Advantages `[B]` (row, default, as polgrad) or `[B, T]` (token). */
  readonly advantages?: "row" | "token";
  /**
   * `strip` (default, polgrad's rule): a reference's as-loss KL term is removed and the surrogate
   * certified without it (a note says so); `include`: the KL term is kept and the implementation
   * gets `refLogprobs`.
   */
  readonly kl?: "strip" | "include";
  /** The module name the replay line imports from (default `polgrad/testing`). */
  readonly importFrom?: string;
}

export type { ConformanceReport } from "../conformance/conformanceReport.js";

const FN = "assertConforms";

type Reference =
  | { kind: "config"; config: PolicyLossConfig; label: string; notes: string[] }
  | {
      kind: "model";
      id: string;
      evaluate: (i: PolicyLossInputs) => {
        loss: number;
        gradLogprobs: { data: ArrayLike<number> };
      };
      needs: readonly string[];
      label: string;
      notes: string[];
    };

function resolveReference(reference: unknown, klMode: "strip" | "include"): Reference {
  let config: PolicyLossConfig;
  let label: string;
  if (typeof reference === "string") {
    if (reference.includes("@")) {
      const m = getFrameworkModel(reference);
      if (m.needs.includes("rolloutLogprobs"))
        throw fail(
          ConfigError,
          FN,
          "reference",
          "a framework model that needs no rolloutLogprobs (assertConforms passes none; compare with compareLosses)",
          fmtValue(reference),
        );
      return {
        kind: "model",
        id: m.id,
        evaluate: m.evaluate,
        needs: m.needs,
        label: `reference: framework model ${m.id}`,
        notes: [],
      };
    }
    // An algorithm name; an unknown one is the registry's UnknownNameError (with its did-you-mean).
    config = getAlgorithm(reference).loss;
    label = `reference: ALGORITHMS['${reference}'].loss`;
  } else if (typeof reference === "object" && reference !== null && !Array.isArray(reference)) {
    config = reference as PolicyLossConfig;
    label = "reference: explicit PolicyLossConfig";
  } else
    throw fail(
      ConfigError,
      FN,
      "reference",
      "a PolicyLossConfig, an algorithm name or a framework model id",
      fmtValue(reference),
    );
  if (config.isCorrection != null)
    throw fail(
      ConfigError,
      FN,
      "reference",
      "a config without is_correction (its weights need rollout logprobs, which assertConforms does not pass; compare the two losses with compareLosses)",
      "a config with is_correction",
    );
  const notes = [label];
  if (config.kl != null && klMode === "strip") {
    config = { ...config, kl: null };
    notes.push(
      'kl: reference config carried an as-loss KL term; it was stripped ({ ...config, kl: null }) — the surrogate is certified without the KL term (options.kl: "include" keeps it)',
    );
  }
  return { kind: "config", config, label, notes };
}

function gradData(
  fn: string,
  g: ImplementationResult["gradLogprobs"],
  B: number,
  T: number,
): Float64Array {
  const out = new Float64Array(B * T);
  if (Array.isArray(g)) {
    const rows = g as readonly (readonly number[])[];
    if (rows.length !== B || rows.some((r) => !Array.isArray(r) || r.length !== T))
      throw fail(
        ConfigError,
        fn,
        "fn(inputs).gradLogprobs",
        `[${B}][${T}] rows (the logprobs' shape)`,
        `${rows.length} rows`,
      );
    for (let b = 0; b < B; b++) {
      const r = rows[b] as readonly number[];
      for (let t = 0; t < T; t++) out[b * T + t] = r[t] as number;
    }
    return out;
  }
  const m = g as { rows: number; cols: number; data: ArrayLike<number> };
  if (
    m === null ||
    typeof m !== "object" ||
    m.rows !== B ||
    m.cols !== T ||
    m.data?.length !== B * T
  )
    throw fail(
      ConfigError,
      fn,
      "fn(inputs).gradLogprobs",
      `a ${B}×${T} matrix (the logprobs' shape)`,
      fmtValue(g),
    );
  for (let i = 0; i < B * T; i++) out[i] = m.data[i] as number;
  return out;
}

function needsEntropies(c: PolicyLossConfig): boolean {
  return c.topEntropyQuantile != null || c.entropyBonus != null;
}

/**
 * Check an implementation against a reference on seeded random batches.
 *
 * Formula: per case (randomBatches(nCases, shapes, {seed, maxGap: 2})), loss_rel = |a − b| /
 * max(|a|, |b|, 1e-12), grad_rel = ‖g_a − g_b‖₂ / max(‖g_a‖₂, ‖g_b‖₂, 1e-12), cosine
 * ⟨g_a, g_b⟩/(‖g_a‖‖g_b‖) (1 when both vanish, 0 when one does); it conforms iff max loss_rel ≤
 * lossRtol and max grad_rel ≤ gradRtol. The implementation gets logprobs, oldLogprobs,
 * advantages and responseMask (plus refLogprobs with `kl: "include"`, entropies when the reference
 * needs them).
 *
 * @param fn - The implementation: inputs → { loss, gradLogprobs }.
 * @param reference - An algorithm name (its `loss`), a PolicyLossConfig, or a framework model id.
 * @param options - Cases, shapes, seed, tolerances, advantage shape, KL handling.
 * @returns The report, when it conforms.
 * @throws {VerificationError} E_VERIFY when it does not: the message holds the report, its
 *   diagnosis and the replay line; `error.report` is the ConformanceReport, `error.seed` the
 *   worst case's seed.
 * @throws {ConfigError} E_CONFIG for a bad reference (is_correction; not a config, name or id),
 *   bad options, or an implementation result of the wrong shape or a non-number loss.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown algorithm name or framework model id.
 * @derivation docs/testing.md#assertconforms
 * @enforcedBy test/testing/assertConforms.test.ts > assertConforms > conformance: a hand-written GRPO loss passes against seq_mean_token_mean and against 'grpo' (KL stripped, with a note)
 * @since 0.2.0
 */
export function assertConforms(
  fn: LossImplementation,
  reference: string | PolicyLossConfig,
  options: ConformsOptions = {},
): ConformanceReport {
  if (typeof fn !== "function")
    throw fail(
      ConfigError,
      FN,
      "fn",
      "a function (inputs) => { loss, gradLogprobs }",
      fmtValue(fn),
    );
  const nCases = options.nCases ?? 64;
  const shapes = checkShapes(FN, "options.shapes", options.shapes ?? DEFAULT_TEST_SHAPES);
  const seed = options.seed ?? 0;
  const lossRtol = checkEps(FN, "options.lossRtol", options.lossRtol ?? 1e-9);
  const gradRtol = checkEps(FN, "options.gradRtol", options.gradRtol ?? 1e-9);
  const klMode = options.kl ?? "strip";
  if (klMode !== "strip" && klMode !== "include")
    throw fail(ConfigError, FN, "options.kl", '"strip" or "include"', fmtValue(klMode));
  const advantages = options.advantages ?? "row";
  const ref = resolveReference(reference, klMode);
  const batches = randomBatches(nCases, shapes, { seed, maxGap: 2, advantages });
  const withRef = ref.kind === "config" ? ref.config.kl != null : ref.needs.includes("refLogprobs");
  const withEnt =
    ref.kind === "config" ? needsEntropies(ref.config) : ref.needs.includes("entropies");
  const inputsOf = (b: TestBatch): PolicyLossInputs => ({
    logprobs: b.logprobs,
    oldLogprobs: b.oldLogprobs,
    advantages: b.advantages,
    responseMask: b.responseMask,
    ...(withRef ? { refLogprobs: b.refLogprobs } : {}),
    ...(withEnt ? { entropies: b.entropies } : {}),
  });
  const theirs: CaseResult[] = [];
  const cases: { batch: TestBatch; inputs: PolicyLossInputs }[] = [];
  let maxLoss = 0;
  let maxGrad = 0;
  let minCos = 1;
  let worst = -1;
  let worstIdx = 0;
  for (const b of batches) {
    const inputs = inputsOf(b);
    const r = ref.kind === "config" ? policyLoss(ref.config, inputs) : ref.evaluate(inputs);
    const out = fn(inputs);
    if (out === null || typeof out !== "object" || typeof out.loss !== "number")
      throw fail(
        ConfigError,
        FN,
        "fn(inputs)",
        "an object { loss: number, gradLogprobs }",
        fmtValue(out),
      );
    const [B, T] = b.shape;
    const g = gradData(FN, out.gradLogprobs, B, T);
    theirs.push({ loss: out.loss, grad: g });
    cases.push({ batch: b, inputs });
    const { lossRel, gradRel, cos } = caseMetrics(r.loss, r.gradLogprobs.data, out.loss, g);
    // NaN anywhere counts as the worst possible difference.
    const lr = Number.isNaN(lossRel) ? Number.POSITIVE_INFINITY : lossRel;
    const gr = Number.isNaN(gradRel) ? Number.POSITIVE_INFINITY : gradRel;
    maxLoss = Math.max(maxLoss, lr);
    maxGrad = Math.max(maxGrad, gr);
    minCos = Math.min(minCos, Number.isNaN(cos) ? 0 : cos);
    const m = Math.max(lr, gr);
    if (m > worst) {
      worst = m;
      worstIdx = b.index;
    }
  }
  const w = batches[worstIdx] as TestBatch;
  const importFrom = options.importFrom ?? "polgrad/testing";
  const shapeText = JSON.stringify(shapes);
  const replay = `import { randomBatches } from "${importFrom}"; const inputs = randomBatches(${nCases}, ${shapeText}, { seed: ${seed}${advantages === "row" ? "" : ', advantages: "token"'} })[${worstIdx}]; // seed ${w.seed}, shape [${w.shape.join(", ")}]`;
  const notes = [
    ...ref.notes,
    ...(ref.kind === "config" ? [`config: ${configLine(ref.config)}`] : []),
    `batches: randomBatches(${nCases}, ${shapeText}, { seed: ${seed}, maxGap: 2 })`,
    "certifies: loss value and d loss / d logprobs only; not advantage estimation (upstream of this check), not KL-in-reward, not data handling",
  ];
  const conforms = maxLoss <= lossRtol && maxGrad <= gradRtol;
  const diagnosis =
    conforms || ref.kind !== "config"
      ? null
      : nearestMatch(theirs, cases, ref.config, { lossRtol, gradRtol, withKl: withRef });
  const report: ConformanceReport = {
    maxLossRelDiff: maxLoss,
    maxGradRelDiff: maxGrad,
    gradCosineMin: minCos,
    cases: nCases,
    worstCase: { index: worstIdx, seed: w.seed, shape: w.shape },
    lossRtol,
    gradRtol,
    conforms,
    notes,
    replay,
    diagnosis,
  };
  if (!conforms)
    throw new VerificationError(
      FN,
      `polgrad conformance violation: max loss rel diff ${pyExp(maxLoss, 3)} (loss_rtol ${pyExp(lossRtol, 1)}), max grad rel diff ${pyExp(maxGrad, 3)} (grad_rtol ${pyExp(gradRtol, 1)})\n${conformanceSummary(report)}`,
      w.seed,
      report,
    );
  return report;
}

function configLine(c: PolicyLossConfig): string {
  const clip =
    c.clip == null
      ? "none"
      : `{ epsLow: ${c.clip.epsLow}, epsHigh: ${c.clip.epsHigh}${c.clip.ratioCap == null ? "" : `, ratioCap: ${c.clip.ratioCap}`} }`;
  return `surrogate=${c.surrogate}, ratio=${c.ratio}, aggregation=${c.aggregation}${c.normLen == null ? "" : `, normLen=${c.normLen}`}, clip=${clip}${c.kl == null ? "" : `, kl=${c.kl.kind}×${c.kl.coef}`}`;
}
