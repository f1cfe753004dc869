// Writers of NumPy files, written from the format description (NEP 1, "A simple file format for
// NumPy arrays"): `.npy` v1.0 with a C-order little-endian `<f8`, `<f4`, `|u1`, `|b1` or `<i8`
// array, and `.npz` = a zip (fflate's zipSync, stored or deflated) of `name.npy` entries. For
// the bench's run in every format and the tests' batches (test/io/_writers.ts re-exports them);
// the readers are tested against numpy-written fixtures separately (test/io/npy.test.ts).
import { zipSync } from "fflate";

/** Bytes of a `.npy` v1.0 file holding `data` with `shape` (C order). */
export function npyBytes(descr, shape, data) {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  // magic (6) + version (2) + u16 length (2) + header + '\n' is a multiple of 64 (NEP 1).
  const pad = 64 - ((10 + header.length + 1) % 64);
  header = `${header}${" ".repeat(pad % 64)}\n`;
  const size = descr === "<f8" || descr === "<i8" ? 8 : descr === "<f4" ? 4 : 1;
  const out = new Uint8Array(10 + header.length + size * data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0);
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  const view = new DataView(out.buffer, 10 + header.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (descr === "<f8") view.setFloat64(8 * i, v, true);
    else if (descr === "<f4") view.setFloat32(4 * i, v, true);
    else if (descr === "<i8") view.setBigInt64(8 * i, BigInt(v), true);
    else view.setUint8(i, v);
  }
  return out;
}

/** Bytes of an `.npz` archive (np.savez layout: `name.npy` per array), stored or deflated. */
export function npzBytes(arrays, deflate = false) {
  const files = {};
  for (const [name, a] of Object.entries(arrays))
    files[`${name}.npy`] = npyBytes(a.descr, a.shape, a.data);
  return zipSync(files, { level: deflate ? 6 : 0 });
}
