/**
 * Helpers of the io tests: a per-file temporary directory, hand-built safetensors bytes (header
 * text and body given explicitly, so hostile files are spelled out in the test) and an assertion
 * that a call throws an IoError (and nothing else).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { IoError, type PolgradError } from "../../src/errors.js";

/** Create a temporary directory removed after the calling test file. */
export function useTmpDir(): (name: string) => string {
  const dir = mkdtempSync(join(tmpdir(), "polgrad-io-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return (name: string) => join(dir, name);
}

/** Write bytes or text to `path` and return the path. */
export function writeFile(path: string, content: Uint8Array | string): string {
  writeFileSync(path, content);
  return path;
}

/** Little-endian u64 bytes of `n`. */
export function u64(n: bigint | number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

/** Concatenate byte arrays. */
export function concat(...parts: readonly (Uint8Array | readonly number[])[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Safetensors bytes from a header (object → JSON.stringify, string → as is, bytes → raw) and a
 * body; `headerLength` overrides the length field.
 */
export function stBytes(
  header: unknown,
  body: Uint8Array | readonly number[] = [],
  headerLength?: bigint | number,
): Uint8Array {
  const h =
    header instanceof Uint8Array
      ? header
      : new TextEncoder().encode(typeof header === "string" ? header : JSON.stringify(header));
  return concat(u64(headerLength ?? h.length), h, body);
}

/** Little-endian float64 bytes of the values. */
export function f64Bytes(...xs: number[]): Uint8Array {
  const b = new Uint8Array(8 * xs.length);
  const v = new DataView(b.buffer);
  for (const [i, x] of xs.entries()) v.setFloat64(8 * i, x, true);
  return b;
}

/** Little-endian u16 bytes of the bit patterns. */
export function u16Bytes(...bits: number[]): Uint8Array {
  const b = new Uint8Array(2 * bits.length);
  const v = new DataView(b.buffer);
  for (const [i, x] of bits.entries()) v.setUint16(2 * i, x, true);
  return b;
}

/** Run `f`, require an IoError (code E_IO, given arg if any), and return it. */
export function expectIoError(f: () => unknown, arg?: string): IoError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught, "expected an IoError to be thrown").toBeInstanceOf(IoError);
  const e = caught as IoError;
  expect(e.code).toBe("E_IO");
  if (arg !== undefined) expect(e.arg).toBe(arg);
  return e;
}

/** Run `f`, require a PolgradError of class `cls` with `code` and `arg`, and return it. */
export function expectPolgradError<E extends PolgradError>(
  f: () => unknown,
  cls: new (...args: never[]) => E,
  code: string,
  arg?: string,
): E {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(cls);
  const e = caught as E;
  expect(e.code).toBe(code);
  if (arg !== undefined) expect(e.arg).toBe(arg);
  return e;
}
