/**
 * Batch plumbing of the contracts: rounding every stream of a batch to a precision, and the
 * zero-filled float64 views the emulator reads. @internal
 */
import { type Mask, type Matrix, type MatrixLike, rowLengths } from "../../core/tensor.js";
import {
  broadcastAdvantages,
  isNumberArray,
  toMask,
  toMatrix,
  toVector,
} from "../../core/validate.js";
import type { ResolvedPolicyLossConfig } from "../../losses/config.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import type { Round } from "./arith.js";
import type { EmulationData } from "./emulatePolicyLoss.js";

/** The optional `[B, T]` streams a contract batch may carry besides the policy-loss inputs. */
export const EXTRA_STREAMS = ["maskedLogprobs", "entropies", "maskedEntropies"] as const;

const STREAMS = ["logprobs", "oldLogprobs", "refLogprobs", "rolloutLogprobs", ...EXTRA_STREAMS];

function roundMatrix(fn: string, arg: string, x: MatrixLike, round: Round): Matrix {
  const m = toMatrix(fn, arg, x);
  const data = new Float64Array(m.data.length);
  for (let i = 0; i < data.length; i++) data[i] = round(m.data[i] as number);
  return { rows: m.rows, cols: m.cols, data };
}

/**
 * Copy `batch` with every `[B, T]` stream and the advantages rounded by `round` (padding keeps
 * its junk, rounded); the mask and absent streams are kept as they are.
 */
export function roundBatch<T extends PolicyLossInputs>(fn: string, batch: T, round: Round): T {
  const out: Record<string, unknown> = { ...(batch as object) };
  for (const key of STREAMS) {
    const x = (batch as unknown as Record<string, MatrixLike | null | undefined>)[key];
    if (x !== null && x !== undefined) out[key] = roundMatrix(fn, key, x, round);
  }
  const a = batch.advantages;
  const isVec = a instanceof Float64Array || isNumberArray(a);
  if (isVec) out.advantages = toVector(fn, "advantages", a as Float64Array).map(round);
  else out.advantages = roundMatrix(fn, "advantages", a as MatrixLike, round);
  return out as T;
}

function zeroFilled(x: Matrix, m: Uint8Array): Float64Array {
  const out = new Float64Array(x.data.length);
  for (let i = 0; i < out.length; i++) if (m[i] === 1) out[i] = x.data[i] as number;
  return out;
}

/** The emulator's view of an already validated and rounded batch. */
export function emulationData(
  fn: string,
  cfg: ResolvedPolicyLossConfig,
  inputs: PolicyLossInputs,
): EmulationData {
  const lp = toMatrix(fn, "logprobs", inputs.logprobs);
  const mask: Mask = toMask(fn, inputs.responseMask, {
    rows: lp.rows,
    cols: lp.cols,
    arg: "logprobs",
  });
  const m = mask.data;
  const lengths = rowLengths(mask);
  let tokens = 0;
  for (let b = 0; b < lengths.length; b++) tokens += lengths[b] as number;
  const opt = (x: MatrixLike | null | undefined, arg: string): Float64Array | null =>
    x === null || x === undefined ? null : zeroFilled(toMatrix(fn, arg, x), m);
  return {
    cfg,
    rows: lp.rows,
    cols: lp.cols,
    mask: m,
    lengths,
    tokens,
    lp: zeroFilled(lp, m),
    old: zeroFilled(toMatrix(fn, "oldLogprobs", inputs.oldLogprobs), m),
    adv: broadcastAdvantages(fn, inputs.advantages, lp, "logprobs", mask).data,
    ref: cfg.kl === null ? null : opt(inputs.refLogprobs, "refLogprobs"),
    roll: cfg.isCorrection === null ? null : opt(inputs.rolloutLogprobs, "rolloutLogprobs"),
  };
}
