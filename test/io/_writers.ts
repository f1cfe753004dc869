/**
 * Test-side writers of NumPy files (`.npy` v1.0, `.npz` stored or deflated): bench/npyFiles.mjs,
 * shared with the bench's run in every format. Used to build the framework-name matrix of
 * batches; the readers are tested against numpy-written fixtures separately (test/io/npy.test.ts).
 */
export { type NpyDescr, type NpyEntry, npyBytes, npzBytes } from "../../bench/npyFiles.mjs";
