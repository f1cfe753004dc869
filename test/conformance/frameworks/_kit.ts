/**
 * Test helpers for the framework models: inputs from drawn batches, each model's kink distance,
 * and the sg-frozen (or float64) value each model's closed-form gradient is checked against by
 * central differences (finite differences see through stop-gradients and float32 rounding).
 */
import type { FrameworkModel } from "../../../src/conformance/frameworks/model.js";
import type { PolicyLossInputs } from "../../../src/losses/policyLoss.js";
import type { DrawnBatch } from "../../../src/verify/draw.js";
import { type GradcheckReport, gradcheck } from "../../../src/verify/gradcheck.js";

/** All streams of a drawn batch as model inputs (`[B, T]` advantages). */
export function inputsOf(batch: DrawnBatch): PolicyLossInputs {
  return {
    logprobs: batch.logprobs,
    oldLogprobs: batch.oldLogprobs,
    advantages: batch.advantages,
    responseMask: batch.responseMask,
    refLogprobs: batch.refLogprobs,
    rolloutLogprobs: batch.rolloutLogprobs,
  };
}

type Cells = number[][];

function tokens(mask: boolean[][], f: (b: number, t: number) => number): Cells {
  return mask.map((row, b) => row.map((on, t) => (on ? f(b, t) : 0)));
}

/** Σ m·x / Σ m. */
export function tokenMean(mask: boolean[][], x: Cells): number {
  let s = 0;
  let n = 0;
  mask.forEach((row, b) =>
    row.forEach((on, t) => {
      if (on) {
        s += x[b]![t]!;
        n++;
      }
    }),
  );
  return s / n;
}

/** Σ_b [Σ_t m·x / float32(L_b + 1e-8)] / (rows with L_b > 0). */
export function seqMeanTokenMeanEps(mask: boolean[][], x: Cells): number {
  let s = 0;
  let rows = 0;
  mask.forEach((row, b) => {
    const L = row.filter(Boolean).length;
    if (L === 0) return;
    rows++;
    // L_b + 1e-8 under verl's bool mask is float32, i.e. exactly L_b.
    s += row.reduce((acc, on, t) => acc + (on ? x[b]![t]! : 0), 0) / Math.fround(L + 1e-8);
  });
  return s / rows;
}

/** The edges where a model's gradient has a kink, in ratio space (PPO clip band, dual-clip cap). */
function ratioEdges(model: FrameworkModel): number[] {
  const v = model.variant;
  if (v.startsWith("kl:") || v.includes("cispo") || v.startsWith("sapo")) return [];
  if (model.framework === "verl" && v.startsWith("vanilla:")) return [0.8, 1.2, 3];
  if (v === "ppo:token:dual-clip-3") return [0.8, 1.2, 3];
  return [0.8, 1.2];
}

/** Distance of a batch to the nearest kink of a model (ratio edges; |lp − ref| for abs). */
export function kinkDistance(model: FrameworkModel, batch: DrawnBatch): number {
  const edges = ratioEdges(model);
  let d = Number.POSITIVE_INFINITY;
  const r = edges.length > 0 ? model.evaluate(inputsOf(batch)).ratio : null;
  batch.responseMask.forEach((row, b) =>
    row.forEach((on, t) => {
      if (!on) return;
      if (r !== null) for (const e of edges) d = Math.min(d, Math.abs(r.data[b * r.cols + t]! - e));
      if (model.variant === "kl:abs")
        d = Math.min(d, Math.abs(batch.logprobs[b]![t]! - batch.refLogprobs[b]![t]!));
    }),
  );
  return d;
}

/**
 * The value whose finite differences equal the model's closed-form gradient at `base`: the model
 * itself when it has no stop-gradient and no float32 rounding, else its sg-frozen (or float64)
 * equivalent: verl gspo with sg[lp] and the sequence mean frozen at base, cispo with the clipped
 * weight frozen, k3+ as ½(lp − ref)², OpenRLHF KL in float64.
 */
export function checkedValue(
  model: FrameworkModel,
  base: DrawnBatch,
): (batch: DrawnBatch) => number {
  const v = model.variant;
  const m = base.responseMask;
  const A = base.advantages;
  const ratio0 = model.evaluate(inputsOf(base)).ratio;
  const r0 = (b: number, t: number): number => ratio0.data[b * ratio0.cols + t]!;
  if (model.framework === "verl" && v === "gspo") {
    return (batch) => {
      const ell = tokens(m, (b, t) => {
        const logS = Math.min(
          batch.logprobs[b]![t]! - base.logprobs[b]![t]! + Math.log(r0(b, t)),
          10,
        );
        const s = Math.exp(logS);
        const a = A[b]![t]!;
        return Math.max(-a * s, -a * Math.min(Math.max(s, 0.8), 1.2));
      });
      return seqMeanTokenMeanEps(m, ell);
    };
  }
  if (v.includes("cispo")) {
    const w0 = (b: number, t: number): number =>
      model.framework === "verl" ? Math.min(Math.max(r0(b, t), 0.8), 1.2) : Math.min(r0(b, t), 5);
    return (batch) =>
      tokenMean(
        m,
        tokens(m, (b, t) => -w0(b, t) * A[b]![t]! * batch.logprobs[b]![t]!),
      );
  }
  if (v === "kl:k3+") {
    return (batch) =>
      tokenMean(
        m,
        tokens(m, (b, t) => 0.5 * (batch.logprobs[b]![t]! - base.refLogprobs[b]![t]!) ** 2),
      );
  }
  if (model.framework === "openrlhf" && v.startsWith("kl:")) {
    const k = (d: number): number =>
      v === "kl:k1" ? d : v === "kl:k2" ? (d * d) / 2 : Math.exp(-d) - 1 + d;
    return (batch) =>
      tokenMean(
        m,
        tokens(m, (b, t) =>
          Math.min(Math.max(k(batch.logprobs[b]![t]! - base.refLogprobs[b]![t]!), -10), 10),
        ),
      );
  }
  return (batch) => model.evaluate(inputsOf(batch)).loss;
}

/** Gradcheck a model's closed-form gradient against central differences of its checked value. */
export function gradcheckModel(model: FrameworkModel, seed: number): GradcheckReport {
  let valueFor: DrawnBatch | null = null;
  let value: ((batch: DrawnBatch) => number) | null = null;
  return gradcheck(
    (batch, base) => {
      if (valueFor !== base) {
        valueFor = base;
        value = checkedValue(model, base);
      }
      return {
        value: (value as (batch: DrawnBatch) => number)(batch),
        grad:
          batch === base
            ? model.evaluate(inputsOf(base)).gradLogprobs
            : { rows: 0, cols: 0, data: new Float64Array(0) },
      };
    },
    {
      seed,
      shapes: [
        [2, 3],
        [3, 5],
        [4, 6],
      ],
      cases: 6,
      kinkDistance: (b) => kinkDistance(model, b),
      label: model.id,
      // float32 models: the analytic gradient is rounded to float32 (inputs cast to float32 first).
      ...(model.settings.compute_dtype === "float32" && { rtol: 1e-5 }),
    },
  );
}
