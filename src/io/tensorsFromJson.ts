/**
 * The JSON batch format (docs/io.md#json-batches): a top-level object mapping tensor names to
 * rectangular nested arrays of numbers or of booleans. JSON has no NaN or Infinity, so the strings
 * "NaN", "Infinity", "-Infinity" (also "inf", "+inf", "-inf", "nan"; any case) stand for them.
 */
import { fmtValue } from "../core/message.js";
import type { IoError } from "../errors.js";
import { ioError } from "./_internal/ioError.js";
import type { NamedTensor, TensorSet } from "./tensorTypes.js";

type Fail = (arg: string, rule: string, actual: string) => IoError;

const SPECIAL = /^([+-]?)(nan|inf|infinity)$/i;

/**
 * Deepest nesting of one tensor's arrays: the strict JSON parser's bound, so that an in-memory
 * document (which may be nested 1e5 deep, or cyclic) is rejected before any walk recurses.
 */
export const MAX_JSON_TENSOR_RANK = 256;

/** The number a JSON leaf stands for, or undefined when it is not a number or special string. */
function leafNumber(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v !== "string") return undefined;
  const m = SPECIAL.exec(v);
  if (m === null) return undefined;
  if ((m[2] as string).toLowerCase() === "nan") return Number.NaN;
  return m[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
}

function where(ix: readonly number[]): string {
  return ix.length === 1 ? `row ${ix[0]}` : `row [${ix.join(", ")}]`;
}

function parseTensor(fail: Fail, name: string, v: unknown): NamedTensor {
  if (!Array.isArray(v)) throw fail(name, "a nested array of numbers or booleans", fmtValue(v));
  const shape: number[] = [];
  for (let cur: unknown = v; Array.isArray(cur); cur = cur[0]) {
    if (shape.length === MAX_JSON_TENSOR_RANK) {
      throw fail(
        name,
        `arrays nested at most ${MAX_JSON_TENSOR_RANK} deep`,
        `arrays nested more than ${MAX_JSON_TENSOR_RANK} deep (or a cyclic array)`,
      );
    }
    shape.push(cur.length);
  }
  // Values are collected first and the typed array allocated last, so that a hostile shape
  // (a long first row followed by short ones) is rejected before anything large is allocated.
  const data: number[] = [];
  let kind: "number" | "boolean" | undefined;
  const leafAt = (x: unknown, ix: readonly number[]): void => {
    const at = `(${ix.join(", ")})`;
    if (typeof x === "boolean") {
      if (kind === "number")
        throw fail(name, "all numbers or all booleans", `boolean ${x} at ${at} after numbers`);
      kind = "boolean";
      data.push(x ? 1 : 0);
      return;
    }
    const num = leafNumber(x);
    if (num === undefined) {
      const rule = 'numbers (or "NaN", "Infinity", "-Infinity") or booleans';
      throw fail(name, rule, `${Array.isArray(x) ? "an array" : fmtValue(x)} at ${at}`);
    }
    if (kind === "boolean")
      throw fail(name, "all numbers or all booleans", `${fmtValue(x)} at ${at} after booleans`);
    kind = "number";
    data.push(num);
  };
  const walk = (node: readonly unknown[], depth: number, ix: number[]): void => {
    const want = shape[depth] as number;
    if (node.length !== want) {
      const what = depth === 1 ? "row" : `array at depth ${depth}`;
      throw fail(
        name,
        `rectangular (every ${what} of length ${want})`,
        `${where(ix)} of length ${node.length}`,
      );
    }
    const leaf = depth === shape.length - 1;
    for (let i = 0; i < node.length; i++) {
      const child = node[i];
      ix.push(i);
      if (leaf) leafAt(child, ix);
      else if (Array.isArray(child)) walk(child, depth + 1, ix);
      else throw fail(name, `rectangular (an array at ${where(ix)})`, fmtValue(child));
      ix.pop();
    }
  };
  walk(v, 0, []);
  if (kind === "boolean") return { dtype: "BOOL", shape, data: Uint8Array.from(data) };
  return { dtype: "F64", shape, data: Float64Array.from(data) };
}

/**
 * Convert a parsed JSON batch document to named tensors.
 *
 * Format: `{"<name>": nested array, …, "__metadata__"?: {str: str}}`; each array rectangular, its
 * leaves all numbers (dtype F64; the strings "NaN", "Infinity", "-Infinity", "inf", "-inf", "nan"
 * in any case allowed) or all booleans (dtype BOOL).
 *
 * @param value - The parsed JSON document.
 * @param path - The file name to report in errors.
 * @returns Every tensor by name, in document order.
 * @throws {IoError} E_IO when the document is not an object, a tensor is not a rectangular array
 *   (naming the tensor and row) or is nested more than 256 deep, or a leaf is neither a number, a
 *   special string nor a boolean.
 * @derivation docs/io.md#json-batches
 * @enforcedBy test/io/tensorsFromJson.test.ts > tensorsFromJson > golden: nan and infinity strings become non-finite numbers
 * @enforcedBy test/io/tensorsFromJson.test.ts > tensorsFromJson > rejects: a ragged row naming the tensor and row
 * @enforcedBy test/hardening/bounded.test.ts > deep json > regression: tensorsFromJson rejects arrays nested 1e5 deep in memory with an IoError
 * @since 0.1.0
 */
export function tensorsFromJson(value: unknown, path: string): TensorSet {
  return tensorsFromJsonAs("tensorsFromJson", value, path);
}

/** {@link tensorsFromJson} reporting errors as `fn`. @internal */
export function tensorsFromJsonAs(fn: string, value: unknown, path: string): TensorSet {
  const fail: Fail = (arg, rule, actual) => ioError(fn, path, arg, rule, actual);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw fail("json", "an object mapping tensor names to nested arrays", fmtValue(value));
  }
  const tensors = new Map<string, NamedTensor>();
  const metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (name !== "__metadata__") {
      tensors.set(name, parseTensor(fail, name, v));
      continue;
    }
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      throw fail("__metadata__", "an object of string values", fmtValue(v));
    }
    for (const [k, s] of Object.entries(v)) {
      if (typeof s !== "string")
        throw fail(
          "__metadata__",
          "an object of string values",
          `${fmtValue(s)} at key ${JSON.stringify(k)}`,
        );
      Object.defineProperty(metadata, k, {
        value: s,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return { path, format: "json", tensors, metadata };
}
