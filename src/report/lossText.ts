/** Render a policy-loss result as terminal text (pure: returns text, prints nothing). */
import { l2Norm, robustSum } from "../core/sum.js";
import type { MaskLike } from "../core/tensor.js";
import { toMask } from "../core/validate.js";
import type { PolicyLossConfig } from "../losses/config.js";
import type { PolicyLossResult } from "../losses/policyLoss.js";

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
): string {
  const mask = toMask("renderLossText", responseMask);
  const { rows: B, cols: T } = mask;
  let N = 0;
  let low = 0;
  let high = 0;
  let rmin = Number.POSITIVE_INFINITY;
  let rmax = Number.NEGATIVE_INFINITY;
  const mass: number[] = [];
  const g = r.gradLogprobs.data;
  for (let b = 0; b < B; b++) {
    const at: number[] = [];
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (mask.data[i] !== 1) continue;
      at.push(i);
      N++;
      low += r.clippedLow.data[i] as number;
      high += r.clippedHigh.data[i] as number;
      const x = r.ratio.data[i] as number;
      rmin = Math.min(rmin, x);
      rmax = Math.max(rmax, x);
    }
    // Compensated Σ_t |g|, rescaled when a partial sum overflows (robustSum).
    mass.push(robustSum(at.length, (k) => Math.abs(g[at[k] as number] as number)));
  }
  // The scaled L2 norm: finite whenever representable (‖[1e200, 1e200]‖ = 1.414e200).
  const norm = l2Norm(g, mask.data);
  const clip = config.clip
    ? `, clip eps_low=${config.clip.epsLow ?? "none"} eps_high=${config.clip.epsHigh ?? "none"} ratio_cap=${config.clip.ratioCap ?? "none"}`
    : "";
  const tis = config.isCorrection
    ? `, TIS ${config.isCorrection.level}-level cap=${config.isCorrection.cap}`
    : "";
  const kl = config.kl ? `, KL ${config.kl.kind} coef=${config.kl.coef}` : "";
  const lines = [
    `config (${source}): ${config.surrogate} on ${config.ratio} ratio, ${config.aggregation}${config.normLen ? ` (norm_len=${config.normLen})` : ""}${clip}${tis}${kl}`,
    `batch ${batchPath}: B=${B}, T=${T}, N=${N} response tokens`,
    `loss          ${r.loss}`,
  ];
  if (r.klLoss !== null) lines.push(`kl_loss       ${r.klLoss} (unscaled)`);
  const saturated = rmax === Number.MAX_VALUE ? " (max saturated: exp overflowed, clipped)" : "";
  lines.push(`ratio         min ${rmin}, max ${rmax} over response tokens${saturated}`);
  lines.push(`clipped       low ${low}/${N}, high ${high}/${N}`);
  lines.push(`grad norm     ${big(norm, String)} (d loss / d logprobs, L2)`);
  lines.push(
    `grad mass     [${mass.map((m) => big(m, (x) => x.toPrecision(6))).join(", ")}] per sequence (sum_t |d loss / d logprobs[b, t]|)`,
  );
  lines.push("(use --json for every per-token field at full precision)");
  return `${lines.join("\n")}\n`;
}
