import { type EmptyRows, emptyRowsMaskRule } from "../aggregate/emptyRows.js";
import { checkFiniteOutput } from "../core/finite.js";
import { fmtIndices } from "../core/message.js";
import { oneOf } from "../core/names.js";
import { pow2Scale } from "../core/scale.js";
import type { MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import {
  checkFiniteAll,
  checkFiniteNumber,
  checkObject,
  checkSameShape,
  toMask,
  toMatrix,
} from "../core/validate.js";
import { fail, MaskError } from "../errors.js";

/** Generalized advantage estimation parameters (polgrad's GAEConfig). Inert data. */
export interface GAEConfig {
  /** Discount γ (finite; polgrad leaves the range open, [0, 1] in practice). */
  readonly gamma: number;
  /** Trace parameter λ (finite; [0, 1] in practice). */
  readonly lam: number;
}

/**
 * Options of {@link gae}: how masked positions *inside* a row (observation tokens of a multi-turn
 * rollout) are treated. Absent: the mask must be right-padded (polgrad's rule).
 */
export interface GAEOptions {
  /**
   * `"carry"` (verl): a masked position is skipped; the next value and the trace carry through it
   * unchanged, so the token before a span bootstraps from the value after it with one γ.
   * `"zero"` (OpenRLHF): rewards and values are zeroed at masked positions and the recursion runs
   * through them as ordinary steps (each masked step discounts by γλ, and the token before a span
   * bootstraps from 0). Both give the right-padded result on right-padded rows.
   */
  readonly masked?: "carry" | "zero";
  /**
   * Rows with no response token: `reject` (default), `count` or `drop` (the same here: such a row
   * gets zeros). @defaultValue "reject"
   */
  readonly emptyRows?: EmptyRows;
}

/** The two outputs of {@link gae}. */
export interface GAEResult {
  /** `[B, T]` advantages A_t, exactly 0 at padding. */
  readonly advantages: Matrix;
  /** `[B, T]` returns A_t + V_t (the value-loss targets), exactly 0 at padding. */
  readonly returns: Matrix;
}

/**
 * Compute GAE advantages and returns over right-padded responses by a gated reverse scan.
 *
 * Formula: for t = T−1 … 0 with gate_{t+1} = m[b, t+1] (0 beyond T):
 * δ_t = r_t + γ·gate_{t+1}·V_{t+1} − V_t; A_t = δ_t + γλ·gate_{t+1}·A_{t+1}; R_t = A_t + V_t.
 * The gate is the terminal bootstrap V_L = 0 and resets the trace at the last real token, so
 * A_t = Σ_{s=t}^{L−1} (γλ)^{s−t} δ_s; at γ = λ = 1, R_t is the reward-to-go Σ_{s≥t} r_s.
 * A gated-off term is the literal 0, never 0·V (padding is not read).
 * Gradient / stop-gradient: none; advantages and returns are constants to every loss (sg[A], sg[R]).
 *
 * @param tokenRewards - The `[B, T]` per-token rewards, finite everywhere (padding included).
 * @param values - The `[B, T]` value estimates V_t, same shape, finite everywhere.
 * @param config - The discount γ and trace parameter λ.
 * @param responseMask - The `[B, T]` response mask, ≥ 1 response token per row; right-padded
 *   unless `options.masked` says how interior masked positions are treated.
 * @param options - `masked`: `"carry"` (verl) or `"zero"` (OpenRLHF); absent: right-padded only.
 *   `emptyRows`: `reject` (default), `count` or `drop` (the same: a row with no token gets zeros).
 * @returns `{ advantages, returns }`, each `[B, T]` and exactly 0 at padding.
 * @throws {ShapeError} E_SHAPE when an input is not 2-D or the shapes differ.
 * @throws {NonFiniteError} E_NONFINITE when tokenRewards or values hold NaN or ±Inf anywhere.
 * @throws {MaskError} E_MASK when the mask is not 0/1, has an empty row, or is not right-padded.
 * @throws {ConfigError} E_CONFIG when gamma or lam is not a finite number.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when options.masked is not "carry" or "zero".
 * @throws {OverflowError} E_OVERFLOW when an advantage or return exceeds float64 (inputs near
 *   ±1.8e308 are rescaled by a power of two first, so this means the exact value does).
 * @derivation docs/derivations/advantages.md#gae
 * @enforcedBy test/advantages/gae.test.ts > gae > golden: ragged batch at gamma = lam = 1/2 with junk in the padding
 * @enforcedBy test/advantages/gae.test.ts > gae > property: matches the O(T²) direct-sum oracle
 * @enforcedBy test/advantages/gae.test.ts > gae > mask invariance: padding values never reach the outputs (bitwise)
 * @enforcedBy test/advantages/gae.test.ts > gae > rejects: a mask that is not right-padded
 * @enforcedBy test/advantages/gaeMasked.test.ts > gae with interior masks > golden: a one-token span under carry (verl) and zero (OpenRLHF)
 * @enforcedBy test/conformance/frameworks/gaeKlControl.fixtures.test.ts > gae and kl controllers vs verl and OpenRLHF > conformance: verl@1dda039b gae interior (0.99, 0.95) replays to 1e-12
 * @see Schulman et al. 2016, GAE, arXiv:1506.02438; the truncated form of PPO eq. 11–12, arXiv:1707.06347
 * @enforcedBy test/hardening/stats.test.ts > gae > regression: rewards and values near 1.8e308 give the exact advantages and returns
 * @enforcedBy test/advantages/emptyRows.test.ts > token-level functions with rows of no response token > identity: gae gives an empty row zeros and the others the bits of the batch without it, under count and drop
 * @since 0.1.0
 */
export function gae(
  tokenRewards: MatrixLike,
  values: MatrixLike,
  config: GAEConfig,
  responseMask: MaskLike,
  options: GAEOptions = {},
): GAEResult {
  const fn = "gae";
  const r = toMatrix(fn, "tokenRewards", tokenRewards);
  const v = toMatrix(fn, "values", values);
  checkSameShape(fn, "tokenRewards", r, "values", v);
  checkFiniteAll(fn, "tokenRewards", r.data, r.cols);
  checkFiniteAll(fn, "values", v.data, v.cols);
  const opts = checkObject(fn, "options", options);
  const rule = emptyRowsMaskRule(fn, "options.emptyRows", opts.emptyRows);
  const like = { rows: r.rows, cols: r.cols, arg: "tokenRewards" };
  const mask = toMask(fn, responseMask, like, "responseMask", rule);
  const { rows: B, cols: T } = r;
  const m = mask.data;
  const masked =
    opts.masked === undefined
      ? null
      : oneOf(fn, "options.masked", opts.masked, ["carry", "zero"] as const);
  const notRightPadded: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let t = 1; t < T; t++) {
      if (m[b * T + t] === 1 && m[b * T + t - 1] === 0) {
        notRightPadded.push(b);
        break;
      }
    }
  }
  if (notRightPadded.length > 0 && masked === null) {
    throw fail(
      MaskError,
      fn,
      "responseMask",
      'right-padded (no response token after a padded position), or options.masked "carry" (verl) or "zero" (OpenRLHF) for masked spans inside a row',
      `rows ${fmtIndices(notRightPadded)} with a response token after padding`,
    );
  }
  const cfg = checkObject(fn, "config", config);
  const gamma = checkFiniteNumber(fn, "config.gamma", cfg.gamma);
  const lam = checkFiniteNumber(fn, "config.lam", cfg.lam);
  const gammaLam = gamma * lam;

  // GAE is linear in (rewards, values) jointly: gae(s·r, s·V) = s·gae(r, V). The scan runs on
  // s·r, s·V (s = 2^k from max |r|, |V| over response positions; 1 on moderate inputs, bitwise
  // the plain scan), so inputs near ±1.8e308 do not overflow in r + γV − V; outputs are mapped
  // back by ÷ s and any that is still non-finite exceeds float64 (or the γλ recursion diverged).
  let maxAbs = 0;
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 1) continue;
    maxAbs = Math.max(maxAbs, Math.abs(r.data[i] as number), Math.abs(v.data[i] as number));
  }
  const s = pow2Scale(maxAbs);
  const adv = new Float64Array(B * T);
  const ret = new Float64Array(B * T);
  if (masked === null) {
    for (let b = 0; b < B; b++) {
      for (let t = T - 1; t >= 0; t--) {
        const i = b * T + t;
        if (m[i] === 0) continue; // padding: outputs stay exactly 0
        const gate = t + 1 < T && m[i + 1] === 1;
        const vi = (v.data[i] as number) * s;
        const bootstrap = gate ? gamma * ((v.data[i + 1] as number) * s) : 0;
        const delta = (r.data[i] as number) * s + bootstrap - vi;
        const a = gate ? delta + gammaLam * (adv[i + 1] as number) : delta;
        adv[i] = a;
        ret[i] = a + vi;
      }
    }
  } else scanMasked(masked, r.data, v.data, m, B, T, gamma, gammaLam, s, adv, ret);
  if (s !== 1) {
    for (let i = 0; i < adv.length; i++) {
      adv[i] = (adv[i] as number) / s;
      ret[i] = (ret[i] as number) / s;
    }
  }
  const why = "the exact value exceeds float64, or gamma·lam makes the recursion diverge";
  checkFiniteOutput(fn, "advantages", adv, T, m, why);
  checkFiniteOutput(fn, "returns", ret, T, m, why);
  return { advantages: { rows: B, cols: T, data: adv }, returns: { rows: B, cols: T, data: ret } };
}

/**
 * The reverse scan over rows with interior masked positions (see {@link GAEOptions}), on inputs
 * scaled by s. carry: (nv, lg) pass a masked position unchanged; zero: a masked position is a
 * step with r = V = 0. Outputs at masked positions stay 0; padding values are never read.
 */
function scanMasked(
  rule: "carry" | "zero",
  r: Float64Array,
  v: Float64Array,
  m: Uint8Array,
  B: number,
  T: number,
  gamma: number,
  gammaLam: number,
  s: number,
  adv: Float64Array,
  ret: Float64Array,
): void {
  for (let b = 0; b < B; b++) {
    let nv = 0;
    let lg = 0;
    for (let t = T - 1; t >= 0; t--) {
      const i = b * T + t;
      if (m[i] === 0) {
        if (rule === "zero") {
          // δ = 0 + γ·nv − 0; the next position sees V = 0 here.
          lg = gamma * nv + gammaLam * lg;
          nv = 0;
        }
        continue;
      }
      const vi = (v[i] as number) * s;
      const delta = (r[i] as number) * s + gamma * nv - vi;
      lg = delta + gammaLam * lg;
      nv = vi;
      adv[i] = lg;
      ret[i] = lg + vi;
    }
  }
}
