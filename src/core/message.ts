/**
 * The single source of error wording: `<fn>: <arg> must be <rule>; got <actual>`, plus
 * formatters for shapes, values and index lists so that every message prints them alike.
 */

/** Build the standard message `<fn>: <arg> must be <rule>; got <actual>`. */
export function mustBe(fn: string, arg: string, rule: string, actual: string): string {
  return `${fn}: ${arg} must be ${rule}; got ${actual}`;
}

/** Format a shape as `[4, 8]`. */
export function fmtShape(shape: readonly number[]): string {
  return `[${shape.join(", ")}]`;
}

/** Format a scalar or small value for a message (`String(x)`; strings quoted; objects as JSON). */
export function fmtValue(x: unknown): string {
  if (typeof x === "string") return JSON.stringify(x);
  if (typeof x === "number" || typeof x === "boolean" || x === null || x === undefined) {
    return String(x);
  }
  try {
    return JSON.stringify(x) ?? String(x);
  } catch {
    return String(x);
  }
}

/** Format a list of indices as `[2, 5]`, eliding past `max` entries. */
export function fmtIndices(ix: readonly number[], max = 10): string {
  if (ix.length <= max) return `[${ix.join(", ")}]`;
  return `[${ix.slice(0, max).join(", ")}, … (${ix.length} in all)]`;
}
