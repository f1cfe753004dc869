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
