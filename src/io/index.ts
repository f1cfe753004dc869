/**
 * I/O: batch files and config JSON (docs/io.md). One registry of formats (TENSOR_READERS:
 * extension, sniff, pure byte parser) serves every reader. Batches come as safetensors (a from-scratch,
 * hostile-input-safe reader: every length checked before use, tensors tiling the byte buffer
 * exactly) or as JSON (nested arrays; "NaN"/"Infinity" strings for non-finite junk at padding).
 * Float inputs (F32, F16, BF16) are upcast to float64 exactly on read. Tensor names are polgrad's
 * snake_case; the {@link Batch} fields are camelCase. Configs map polgrad's snake_case JSON to
 * {@link PolicyLossConfig} and back. Every file or content failure is an IoError (code E_IO)
 * naming the file and the rule; nothing here prints.
 */

export { bf16ToNumber, f16ToNumber, numberToBf16, numberToF16 } from "../core/halfFloat.js";
export {
  BATCH_TENSOR_NAMES,
  type Batch,
  type BatchSource,
  type BatchTensorName,
  REQUIRED_BATCH_TENSORS,
  type ReadBatchOptions,
  type ToBatchOptions,
  toBatch,
} from "./batch.js";
export {
  type PolicyLossConfigJson,
  parsePolicyLossConfig,
  policyLossConfigToJson,
} from "./configJson.js";
export { contractBatchFromTensors } from "./contractBatch.js";
export { NPY_READER, parseNpy } from "./npy.js";
export { NPZ_READER, parseNpz } from "./npz.js";
export { readBatch } from "./readBatch.js";
export { readerFor, SNIFF_BYTES, TENSOR_READERS, type TensorReader } from "./readers.js";
export { readJsonFile } from "./readJsonFile.js";
export { readSafetensors } from "./readSafetensors.js";
export { readTensors } from "./readTensors.js";
export { parseSafetensors } from "./safetensors.js";
export { tensorsFromJson } from "./tensorsFromJson.js";
export {
  DEFAULT_MAX_ELEMENTS,
  DEFAULT_MAX_JSON_BYTES,
  DEFAULT_MAX_SAFETENSORS_BYTES,
  DTYPE_BYTES,
  FLOAT_DTYPES,
  MAX_FILE_TENSORS,
  MAX_SAFETENSORS_HEADER_BYTES,
  type NamedTensor,
  type ReadOptions,
  TENSOR_DTYPES,
  type TensorDtype,
  type TensorFormat,
  type TensorSet,
} from "./tensorTypes.js";
export { PT_READER, parsePt } from "./torchPt.js";
export {
  encodeSafetensors,
  type TensorsToWrite,
  type TensorToWrite,
  writeSafetensors,
} from "./writeSafetensors.js";
