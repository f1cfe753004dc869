/**
 * Branch-safety predicates: finite differences are only meaningful away from the kinks of the
 * losses (clip edges, ratio cap, |δ| = 0 for the abs KL, the value-clip band and its max switch).
 */
import type { PolicyLossConfig } from "../../src/losses/config.js";
import type { LogprobBatch, ValueBatch } from "./arbitraries.js";

type Streams = Pick<LogprobBatch, "logprobs" | "oldLogprobs" | "refLogprobs" | "responseMask">;

/** The ratio each response token's surrogate sees: e^z (token) or the row's e^{mean z} (sequence kinds). */
export function surrogateRatios(ratio: PolicyLossConfig["ratio"], batch: Streams): number[][] {
  const { logprobs: lp, oldLogprobs: old, responseMask: m } = batch;
  return m.map((row, b) => {
    let s = 0;
    let L = 0;
    row.forEach((on, t) => {
      if (on) {
        s += lp[b][t] - old[b][t];
        L++;
      }
    });
    return row.map((on, t) =>
      !on ? 1 : ratio === "token" ? Math.exp(lp[b][t] - old[b][t]) : Math.exp(s / L),
    );
  });
}

/** True iff every response |ref − lp| ≥ margin (the abs KL is smooth there). */
export function absKlSafe(batch: Streams, margin = 1e-6): boolean {
  const { logprobs: lp, refLogprobs: ref, responseMask: m } = batch;
  return m.every((row, b) => row.every((on, t) => !on || Math.abs(ref[b][t] - lp[b][t]) >= margin));
}

/**
 * True iff no surrogate ratio (token ratio, or per-row sequence ratio for the sequence kinds) lies
 * within `margin` of a clip edge 1 − ε_lo, 1 + ε_hi or the ratio cap (pg_clip and cispo), and, with
 * an abs KL term, every |δ| ≥ margin.
 */
export function branchSafe(config: PolicyLossConfig, batch: Streams, margin = 1e-6): boolean {
  const edges: number[] = [];
  const clip = config.clip;
  if (clip !== null && (config.surrogate === "pg_clip" || config.surrogate === "cispo")) {
    if (clip.epsLow != null) edges.push(1 - clip.epsLow);
    if (clip.epsHigh != null) edges.push(1 + clip.epsHigh);
    if (clip.ratioCap != null) edges.push(clip.ratioCap);
  }
  const r = surrogateRatios(config.ratio, batch);
  const ratiosSafe = batch.responseMask.every((row, b) =>
    row.every((on, t) => !on || edges.every((e) => Math.abs(r[b][t] - e) >= margin)),
  );
  return ratiosSafe && (config.kl?.kind !== "abs" || absKlSafe(batch, margin));
}

/**
 * True iff every value is at least `margin` from the clip band edges v_old ± ε and, outside the
 * band, the two squared errors differ: ||v − R| − |v_clip − R|| ≥ margin.
 */
export function valueBranchSafe(batch: ValueBatch, clipEps: number | null, margin = 1e-6): boolean {
  if (clipEps === null) return true;
  const { values: v, oldValues: o, returns: R, responseMask: m } = batch;
  return m.every((row, b) =>
    row.every((on, t) => {
      if (!on) return true;
      const lo = o[b][t] - clipEps;
      const hi = o[b][t] + clipEps;
      const x = v[b][t];
      if (Math.abs(x - lo) < margin || Math.abs(x - hi) < margin) return false;
      const vc = Math.min(Math.max(x, lo), hi);
      return vc === x || Math.abs(Math.abs(x - R[b][t]) - Math.abs(vc - R[b][t])) >= margin;
    }),
  );
}
