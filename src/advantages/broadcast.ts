import { type EmptyRows, emptyRowsMaskRule } from "../aggregate/emptyRows.js";
import { fmtShape } from "../core/message.js";
import type { MaskLike, Matrix, VectorLike } from "../core/tensor.js";
import { checkFiniteAll, checkObject, toMask, toVector } from "../core/validate.js";
import { fail, ShapeError } from "../errors.js";

/**
 * Broadcast per-sequence values over each sequence's response tokens.
 *
 * Formula: out[b, t] = perSeq[b] where m[b, t], else 0 (a branch, never a product with the mask).
 * Gradient / stop-gradient: ∂out[b, t]/∂perSeq[b] = m[b, t]; used on advantages, which are sg[·].
 *
 * @param perSeq - The `[B]` per-sequence values, finite, B ≥ 1.
 * @param responseMask - The `[B, T]` response mask with B rows, ≥ 1 response token per row
 *   unless `options.emptyRows` is `count` or `drop` (such a row gets zeros).
 * @param options - `emptyRows`: `reject` (default), `count` or `drop` (the same here).
 * @returns The `[B, T]` broadcast, exactly 0 at padding.
 * @throws {ShapeError} E_SHAPE when perSeq is not 1-D or empty, or the batch sizes differ.
 * @throws {NonFiniteError} E_NONFINITE when perSeq holds NaN or ±Inf.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has an empty row.
 * @derivation docs/derivations/advantages.md#broadcasting
 * @enforcedBy test/advantages/broadcast.test.ts > broadcastToTokens > golden: [2, -3] over row lengths [2, 1]
 * @enforcedBy test/advantages/broadcast.test.ts > broadcastToTokens > property: response tokens carry their row value and padding is exactly +0
 * @enforcedBy test/advantages/emptyRows.test.ts > token-level functions with rows of no response token > identity: broadcastToTokens gives an empty row zeros and the others the bits of the batch without it, under count and drop
 * @since 0.1.0
 */
export function broadcastToTokens(
  perSeq: VectorLike,
  responseMask: MaskLike,
  options: { readonly emptyRows?: EmptyRows } = {},
): Matrix {
  const fn = "broadcastToTokens";
  const rule = emptyRowsMaskRule(
    fn,
    "options.emptyRows",
    checkObject(fn, "options", options).emptyRows,
  );
  const x = toVector(fn, "perSeq", perSeq);
  if (x.length === 0) {
    throw fail(ShapeError, fn, "perSeq", "non-empty (at least one sequence)", "shape [0]");
  }
  checkFiniteAll(fn, "perSeq", x);
  const mask = toMask(fn, responseMask, undefined, "responseMask", rule);
  if (mask.rows !== x.length) {
    throw fail(
      ShapeError,
      fn,
      "perSeq",
      `[B] with B = ${mask.rows} (the rows of responseMask ${fmtShape([mask.rows, mask.cols])})`,
      `shape ${fmtShape([x.length])}`,
    );
  }
  const { rows: B, cols: T, data: m } = mask;
  const out = new Float64Array(B * T);
  for (let b = 0; b < B; b++) {
    const value = x[b] as number;
    for (let t = 0; t < T; t++) if (m[b * T + t] === 1) out[b * T + t] = value;
  }
  return { rows: B, cols: T, data: out };
}
