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
  if (typeof x === "string") return `"${safeText(x)}"`;
  if (typeof x === "number" || typeof x === "boolean" || x === null || x === undefined) {
    return String(x);
  }
  try {
    return safeText(JSON.stringify(x, boundedJson) ?? String(x));
  } catch {
    // Cyclic, too deep (RangeError) or a throwing toJSON: describe the kind only.
    return Array.isArray(x) ? "an array" : typeof x;
  }
}

/** Items of an array a message prints before the count of the rest. */
const MAX_ITEMS = 20;

/**
 * JSON.stringify replacer of {@link fmtValue}: an array past {@link MAX_ITEMS} items is cut with
 * its length, a typed array is named with its length, so that `new Array(1e9)` or a large tensor
 * inside a value is described in microseconds, never walked.
 */
function boundedJson(_key: string, v: unknown): unknown {
  if (Array.isArray(v) && v.length > MAX_ITEMS)
    return [...v.slice(0, MAX_ITEMS), `… (${v.length} items)`];
  if (ArrayBuffer.isView(v))
    return `a ${v.constructor.name} of ${(v as unknown as { length?: number }).length ?? v.byteLength} elements`;
  return v;
}

/** Format a list of indices as `[2, 5]`, eliding past `max` entries. */
export function fmtIndices(ix: readonly number[], max = 10): string {
  if (ix.length <= max) return `[${ix.join(", ")}]`;
  return `[${ix.slice(0, max).join(", ")}, … (${ix.length} in all)]`;
}

/** Longest text a message quotes from user input before eliding the middle. */
export const MAX_QUOTED = 200;

/**
 * Quote user-provided text for a message: control characters (newlines, ESC, NUL, …) and lone
 * surrogates escaped as `\n`, `\u001b`, … (U+DC80..U+DCFF, a file name's byte that is not
 * UTF-8, as `\xff`), so that a hostile path or name can never forge a
 * second line or a terminal sequence; longer than `max` characters, the middle is elided with
 * the total length. Returns the text without quotes.
 */
export function safeText(s: string, max: number = MAX_QUOTED): string {
  const cut =
    s.length > max
      ? `${s.slice(0, Math.ceil(max / 2))}…(${s.length} chars)…${s.slice(s.length - Math.floor(max / 2))}`
      : s;
  let out = "";
  for (let i = 0; i < cut.length; i++) {
    const c = cut.charCodeAt(i);
    const hi = c >= 0xd800 && c <= 0xdbff;
    const lo = c >= 0xdc00 && c <= 0xdfff;
    if (hi && i + 1 < cut.length) {
      const d = cut.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += cut[i] + (cut[i + 1] as string);
        i++;
        continue;
      }
    }
    if (lo && c >= 0xdc80 && c <= 0xdcff) {
      // A byte of a file name that is not UTF-8 (platform/fsPath.ts): as the shell writes it.
      out += `\\x${(c - 0xdc00).toString(16)}`;
    } else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || hi || lo) {
      out +=
        c === 10
          ? "\\n"
          : c === 13
            ? "\\r"
            : c === 9
              ? "\\t"
              : `\\u${c.toString(16).padStart(4, "0")}`;
    } else out += cut[i];
  }
  return out;
}

/** Format a batch position as `(b, t)`. */
export function fmtPosition(pos: readonly number[]): string {
  return `(${pos.join(", ")})`;
}
