/** Render a policy-loss result as terminal text (pure: returns text, prints nothing). */

import { L2Norm, robustSum } from "../core/sum.js";
import { isMask, isMatrix, type MaskLike } from "../core/tensor.js";
import { describeInput, requireObject, requireString, toMask } from "../core/validate.js";
import { ConfigError, fail, ShapeError } from "../errors.js";
import { fieldTexts, type PolicyLossConfig } from "../losses/config.js";
import type { PolicyLossResult } from "../losses/policyLoss.js";
import { sequenceSummary } from "./sequenceSummary.js";

/** Format x, or say that it exceeds float64 (a norm or mass of finite gradients can). */
function big(x: number, f: (x: number) => string): string {
  return Number.isFinite(x) ? f(x) : "> 1.8e308 (exceeds float64)";
}

/**
 * Render the loss summary: config, batch shape, loss and KL term at full precision, ratio range,
 * clip fractions, gradient norm and per-sequence gradient mass.
 *
 * @param config - The evaluated config.
 * @param source - Where the config came from (algorithm name or file).
 * @param batchPath - The batch file.
 * @param r - The policyLoss result.
 * @param responseMask - The batch mask (for token counts).
 * @returns Multi-line text ending with a newline.
 * @enforcedBy test/cli/cli.test.ts > polgrad cli > golden: loss on a json batch prints the loss at full precision
 * @enforcedBy test/report/lossText.hardening.test.ts > renderLossText > regression: the grad norm of finite gradients near 1e200 is finite, not NaN
 * @since 0.1.0
 */
export function renderLossText(
  config: PolicyLossConfig,
  source: string,
  batchPath: string,
  r: PolicyLossResult,
  responseMask: MaskLike,
  width: number = Number.POSITIVE_INFINITY,
): string {
  const fn = "renderLossText";
  checkSummaryArgs(fn, config, source, batchPath, r);
  // Rows with no response token are the config's to judge (config.emptyRows), not the text's.
  const mask = toMask(fn, responseMask, undefined, "responseMask", "allow");
  for (const k of ["ratio", "clippedLow", "clippedHigh", "gradLogprobs"] as const) {
    const m: unknown = r[k];
    const d = (m as { data?: unknown } | null)?.data;
    if (!(isMatrix(m) || isMask(m)) || (d as ArrayLike<number>).length !== mask.data.length)
      throw fail(
        ShapeError,
        fn,
        `r.${k}`,
        `a [B, T] tensor of the mask's shape [${mask.rows}, ${mask.cols}]`,
        describeInput(m),
      );
  }
  const summary = new LossTextSummary(mask.rows, mask.cols);
  summary.addRows(
    0,
    mask.data,
    r.ratio.data,
    r.clippedLow.data,
    r.clippedHigh.data,
    r.gradLogprobs.data,
  );
  return renderLossSummary(config, source, batchPath, r, summary, width);
}

/**
 * The per-token part of the loss summary, fed a block of rows at a time (in row order), so that
 * `polgrad loss --out` summarises rows it never holds all at once: N, the clip counts, the ratio
 * range over response tokens, the scaled L2 norm of the gradient ({@link L2Norm}, the bits of
 * l2Norm over the whole) and each row's gradient mass.
 * @internal
 */
export class LossTextSummary {
  n: number = 0;
  low: number = 0;
  high: number = 0;
  rmin: number = Number.POSITIVE_INFINITY;
  rmax: number = Number.NEGATIVE_INFINITY;
  readonly mass: number[] = [];
  readonly norm: L2Norm = new L2Norm();

  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {}

  /**
   * Add rows b0, b0 + 1, … whose positions are the arrays' (each a whole number of rows):
   * `mask` 0/1, the ratio, the clip flags and the gradient.
   */
  addRows(
    b0: number,
    mask: ArrayLike<number>,
    ratio: ArrayLike<number>,
    low: ArrayLike<number>,
    high: ArrayLike<number>,
    grad: ArrayLike<number>,
  ): void {
    const T = this.cols;
    const rows = mask.length / T;
    for (let j = 0; j < rows; j++) {
      const at: number[] = [];
      for (let t = 0; t < T; t++) {
        const i = j * T + t;
        if (mask[i] !== 1) continue;
        at.push(i);
        this.n++;
        this.low += low[i] as number;
        this.high += high[i] as number;
        const x = ratio[i] as number;
        this.rmin = Math.min(this.rmin, x);
        this.rmax = Math.max(this.rmax, x);
      }
      // Compensated Σ_t |g|, rescaled when a partial sum overflows (robustSum).
      this.mass[b0 + j] = robustSum(at.length, (k) => Math.abs(grad[at[k] as number] as number));
    }
    // The scaled L2 norm: finite whenever representable (‖[1e200, 1e200]‖ = 1.414e200).
    this.norm.addAll(grad, mask);
  }
}

