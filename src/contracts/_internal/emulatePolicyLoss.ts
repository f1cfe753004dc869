/**
 * The policy loss and its closed-form gradient evaluated in an emulated precision
 * (docs/contracts.md#the-emulated-computation): the same algebra as `policyLoss`, with every
 * operation rounded by an {@link Arith} and every reduction, product chain and normaliser
 * evaluated under its seeded plan. Besides the value of each gradient element it returns the
 * element's *term magnitude* — the sum of the magnitudes of the terms a cancelling sum combined
 * (policy + KL parts, the row sum of the sequence ratio's backward pass, 1 − e^δ of k3) — so that
 * roundoff can be measured relative to what was actually rounded.
 */
import { fmtValue } from "../../core/message.js";
import { ConfigError, fail } from "../../errors.js";
import {
  isSetField,
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type ResolvedPolicyLossConfig,
} from "../../losses/config.js";
import { cispoWeight } from "../../losses/surrogates.js";
import { type Arith, type Factor, times } from "./arith.js";

/** A batch prepared for emulation: inputs rounded to the precision and zero-filled at padding. */
export interface EmulationData {
  readonly cfg: ResolvedPolicyLossConfig;
  readonly rows: number;
  readonly cols: number;
  readonly mask: Uint8Array;
  readonly lengths: Int32Array;
  readonly tokens: number;
  readonly lp: Float64Array;
  readonly old: Float64Array;
  readonly adv: Float64Array;
  readonly ref: Float64Array | null;
  readonly roll: Float64Array | null;
}

/** The emulated loss and gradient, with the term magnitudes behind each. */
export interface Emulated {
  readonly loss: number;
  readonly lossScale: number;
  readonly grad: Float64Array;
  readonly gradScale: Float64Array;
}

/** Integer divisors of the aggregation weight of a token of row b (w = 1/Π divisors). */
function divisors(
  agg: ResolvedPolicyLossConfig["aggregation"],
  d: EmulationData,
  normLen: number,
  b: number,
): number[] {
  switch (agg) {
    case "token_mean":
      return [d.tokens];
    case "seq_mean_token_mean":
      return [d.rows, d.lengths[b] as number];
    case "seq_mean_token_sum":
      return [d.rows];
    case "token_sum_norm":
      return [d.rows, normLen];
    case "token_sum":
      return [];
  }
}

function rowSums(ar: Arith, d: EmulationData, x: Float64Array): Float64Array {
  const out = new Float64Array(d.rows);
  for (let b = 0; b < d.rows; b++) {
    const xs: number[] = [];
    for (let t = 0; t < d.cols; t++)
      if (d.mask[b * d.cols + t] === 1) xs.push(x[b * d.cols + t] as number);
    out[b] = ar.sum(xs);
  }
  return out;
}

function tisWeights(ar: Arith, d: EmulationData): Float64Array | null {
  const tis = d.cfg.isCorrection;
  if (tis === null || d.roll === null) return null;
  const R = ar.round;
  const lower = R(tis.lower);
  const cap = R(tis.cap);
  const clampL = R(tis.logClamp);
  const mask = tis.mode === "mask";
  // The kernel's constraint (src/losses/kernel/policyRows.ts), each bound in the plan's dtype.
  const weight = (x: number): number => {
    const rho = ar.exp(Math.min(Math.max(x, -clampL), clampL));
    if (mask) return rho >= lower && rho <= cap ? rho : 0;
    return Math.min(Math.max(rho, lower), cap);
  };
  const diff = new Float64Array(d.lp.length);
  for (let i = 0; i < diff.length; i++)
    if (d.mask[i] === 1) diff[i] = R((d.old[i] as number) - (d.roll[i] as number));
  const rho = new Float64Array(d.lp.length).fill(1);
  const s = rowSums(ar, d, diff);
  const at = (level: "sequence" | "geometric", b: number): number =>
    level === "sequence"
      ? (s[b] as number)
      : ar.chain([times(s[b] as number), ar.norm(d.lengths[b] as number)]);
  // The row filter zeroes every weight of a row whose product or geometric-mean weight is outside.
  const rm = tis.rowMask;
  const rowIn = (b: number): boolean => {
    if (rm === null) return true;
    const w = ar.exp(at(rm.level, b));
    return w >= R(rm.lower) && w <= R(rm.cap);
  };
  if (tis.level === "token") {
    for (let i = 0; i < rho.length; i++)
      if (d.mask[i] === 1) rho[i] = rowIn(Math.floor(i / d.cols)) ? weight(diff[i] as number) : 0;
    return rho;
  }
  const w = new Float64Array(d.rows);
  for (let b = 0; b < d.rows; b++) w[b] = rowIn(b) ? weight(at(tis.level, b)) : 0;
  for (let i = 0; i < rho.length; i++) {
    if (d.mask[i] === 1) rho[i] = w[Math.floor(i / d.cols)] as number;
  }
  return rho;
}

