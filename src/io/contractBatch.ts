/**
 * A contract batch from named tensors (docs/contracts.md#batch-files): the policy-loss batch of
 * {@link toBatch} plus the masked-view streams an extension reads, `masked_logprobs` and
 * `masked_entropies`. It lives in io/ so that contracts/ takes in-memory batches and reads no files.
 */
import type { ContractBatch } from "../contracts/contract.js";
import { fmtShape } from "../core/message.js";
import type { Matrix } from "../core/tensor.js";
import { ioError } from "./_internal/files.js";
import { toBatch } from "./batch.js";
import { checkTensorSet } from "./names.js";
import { FLOAT_DTYPES, type NamedTensor, type TensorSet } from "./tensorTypes.js";

/** File names of the extension streams, mapped to their batch fields. */
const EXTENSION_TENSORS = {
  masked_logprobs: "maskedLogprobs",
  masked_entropies: "maskedEntropies",
} as const;

function floatMatrix(set: TensorSet, name: string, t: NamedTensor, like: Matrix): Matrix {
  const fn = "contractBatchFromTensors";
  if (!FLOAT_DTYPES.includes(t.dtype) || !(t.data instanceof Float64Array)) {
    throw ioError(
      fn,
      set.path,
      name,
      `a float dtype (${FLOAT_DTYPES.join(", ")})`,
      `dtype ${t.dtype}`,
    );
  }
  if (t.shape.length !== 2 || t.shape[0] !== like.rows || t.shape[1] !== like.cols) {
    throw ioError(
      fn,
      set.path,
      name,
      `the shape of logprobs ${fmtShape([like.rows, like.cols])}`,
      `shape ${fmtShape(t.shape)}`,
    );
  }
  return { rows: like.rows, cols: like.cols, data: t.data };
}

/**
 * Validate named tensors as a contract batch: the batch tensors of `toBatch` plus
 * `masked_logprobs` and `masked_entropies` (float, the shape of logprobs).
 *
 * Formula: toBatch(set without the extension tensors) ∪ { maskedLogprobs, maskedEntropies }.
 *
 * @param set - Tensors as read by `readTensors`.
 * @returns The batch with the extension streams that are present.
 * @throws {IoError} E_IO for anything `toBatch` rejects, or an extension tensor of the wrong dtype
 *   or shape.
 * @derivation docs/contracts.md#batch-files
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > golden: a papo batch file with masked_logprobs holds and exits 0
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > rejects: a masked_logprobs tensor of the wrong shape exits 2
 * @since 0.1.0
 */
export function contractBatchFromTensors(set: TensorSet): ContractBatch {
  checkTensorSet("contractBatchFromTensors", "set", set);
  const rest = new Map(set.tensors);
  for (const name of Object.keys(EXTENSION_TENSORS)) rest.delete(name);
  const batch = toBatch({ ...set, tensors: rest });
  const out: Record<string, unknown> = { ...batch };
  for (const [name, field] of Object.entries(EXTENSION_TENSORS)) {
    const t = set.tensors.get(name);
    if (t !== undefined) out[field] = floatMatrix(set, name, t, batch.logprobs);
  }
  return out as unknown as ContractBatch;
}
