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
 * The floors for the fields `["loss", "gradLogprobs"]` (issue 36), one per bench config: the
 * values policyLoss returns for those fields in the plainest pass over the rows, reading what
 * the config reads (lp, old and the mask; ref for a KL term), one exp per response token for a
 * token ratio (and one expm1 for k3), one per row for a sequence ratio, and writing only the
 * gradient into `grad` (fresh: zero-filled, so padding needs no write). The same values means the
 * same sums: every reduction is Neumaier's compensated sum in row-major order
 * (docs/conventions.md#summation), here the loss terms w_b·ℓ_t with the kernel's branch-free
 * correction and a sequence ratio's Σ_t (lp − old) and Σ_t ∂ℓ/∂r with the compare, so each floor
 * returns policyLoss's loss and gradient bitwise on the bench's batches (grpo's loss within
 * rounding: k3's Taylor branch for |δ| < 2^-8 is left out). Left out as well: validation,
 * finiteness checks and the edge cases (ties at the band's edges, A = ±0, overflow). Clip bands
 * and the KL coefficient come from `cfg` (the registry's PolicyLossConfig). With `fresh` false
 * the gradient is reused (dirty) memory and its other positions are written 0 as well, as
 * policyLoss with `out` writes them. Returns the loss.
 *
 * A floor is the fastest plain form we know, so dapo's and cispo's take each row in two passes:
 * the row's exps first, into the gradient row, then the arithmetic reading them back and writing
 * the gradient over them. On this machine that took 0.72–0.84× as long as one pass doing both
 * (256×8192, 21 interleaved rounds, 2026-12-06: alone, the exp loop keeps nothing else live and
 * the other loop has no call in it); for grpo, whose k3 term takes an expm1 per token, 0.97–1.02×
 * (two passes) and 1.08–1.17× (three), so its floor stays one pass.
 */
export const FIELDS_FLOORS = {
  dapo: floorPassGrad,
  grpo: floorGrpo,
  gspo: floorGspo,
  cispo: floorCispo,
};

/** The clip band [1 − ε_low, 1 + ε_high] of a registry config. */
const band = (cfg) => [1 - (cfg.clip.epsLow ?? 0), 1 + cfg.clip.epsHigh];

/** dapo's clip band, the default of {@link floorPassGrad} (bench/losses.mjs passes the registry's). */
const DAPO = { clip: { epsLow: 0.2, epsHigh: 0.28 } };

/**
 * dapo (token ratio, pg_clip, token_mean, w = 1/N over the N response tokens): ℓ_t = −min(r·A,
 * clamp(r, lo, hi)·A), loss = Σ w·ℓ_t (compensated), ∂L/∂lp_t = (−w·A)·r where the unclipped
 * branch is taken, else 0. {@link floorPass}'s arithmetic for these two fields, each row in two
 * passes (r first, into `grad`).
 */
export function floorPassGrad(batch, grad, cfg = DAPO, fresh = true) {
  const { B, T, logprobs: lp, oldLogprobs: old, mask: m, advantages: adv, valid } = batch;
  const [lo, hi] = band(cfg);
  const w = 1 / valid;
  let s = 0;
  let c = 0;
  for (let b = 0; b < B; b++) {
    const a = adv[b];
    const g = -w * a;
    const o = b * T;
    for (let i = o; i < o + T; i++) if (m[i] === 1) grad[i] = Math.exp(lp[i] - old[i]);
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) {
        if (!fresh) grad[i] = 0;
        continue;
      }
      const r = grad[i];
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
      const y = w * ell;
      const t = s + y;
      const bv = t - s;
      c += s - (t - bv) + (y - bv);
      s = t;
    }
  }
  return s + c;
}

/**
 * grpo (token ratio, pg_clip, seq_mean_token_mean w_b = 1/(B·L_b), k3 KL at the same weights):
 * per response token dapo's ℓ and d at weight w_b, then δ = ref − lp, e = expm1(δ), k = e − δ
 * and ∂L/∂lp += coef·w_b·(−e); loss = Σ w_b·ℓ_t + coef·Σ w_b·k_t, each sum compensated.
 */
function floorGrpo(batch, grad, cfg, fresh = true) {
  const {
    B,
    T,
    logprobs: lp,
    oldLogprobs: old,
    refLogprobs: ref,
    mask: m,
    advantages: adv,
  } = batch;
  const [lo, hi] = band(cfg);
  const coef = cfg.kl.coef;
  let s = 0;
  let c = 0;
  let ks = 0;
  let kc = 0;
  for (let b = 0; b < B; b++) {
    const o = b * T;
    let L = 0;
    for (let i = o; i < o + T; i++) L += m[i];
    if (L === 0) {
      if (!fresh) grad.fill(0, o, o + T);
      continue;
    }
    const w = 1 / (B * L);
    const a = adv[b];
    const g = -w * a;
    const cw = coef * w;
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) {
        if (!fresh) grad[i] = 0;
        continue;
      }
      const x = lp[i];
      const r = Math.exp(x - old[i]);
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
      const delta = ref[i] - x;
      const e = Math.expm1(delta);
      grad[i] = d + cw * -e;
      const y = w * ell;
      const t = s + y;
      const bv = t - s;
      c += s - (t - bv) + (y - bv);
      s = t;
      const ky = w * (e - delta);
      const kt = ks + ky;
      const kv = kt - ks;
      kc += ks - (kt - kv) + (ky - kv);
      ks = kt;
    }
  }
  return s + c + coef * (ks + kc);
}