/**
 * Refuse what the emulation does not model, from the field table's `emulated` column
 * (losses/config.ts): a field it never models, set to something other than its default, or
 * a surrogate outside its list; and the parts of modelled fields it does not model (batch-normalised
 * IS weights). Emulating the loss without them would judge another loss.
 */
function refuseUnmodelled(cfg: ResolvedPolicyLossConfig): void {
  const c = cfg as unknown as Readonly<Record<string, unknown>>;
  const surrogates = POLICY_LOSS_FIELDS.surrogate.emulated as readonly string[];
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const e = POLICY_LOSS_FIELDS[k].emulated;
    const v = c[k];
    const refused = Array.isArray(e) ? !e.includes(v as string) : e === false && isSetField(k, v);
    if (!refused) continue;
    const unmodelled = POLICY_LOSS_FIELD_KEYS.filter(
      (f) => POLICY_LOSS_FIELDS[f].emulated === false,
    );
    const rule = Array.isArray(e)
      ? `one of ${e.join(", ")} (the dtype-emulated surrogates)`
      : `unset (the dtype emulation does not model ${unmodelled.join(", ")} yet, nor surrogates other than ${surrogates.join(", ")})`;
    throw fail(ConfigError, "emulatePolicyLoss", `config.${k}`, rule, fmtValue(v));
  }
  if (cfg.isCorrection?.normalize === true)
    throw new ConfigError(
      "emulatePolicyLoss",
      "config.isCorrection.normalize",
      "emulatePolicyLoss: config.isCorrection.normalize must be false (the dtype emulation does not model batch-normalised IS weights yet); got true",
    );
}

