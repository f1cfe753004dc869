/** Render a policy-loss result as terminal text (pure: returns text, prints nothing). */
import { CompensatedSum } from "../core/sum.js";
import type { MaskLike } from "../core/tensor.js";
import { toMask } from "../core/validate.js";
import type { PolicyLossConfig } from "../losses/config.js";
import type { PolicyLossResult } from "../losses/policyLoss.js";

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
  const sq = new CompensatedSum();
  const mass: number[] = [];
  for (let b = 0; b < B; b++) {
    const acc = new CompensatedSum();
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (mask.data[i] !== 1) continue;
      N++;
      low += r.clippedLow.data[i] as number;
      high += r.clippedHigh.data[i] as number;
      const x = r.ratio.data[i] as number;
      rmin = Math.min(rmin, x);
      rmax = Math.max(rmax, x);
      const g = r.gradLogprobs.data[i] as number;
      sq.add(g * g);
      acc.add(Math.abs(g));
    }
    mass.push(acc.value());
  }
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
  lines.push(`ratio         min ${rmin}, max ${rmax} over response tokens`);
  lines.push(`clipped       low ${low}/${N}, high ${high}/${N}`);
  lines.push(`grad norm     ${Math.sqrt(sq.value())} (d loss / d logprobs, L2)`);
  lines.push(
    `grad mass     [${mass.map((m) => m.toPrecision(6)).join(", ")}] per sequence (sum_t |d loss / d logprobs[b, t]|)`,
  );
  lines.push("(use --json for every per-token field at full precision)");
  return `${lines.join("\n")}\n`;
}