/** The arguments both loss renderers share: a config, two strings and a result with a loss. */
function checkSummaryArgs(
  fn: string,
  config: unknown,
  source: unknown,
  batchPath: unknown,
  r: unknown,
): void {
  requireObject(fn, "config", config, "a PolicyLossConfig", ["ratio", "surrogate", "aggregation"]);
  requireString(fn, "source", source);
  requireString(fn, "batchPath", batchPath);
  requireObject(fn, "r", r, "a policyLoss result", ["loss"]);
}

/** The loss summary's text from the scalars and a {@link LossTextSummary} of every row. @internal */
export function renderLossSummary(
  config: PolicyLossConfig,
  source: string,
  batchPath: string,
  r: {
    readonly loss: number;
    readonly klLoss: number | null;
    readonly entropyLoss?: number | null;
  },
  summary: LossTextSummary,
  width: number = Number.POSITIVE_INFINITY,
): string {
  checkSummaryArgs("renderLossSummary", config, source, batchPath, r);
  if (!(summary instanceof LossTextSummary))
    throw fail(
      ConfigError,
      "renderLossSummary",
      "summary",
      "a LossTextSummary",
      describeInput(summary),
    );
  const { rows: B, cols: T, n: N, low, high, rmin, rmax, mass } = summary;
  const norm = summary.norm.value();
  const lines = [
    `config (${source}): ${configText(config)}`,
    `batch ${batchPath}: B=${B}, T=${T}, N=${N} response tokens`,
    `loss          ${r.loss}`,
  ];
  if (r.klLoss !== null) lines.push(`kl_loss       ${r.klLoss} (unscaled)`);
  if (r.entropyLoss != null)
    lines.push(
      `entropy_loss  ${r.entropyLoss} (aggregated entropy; the loss holds −coef times it)`,
    );
  const saturated = rmax === Number.MAX_VALUE ? " (max saturated: exp overflowed, clipped)" : "";
  // No response token (emptyRows count/drop): no range to print, not min Infinity, max -Infinity.
  lines.push(
    N === 0
      ? "ratio         none (no response tokens: loss 0, gradient 0)"
      : `ratio         min ${rmin}, max ${rmax} over response tokens${saturated}`,
  );
  lines.push(`clipped       low ${low}/${N}, high ${high}/${N}`);
  lines.push(`grad norm     ${big(norm, String)} (d loss / d logprobs, L2)`);
  const massLine = `grad mass     [${mass.map((m) => big(m, (x) => x.toPrecision(6))).join(", ")}] per sequence (sum_t |d loss / d logprobs[b, t]|)`;
  lines.push(
    massLine.length <= width
      ? massLine
      : `grad mass     ${sequenceSummary(mass, (m) => big(m, (x) => x.toPrecision(6)))} (sum_t |d loss / d logprobs[b, t]|; --wide lists every sequence)`,
  );
  lines.push("(use --json for every per-token field at full precision)");
  return `${lines.join("\n")}\n`;
}

/**
 * A config in words: `<surrogate> on <ratio> ratio, <aggregation> (norm_len=…)`, then every other
 * field that says something, in the field table's order, by its text renderer
 * (losses/config.ts): `clip eps_low=0.2 …`, `TIS token-level cap=2`, `KL k3 coef=0.04`, … @internal
 */
export function configText(config: PolicyLossConfig): string {
  const head = `${config.surrogate} on ${config.ratio} ratio, ${config.aggregation}${config.normLen ? ` (norm_len=${config.normLen})` : ""}`;
  return [head, ...fieldTexts(config).map((f) => f.text)].join(", ");
}