/**
 * gspo (sequence ratio, pg_clip, seq_mean_token_mean w_b = 1/(B·L_b)): per row the compensated
 * Σ_t (lp − old) and s_b = exp(Σ / L_b), ℓ_b = −min(s_b·A, clamp(s_b, lo, hi)·A) and
 * d_b = −w_b·A (0 where clipped) once, then per response token w_b·ℓ_b into the loss and d_b into
 * the row's compensated Σ_t d, and the coupled gradient (Σ_t d)·s_b / L_b written at every
 * response token: two passes over a row, the second writing only.
 */
function floorGspo(batch, grad, cfg, fresh = true) {
  const { B, T, logprobs: lp, oldLogprobs: old, mask: m, advantages: adv } = batch;
  const [lo, hi] = band(cfg);
  let s = 0;
  let c = 0;
  for (let b = 0; b < B; b++) {
    const o = b * T;
    let z = 0;
    let zc = 0;
    let L = 0;
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) continue;
      const x = lp[i] - old[i];
      const t = z + x;
      if (Math.abs(z) >= Math.abs(x)) zc += z - t + x;
      else zc += x - t + z;
      z = t;
      L++;
    }
    if (L === 0) {
      if (!fresh) grad.fill(0, o, o + T);
      continue;
    }
    const r = Math.exp((z + zc) / L);
    const w = 1 / (B * L);
    const a = adv[b];
    const ra = r * a;
    let ell;
    let d = 0;
    if (r > lo && r < hi) {
      ell = -ra;
      d = -w * a;
    } else {
      const ca = (r < lo ? lo : hi) * a;
      if (ra < ca) {
        ell = -ra;
        d = -w * a;
      } else ell = -ca;
    }
    const y = w * ell;
    let ds = 0;
    let dc = 0;
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) continue;
      const t = s + y;
      const bv = t - s;
      c += s - (t - bv) + (y - bv);
      s = t;
      const u = ds + d;
      if (Math.abs(ds) >= Math.abs(d)) dc += ds - u + d;
      else dc += d - u + ds;
      ds = u;
    }
    const sum = ds + dc;
    const gb = (sum === 0 ? sum : sum * r) / L;
    for (let i = o; i < o + T; i++)
      if (m[i] === 1) grad[i] = gb;
      else if (!fresh) grad[i] = 0;
  }
  return s + c;
}

/**
 * cispo (token ratio, the cispo surrogate, token_mean w = 1/N): ŵ = min(r, 1 + ε_high) held
 * constant, ℓ_t = −(ŵ·A)·lp, loss = Σ w·ℓ_t (compensated), ∂L/∂lp_t = −w·(ŵ·A). Each row in
 * two passes (r first, into `grad`).
 */
function floorCispo(batch, grad, cfg, fresh = true) {
  const { B, T, logprobs: lp, oldLogprobs: old, mask: m, advantages: adv, valid } = batch;
  const hi = 1 + cfg.clip.epsHigh;
  const w = 1 / valid;
  const g = -w;
  let s = 0;
  let c = 0;
  for (let b = 0; b < B; b++) {
    const a = adv[b];
    const o = b * T;
    for (let i = o; i < o + T; i++) if (m[i] === 1) grad[i] = Math.exp(lp[i] - old[i]);
    for (let i = o; i < o + T; i++) {
      if (m[i] !== 1) {
        if (!fresh) grad[i] = 0;
        continue;
      }
      const x = lp[i];
      const r = grad[i];
      // biome-ignore lint/complexity/useMathMinMax: cispoWeight's comparison, its bits and its speed.
      const wa = (r > hi ? hi : r) * a;
      grad[i] = g * wa;
      const y = w * -(wa * x);
      const t = s + y;
      const bv = t - s;
      c += s - (t - bv) + (y - bv);
      s = t;
    }
  }
  return s + c;
}
