// The benchmark's deterministic batches (docs/performance.md#the-batches) and the .npy files
// that hand the very same values to the PyTorch peer.
//
// Every value is a function of (seed, stream, flat index) only, through a counter-based hash,
// so a batch does not depend on generation order and is reproducible from its three numbers:
//   u(s, i)      = (h(seed, s, i) + 0.5) / 2^32                       uniform on (0, 1)
//   L_b          = T                                  (full)
//                  lo + ⌊u(0, b)·(T − lo + 1)⌋, lo = ⌈0.42·T⌉   (ragged: uniform on {lo..T},
//                                                      mean (lo + T)/2 ≈ 0.71·T valid tokens)
//   old[b, t]    = −0.3 − 3·u(1, i)                    in (−3.3, −0.3)
//   lp[b, t]     = old + 0.6·(u(2, i) − 0.5)           ratio e^(lp − old) in (0.74, 1.35)
//   ref[b, t]    = old + 0.1·(u(3, i) − 0.5)
//   A[b]         = 2·u(4, b) − 1                       one advantage per row ([B])
// with i = b·T + t; rows are right-padded and padding holds 0 in every stream.
import { writeFileSync } from "node:fs";

/** The fraction of a row below which a ragged length never falls (mean length ≈ 0.71·T). */
export const RAGGED_MIN_FRACTION = 0.42;

const TWO32 = 4294967296;

/** A 32-bit mix of (seed, stream, index): a golden-ratio counter then xor-shift-multiply rounds. */
function hash(seed, stream, i) {
  let x = (Math.imul(seed, 0x9e3779b1) + Math.imul(stream, 0x85ebca77) + (i | 0)) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** u(s, i) of the header: uniform on (0, 1), never 0 or 1. */
export function uniform(seed, stream, i) {
  return (hash(seed, stream, i) + 0.5) / TWO32;
}

/** Parse "64x4096" into { B, T }. */
export function parseSize(text) {
  const m = /^(\d+)x(\d+)$/.exec(text.trim());
  if (m === null) throw new Error(`bench: a size must be BxT such as 64x4096; got ${text}`);
  const B = Number(m[1]);
  const T = Number(m[2]);
  if (B < 1 || T < 1) throw new Error(`bench: a size needs B ≥ 1 and T ≥ 1; got ${text}`);
  return { B, T };
}

/**
 * Build the batch of the header: typed streams (Float64Array, Uint8Array mask, [B] advantages),
 * the row lengths and the count of valid tokens. `fill` is "ragged" or "full".
 */
export function makeBatch(B, T, fill, seed = 0) {
  const n = B * T;
  const lo = Math.max(1, Math.ceil(RAGGED_MIN_FRACTION * T));
  const lengths = new Int32Array(B);
  const advantages = new Float64Array(B);
  const mask = new Uint8Array(n);
  const oldLogprobs = new Float64Array(n);
  const logprobs = new Float64Array(n);
  const refLogprobs = new Float64Array(n);
  let valid = 0;
  for (let b = 0; b < B; b++) {
    const L = fill === "full" ? T : lo + Math.floor(uniform(seed, 0, b) * (T - lo + 1));
    lengths[b] = L;
    valid += L;
    advantages[b] = 2 * uniform(seed, 4, b) - 1;
    for (let t = 0; t < L; t++) {
      const i = b * T + t;
      const old = -0.3 - 3 * uniform(seed, 1, i);
      mask[i] = 1;
      oldLogprobs[i] = old;
      logprobs[i] = old + 0.6 * (uniform(seed, 2, i) - 0.5);
      refLogprobs[i] = old + 0.1 * (uniform(seed, 3, i) - 0.5);
    }
  }
  return { B, T, fill, seed, valid, lengths, logprobs, oldLogprobs, refLogprobs, advantages, mask };
}

/** The policyLoss inputs in typed form: Matrix / Mask objects over the batch's own arrays. */
export function typedInputs(batch) {
  const { B: rows, T: cols } = batch;
  return {
    logprobs: { rows, cols, data: batch.logprobs },
    oldLogprobs: { rows, cols, data: batch.oldLogprobs },
    refLogprobs: { rows, cols, data: batch.refLogprobs },
    advantages: batch.advantages,
    responseMask: { rows, cols, data: batch.mask },
  };
}

function nestedRows(data, B, T) {
  const rows = new Array(B);
  for (let b = 0; b < B; b++) {
    const row = new Array(T);
    for (let t = 0; t < T; t++) row[t] = data[b * T + t];
    rows[b] = row;
  }
  return rows;
}

/** The policyLoss inputs in the README's nested form: number[][] streams and 0/1 mask rows. */
export function nestedInputs(batch) {
  const { B, T } = batch;
  return {
    logprobs: nestedRows(batch.logprobs, B, T),
    oldLogprobs: nestedRows(batch.oldLogprobs, B, T),
    refLogprobs: nestedRows(batch.refLogprobs, B, T),
    advantages: Array.from(batch.advantages),
    responseMask: nestedRows(batch.mask, B, T),
  };
}

/**
 * Write a typed array as a version-1.0 .npy file (little-endian '<f8' or '|u1', C order): the
 * magic, a header dict padded with spaces to a multiple of 64 bytes, then the raw bytes.
 */
export function writeNpy(path, data, shape) {
  const descr = data instanceof Float64Array ? "<f8" : data instanceof Uint8Array ? "|u1" : null;
  if (descr === null) throw new Error("bench: writeNpy takes a Float64Array or a Uint8Array");
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`;
  const unpadded = 10 + header.length + 1;
  header += " ".repeat((64 - (unpadded % 64)) % 64);
  header += "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  writeFileSync(path, Buffer.concat([head, Buffer.from(header, "latin1"), body]));
}

/** Write the batch's five streams as <dir>/<name>.npy under polgrad's snake_case names. */
export function writeBatchNpy(dir, batch) {
  const { B, T } = batch;
  writeNpy(`${dir}/logprobs.npy`, batch.logprobs, [B, T]);
  writeNpy(`${dir}/old_logprobs.npy`, batch.oldLogprobs, [B, T]);
  writeNpy(`${dir}/ref_logprobs.npy`, batch.refLogprobs, [B, T]);
  writeNpy(`${dir}/advantages.npy`, batch.advantages, [B]);
  writeNpy(`${dir}/response_mask.npy`, batch.mask, [B, T]);
}
