// The output-contract floor (docs/performance.md#the-floor-pass): the least work any
// implementation of the fused pg_clip token-mean loss (dapo) must do to return policyLoss's five
// [B, T] outputs: one pass over the rows, reading lp, old and the mask, one exp per response
// token, writing the ratio (1 at padding), the objective, the gradient and the two clip flags.
// No validation, no finiteness checks, a plain (uncompensated) loss sum, the band's edge cases
// (ties at r = 1 ± ε, A = ±0, overflow) left out: it is a stopwatch for the machine, not a loss.
// Its outputs equal policyLoss's on the bench's batches (test/bench/floor.test.ts), so it does
// the contract's whole work; its time bounds from below what a loss with that contract can take
// on this machine and this Node, the way the bare exp pass bounds a loss that computes a ratio.

/** Bytes between the views of one output buffer, as src/losses/kernel/outputs.ts staggers them. */
const STAGGER = 520;

/** Five [B, T] outputs in one zero-filled buffer (fresh: padding needs no write but the ratio). */
export function floorOutputs(n) {
  const f64 = n * 8 + STAGGER;
  const u8 = n + STAGGER;
  const buf = new ArrayBuffer(3 * f64 + 2 * u8);
  return {
    grad: new Float64Array(buf, 0, n),
    objective: new Float64Array(buf, f64, n),
    ratio: new Float64Array(buf, 2 * f64, n),
    low: new Uint8Array(buf, 3 * f64, n),
    high: new Uint8Array(buf, 3 * f64 + u8, n),
  };
}

/**
 * dapo's loss and outputs over a bench batch (bench/cases.mjs makeBatch): ℓ_t = −min(r·A,
 * clamp(r, 1 − 0.2, 1 + 0.28)·A), loss = Σ ℓ_t / N over the N response tokens, ∂L/∂lp_t =
 * −(A/N)·r where the unclipped branch is taken, else 0. `out` from {@link floorOutputs} (fresh:
 * padding is written only for the ratio) or reused (`fresh` false: padding written in full).
 * Returns the loss.
 */
export function floorPass(batch, out, fresh) {
  const { B, T, logprobs: lp, oldLogprobs: old, mask: m, advantages: adv, valid } = batch;
  const { grad, objective, ratio, low, high } = out;
  const lo = 1 - 0.2;
  const hi = 1 + 0.28;
  const w = 1 / valid;
  let s = 0;
  for (let b = 0; b < B; b++) {
    const a = adv[b];
    const g = -w * a;
    const o = b * T;
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) {
        ratio[i] = 1;
        if (!fresh) {
          grad[i] = 0;
          objective[i] = 0;
          low[i] = 0;
          high[i] = 0;
        }
        continue;
      }
      const r = Math.exp(lp[i] - old[i]);
      ratio[i] = r;
      const ra = r * a;
      let ell;
      let d = 0;
      let fl = 0;
      if (r > lo && r < hi) {
        ell = -ra;
        d = g * r;
      } else {
        const ca = (r < lo ? lo : hi) * a;
        if (ra < ca) {
          ell = -ra;
          d = g * r;
        } else {
          ell = -ca;
          fl = r < lo ? 1 : 2;
        }
      }
      objective[i] = ell;
      grad[i] = d;
      s += ell;
      if (fresh) {
        if (fl === 1) low[i] = 1;
        else if (fl === 2) high[i] = 1;
      } else {
        low[i] = fl === 1 ? 1 : 0;
        high[i] = fl === 2 ? 1 : 0;
      }
    }
  }
  return s * w;
}

/**
 * The floor for the fields `["loss", "gradLogprobs"]` (issue 36): dapo's loss and gradient in one
 * plain pass, reading lp, old and the mask, one exp per response token, writing only the
 * gradient into `grad` (fresh: zero-filled, so padding needs no write). The same arithmetic as
 * {@link floorPass}, without the ratio, the objective and the clip flags. Returns the loss.
 */
export function floorPassGrad(batch, grad) {
  const { B, T, logprobs: lp, oldLogprobs: old, mask: m, advantages: adv, valid } = batch;
  const lo = 1 - 0.2;
  const hi = 1 + 0.28;
  const w = 1 / valid;
  let s = 0;
  for (let b = 0; b < B; b++) {
    const a = adv[b];
    const g = -w * a;
    const o = b * T;
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) continue;
      const r = Math.exp(lp[i] - old[i]);
      const ra = r * a;
      let ell;
      let d = 0;
      if (r > lo && r < hi) {
        ell = -ra;
        d = g * r;
      } else {
        const ca = (r < lo ? lo : hi) * a;
        if (ra < ca) {
          ell = -ra;
          d = g * r;
        } else ell = -ca;
      }
      grad[i] = d;
      s += ell;
    }
  }
  return s * w;
}