/** Evaluate the loss and gradient of `d.cfg` on `d` under the plan of `ar`. */
export function emulatePolicyLoss(d: EmulationData, ar: Arith): Emulated {
  const { cfg, rows: B, cols: T, mask: m } = d;
  refuseUnmodelled(cfg);
  const R = ar.round;
  const n = B * T;
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) if (m[i] === 1) z[i] = R((d.lp[i] as number) - (d.old[i] as number));
  const token = cfg.ratio === "token";
  const s = new Float64Array(B);
  if (!token) {
    const zs = rowSums(ar, d, z);
    for (let b = 0; b < B; b++)
      s[b] = ar.exp(ar.chain([times(zs[b] as number), ar.norm(d.lengths[b] as number)]));
  }
  const rho = tisWeights(ar, d);
  const lo = R(cfg.lo);
  const hi = R(cfg.hi);
  const cap = cfg.cap === null ? null : R(cfg.cap);
  const lossTerms: number[] = [];
  let lossScale = 0;
  const grad = new Float64Array(n);
  const scale = new Float64Array(n);
  const dr = new Float64Array(n); // ∂L/∂r per token (sequence ratio only), and its magnitude
  for (let i = 0; i < n; i++) {
    if (m[i] !== 1) continue;
    const b = Math.floor(i / T);
    const a = d.adv[i] as number;
    const r = token ? ar.exp(z[i] as number) : (s[b] as number);
    const norms: Factor[] = divisors(cfg.aggregation, d, cfg.normLen, b).map((k) => ar.norm(k));
    const p = rho === null ? [] : [times(rho[i] as number)];
    let ell: number;
    let slope = 1;
    let gradFactors: Factor[] | null = null;
    switch (cfg.surrogate) {
      case "pg":
        ell = -R(r * a);
        break;
      case "pg_clip": {
        const rc = Math.min(Math.max(r, lo), hi);
        const pass = r >= lo && r <= hi ? 1 : 0;
        const ra = R(r * a);
        const ca = R(rc * a);
        let obj = ra;
        if (ra < ca) slope = 1;
        else if (ca < ra) {
          obj = ca;
          slope = pass;
        } else slope = (1 + pass) * 0.5;
        if (cap !== null && a < 0) {
          const floor = R(cap * a);
          if (floor > obj) {
            obj = floor;
            slope = 0;
          } else if (floor === obj) slope *= 0.5;
        }
        ell = -obj;
        break;
      }
      case "reinforce":
        ell = -R(a * (d.lp[i] as number));
        gradFactors = [times(a), ...p, ...norms];
        break;
      case "cispo": {
        const wh = cispoWeight(r, lo, hi, cfg.oneSided);
        ell = -ar.chain([times(wh), times(a), times(d.lp[i] as number)]);
        gradFactors = [times(wh), times(a), ...p, ...norms];
        break;
      }
      default:
        // Rejected on entry (see above); unreachable.
        throw new ConfigError(
          "emulatePolicyLoss",
          "config.surrogate",
          `emulatePolicyLoss: config.surrogate "${cfg.surrogate}" is not emulated`,
        );
    }
    const term = ar.chain([times(ell), ...p, ...norms]);
    lossTerms.push(term);
    lossScale += Math.abs(term);
    if (gradFactors !== null) {
      grad[i] = -ar.chain(gradFactors);
    } else if (slope === 0) {
      grad[i] = 0;
    } else {
      const f: Factor[] = [times(a), ...p, ...norms];
      if (slope !== 1) f.push(times(slope));
      if (token) grad[i] = -ar.chain([...f, times(r)]);
      else if (cfg.ratio === "sequence_token") grad[i] = -ar.chain([...f, times(s[b] as number)]);
      else dr[i] = -ar.chain(f);
    }
    scale[i] = Math.abs(grad[i] as number);
  }
  if (cfg.ratio === "sequence" && (cfg.surrogate === "pg" || cfg.surrogate === "pg_clip")) {
    const acc = rowSums(ar, d, dr);
    for (let b = 0; b < B; b++) {
      let mag = 0;
      for (let t = 0; t < T; t++) if (m[b * T + t] === 1) mag += Math.abs(dr[b * T + t] as number);
      const sb = s[b] as number;
      const g = ar.chain([times(acc[b] as number), times(sb), ar.norm(d.lengths[b] as number)]);
      for (let t = 0; t < T; t++) {
        const i = b * T + t;
        if (m[i] !== 1) continue;
        grad[i] = g;
        scale[i] = (mag * sb) / (d.lengths[b] as number);
      }
    }
  }
  let loss = ar.sum(lossTerms);
  if (cfg.kl !== null && d.ref !== null) {
    const { kind, coef, aggregation, normLen } = cfg.kl;
    if (
      cfg.kl.straight ||
      cfg.kl.weight !== "none" ||
      cfg.kl.clampDelta !== Infinity ||
      cfg.kl.clampValue !== Infinity
    ) {
      // Not modelled here yet: a contract that emulated the unclamped term would judge another loss.
      throw new ConfigError(
        "emulatePolicyLoss",
        "config.kl",
        "emulatePolicyLoss: config.kl must have no clamp, the pathwise gradient and no weight (the dtype emulation does not model KL clamps, straight-through gradients or ratio weights yet); got a clamped, straight-through or ratio-weighted KL term",
      );
    }
    const klTerms: number[] = [];
    let klScale = 0;
    for (let i = 0; i < n; i++) {
      if (m[i] !== 1) continue;
      const b = Math.floor(i / T);
      const divs = divisors(aggregation, d, normLen, b);
      const norms = divs.map((k) => ar.norm(k));
      const delta = R((d.ref[i] as number) - (d.lp[i] as number));
      let value: number;
      let dk: number;
      let dkScale: number;
      switch (kind) {
        case "k1":
          value = -delta;
          dk = 1;
          dkScale = 1;
          break;
        case "k2":
          value = R(R(delta * delta) / 2);
          dk = -delta;
          dkScale = Math.abs(delta);
          break;
        case "k3": {
          const e = Math.exp(delta);
          dkScale = 1 + e;
          if (ar.expm1Form) {
            const em1 = R(Math.expm1(delta));
            value = R(em1 - delta);
            dk = -em1;
          } else {
            const re = R(e);
            value = R(R(re - delta) - 1);
            dk = R(1 - re);
          }
          break;
        }
        case "abs":
          value = Math.abs(delta);
          dk = delta > 0 ? -1 : delta < 0 ? 1 : 0;
          dkScale = Math.abs(dk);
          break;
      }
      const kt = ar.chain([times(value), ...norms]);
      klTerms.push(kt);
      klScale += Math.abs(kt);
      const gk = ar.chain([times(R(coef)), times(dk), ...norms]);
      const gkScale = (Math.abs(coef) * dkScale) / divs.reduce((x, y) => x * y, 1);
      scale[i] = (scale[i] as number) + gkScale;
      grad[i] = R((grad[i] as number) + gk);
    }
    loss = R(loss + R(R(coef) * ar.sum(klTerms)));
    lossScale += Math.abs(coef) * klScale;
  }
  for (let i = 0; i < n; i++) scale[i] = Math.max(scale[i] as number, Math.abs(grad[i] as number));
  return { loss, lossScale, grad, gradScale: scale };
}
