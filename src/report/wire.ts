/**
 * The wire form of library results (`--json` output, JSON files): keys camelCase → snake_case,
 * matrices → nested rows, masks → nested booleans, typed arrays → arrays. Numbers are written by
 * JSON.stringify, which prints the shortest string that round-trips the float64 exactly.
 * Non-finite numbers cannot occur in results (errors are thrown instead); if one does, it is
 * written as the string "NaN" / "Infinity" / "-Infinity" rather than JSON's silent null.
 */
import { camelCase } from "../core/names.js";
import { isMask, isMatrix, maskToRows, toRows } from "../core/tensor.js";

/** Convert a camelCase identifier to snake_case (`gradLogprobs` → `grad_logprobs`). */
export function snakeCase(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function wireNumber(x: number): number | string {
  if (Number.isFinite(x)) return x;
  return Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
}

/**
 * Convert a library value to its JSON wire form (snake_case keys, nested rows).
 *
 * @param value - Any result object, array, matrix, mask or scalar.
 * @returns A JSON-serialisable value.
 * @enforcedBy test/report/wire.test.ts > toWire > golden: matrices become rows and keys snake_case
 * @since 0.1.0
 */
export function toWire(value: unknown): unknown {
  if (typeof value === "number") return wireNumber(value);
  if (value === null || typeof value !== "object") return value ?? null;
  if (isMatrix(value)) return toRows(value).map((r) => r.map(wireNumber));
  if (isMask(value)) return maskToRows(value);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number>, (x) => wireNumber(Number(x)));
  }
  if (Array.isArray(value)) return value.map(toWire);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[snakeCase(k)] = toWire(v);
  return out;
}

/**
 * The inverse of {@link toWire}'s key renaming for documents polgrad reads back (a --summary-out
 * file): every object key snake_case → camelCase, iteratively (no recursion on the input's
 * nesting), values unchanged.
 *
 * @param value - A parsed JSON value.
 * @returns The same value with camelCase keys.
 * @enforcedBy test/diagnostics/runShards.test.ts > run shards > identity: a run diagnosed in shards and merged equals the run diagnosed at once
 * @since 0.1.0
 */
export function camelKeys(value: unknown): unknown {
  const root: { v: unknown } = { v: value };
  const stack: { holder: Record<string, unknown> | unknown[]; key: string | number }[] = [
    { holder: root as unknown as Record<string, unknown>, key: "v" },
  ];
  while (stack.length > 0) {
    const { holder, key } = stack.pop() as (typeof stack)[number];
    const v = (holder as Record<string | number, unknown>)[key];
    if (Array.isArray(v)) {
      const copy = [...v];
      (holder as Record<string | number, unknown>)[key] = copy;
      for (let i = 0; i < copy.length; i++) stack.push({ holder: copy, key: i });
    } else if (typeof v === "object" && v !== null) {
      const copy: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) copy[camelCase(k)] = x;
      (holder as Record<string | number, unknown>)[key] = copy;
      for (const k of Object.keys(copy)) stack.push({ holder: copy, key: k });
    }
  }
  return root.v;
}

/** Cells of a matrix row joined into one piece. */
const ROW_RUN = 4096;

/**
 * The text of `JSON.stringify(toWire(value), null, indent)`, in pieces: the same characters, but
 * never one string (a V8 string holds at most 2^29 − 24 characters, so a 512×16384 result's rows
 * could not be printed at all) and without building the nested rows of a matrix or a mask, which
 * are written straight from their typed arrays. `emit` receives pieces of about `chunk` characters
 * (a whole number of lines' worth, in order). Recursion follows the document's own nesting.
 *
 * @param value - Any value {@link toWire} accepts.
 * @param emit - Receives the text, piece by piece.
 * @param indent - Spaces per level (JSON.stringify's third argument).
 * @param chunk - Characters per piece (at least).
 * @enforcedBy test/report/wire.test.ts > writeWireJson > identity: the pieces join to JSON.stringify(toWire(value), null, 2) on random documents
 * @since 0.1.0
 */
export function writeWireJson(
  value: unknown,
  emit: (text: string) => void,
  indent: number = 2,
  chunk: number = 1 << 20,
): void {
  const parts: string[] = [];
  let size = 0;
  const put = (s: string): void => {
    parts.push(s);
    size += s.length;
    if (size >= chunk) {
      emit(parts.join(""));
      parts.length = 0;
      size = 0;
    }
  };
  const pads: string[] = [];
  const pad = (depth: number): string => {
    let p = pads[depth];
    if (p === undefined) {
      p = `\n${" ".repeat(indent * depth)}`;
      pads[depth] = p;
    }
    return p;
  };
  // A leaf as JSON.stringify writes the wire value; undefined for one it omits (a function…).
  const leaf = (v: unknown): string | undefined => JSON.stringify(toWire(v));
  const rows = (r: number, c: number, at: (i: number) => string, depth: number): void => {
    if (r === 0) {
      put("[]");
      return;
    }
    put("[");
    for (let b = 0; b < r; b++) {
      put(`${b === 0 ? "" : ","}${pad(depth + 1)}`);
      if (c === 0) {
        put("[]");
        continue;
      }
      // A row's cells joined a run of ROW_RUN at a time (fewer, larger pieces; never one string
      // per row, which could itself be too long).
      const inner = pad(depth + 2);
      const sep = `,${inner}`;
      for (let t0 = 0; t0 < c; t0 += ROW_RUN) {
        const t1 = Math.min(c, t0 + ROW_RUN);
        const cells = new Array<string>(t1 - t0);
        for (let t = t0; t < t1; t++) cells[t - t0] = at(b * c + t);
        put(`${t0 === 0 ? "[" : ","}${inner}${cells.join(sep)}`);
      }
      put(`${pad(depth + 1)}]`);
    }
    put(`${pad(depth)}]`);
  };
  const num = (x: number): string => JSON.stringify(wireNumber(x));
  const walk = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== "object") {
      put(leaf(v) ?? "null");
      return;
    }
    if (isMatrix(v)) {
      const d = v.data;
      rows(v.rows, v.cols, (i) => num(d[i] as number), depth);
      return;
    }
    if (isMask(v)) {
      const d = v.data;
      rows(v.rows, v.cols, (i) => (d[i] === 1 ? "true" : "false"), depth);
      return;
    }
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      const d = v as unknown as ArrayLike<number>;
      if (d.length === 0) {
        put("[]");
        return;
      }
      put("[");
      for (let i = 0; i < d.length; i++)
        put(`${i === 0 ? "" : ","}${pad(depth + 1)}${num(Number(d[i]))}`);
      put(`${pad(depth)}]`);
      return;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) {
        put("[]");
        return;
      }
      put("[");
      for (let i = 0; i < v.length; i++) {
        put(`${i === 0 ? "" : ","}${pad(depth + 1)}`);
        const x = v[i];
        if (x !== null && typeof x === "object") walk(x, depth + 1);
        else put(leaf(x) ?? "null");
      }
      put(`${pad(depth)}]`);
      return;
    }
    let first = true;
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      // A leaf JSON.stringify omits (a function, a symbol) is omitted here too.
      const text = x !== null && typeof x === "object" ? null : leaf(x);
      if (text === undefined) continue;
      put(`${first ? "{" : ","}${pad(depth + 1)}${JSON.stringify(snakeCase(k))}: `);
      first = false;
      if (text === null) walk(x, depth + 1);
      else put(text);
    }
    put(first ? "{}" : `${pad(depth)}}`);
  };
  walk(value, 0);
  if (parts.length > 0) emit(parts.join(""));
}
