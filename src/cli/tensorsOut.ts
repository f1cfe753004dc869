/**
 * `loss --out FILE.safetensors` (docs/cli.md#tensor-output): the `[B, T]` fields of a result
 * (gradients, per-token objective, ratios, clip flags) written as one safetensors file instead of
 * nested JSON rows — at 256×8192 the JSON form is ~214 MB of text — while `--json` keeps the
 * scalars and names the file. Tensor names are the wire names (`grad_logprobs`); matrices are F64
 * (bitwise the float64 values), masks BOOL.
 */
import { isMask, isMatrix } from "../core/tensor.js";
import { snakeCase } from "../report/wire.js";

/**
 * The longest text String() gives a float64 (24 characters: sign, 17 significant digits, point,
 * a three-digit exponent). The file's header is padded to the length it has with this as the
 * `loss` metadata, so the tensors start at the same byte whatever the loss, and the by-rows writer
 * of `loss --out` (which learns the loss last) writes the same bytes as this one.
 */
export const WIDEST_NUMBER: string = String(-2.2250738585072014e-308);

/** What `--json` says of the tensor file: its path and each tensor's dtype and shape. */
export interface TensorsFileInfo {
  readonly path: string;
  readonly tensors: Readonly<Record<string, { readonly dtype: string; readonly shape: number[] }>>;
}

/**
 * Write the top-level matrix and mask fields of `result` to `path` and return the result without
 * them, plus the file's description.
 *
 * @param path - The `.safetensors` file to write.
 * @param result - The result object `--json` would print (camelCase fields).
 * @param metadata - String metadata stored in the file (`__metadata__`).
 * @returns The scalar part of the result and the tensor file's description.
 * @throws {IoError} E_IO when the file cannot be written (writeSafetensors).
 */
export async function splitTensorsOut(
  path: string,
  result: Readonly<Record<string, unknown>>,
  metadata: Readonly<Record<string, string>>,
): Promise<{ kept: Record<string, unknown>; file: TensorsFileInfo }> {
  const reserve = Object.hasOwn(metadata, "loss")
    ? { ...metadata, loss: WIDEST_NUMBER }
    : undefined;
  const kept: Record<string, unknown> = {};
  const tensors: Record<
    string,
    { dtype: "F64" | "BOOL"; shape: number[]; data: ArrayLike<number> }
  > = {};
  const info: Record<string, { dtype: string; shape: number[] }> = {};
  for (const [key, value] of Object.entries(result)) {
    if (isMatrix(value) || isMask(value)) {
      const dtype = isMatrix(value) ? "F64" : "BOOL";
      const name = snakeCase(key);
      tensors[name] = { dtype, shape: [value.rows, value.cols], data: value.data };
      info[name] = { dtype, shape: [value.rows, value.cols] };
    } else kept[key] = value;
  }
  const { writeSafetensors } = await import("../io/writeSafetensors.js");
  writeSafetensors(
    path,
    tensors,
    metadata,
    reserve === undefined ? {} : { reserveMetadata: reserve },
  );
  return { kept, file: { path, tensors: info } };
}
