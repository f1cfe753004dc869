/**
 * A strict JSON (RFC 8259) parser for untrusted files. Unlike `JSON.parse` it rejects duplicate
 * object keys (a safetensors header with two entries of one name is an aliasing attack, and a
 * config with a key twice is a typo), bounds the nesting depth and parses iteratively (an explicit
 * stack: hostile input cannot overflow the call stack), and reports the line and column of the first error (Node 20's `JSON.parse` messages
 * often carry neither). Written by hand from the RFC 8259 grammar.
 * @internal
 */

/** The outcome of {@link parseStrictJson}: the value, or the first error and where it is. */
export type StrictJsonResult =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly offset: number;
      readonly line: number;
      readonly column: number;
    };

/** Default bound on the nesting depth of arrays and objects. */
export const MAX_JSON_DEPTH = 256;

class Fail {
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {}
}

/** 1-based line and column (UTF-16 code units) of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

function describeChar(text: string, i: number): string {
  if (i >= text.length) return "end of input";
  const c = text[i] as string;
  const code = c.charCodeAt(0);
  return code < 0x20 || code === 0x7f
    ? `character U+${code.toString(16).toUpperCase().padStart(4, "0")}`
    : `'${c}'`;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** An open array or object on the parser's stack (exactly one of `array`, `object` is set). */
interface Frame {
  readonly array: unknown[] | null;
  readonly object: Record<string, unknown> | null;
  /** The key the next value of an object belongs to. */
  key: string;
}

class Parser {
  i = 0;
  constructor(
    readonly s: string,
    readonly maxDepth: number,
  ) {}

  ws(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
      else return;
    }
  }

  unexpected(what = "a JSON value"): Fail {
    return new Fail(`expected ${what}, found ${describeChar(this.s, this.i)}`, this.i);
  }

  /**
   * Parse one value iteratively: open arrays and objects live on an explicit stack (at most
   * `maxDepth` of them), so no input can overflow the call stack however deep it nests.
   */
  parse(): unknown {
    const stack: Frame[] = [];
    for (;;) {
      this.ws();
      const c = this.s[this.i];
      let value: unknown;
      if (c === "{" || c === "[") {
        if (stack.length + 1 > this.maxDepth) {
          throw new Fail(
            `nesting deeper than ${this.maxDepth} levels (arrays and objects nest at most ${this.maxDepth} deep)`,
            this.i,
          );
        }
        this.i++;
        this.ws();
        if (c === "[") {
          if (this.s[this.i] !== "]") {
            stack.push({ array: [], object: null, key: "" });
            continue;
          }
          this.i++;
          value = [];
        } else {
          const out: Record<string, unknown> = {};
          if (this.s[this.i] !== "}") {
            stack.push({ array: null, object: out, key: this.key(out) });
            continue;
          }
          this.i++;
          value = out;
        }
      } else value = this.scalar();
      // Attach the value to its parent; close every container that ends here.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) return value;
        if (top.array !== null) top.array.push(value);
        else {
          // defineProperty so that a key named "__proto__" becomes an own data property.
          Object.defineProperty(top.object, top.key, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        this.ws();
        const d = this.s[this.i];
        this.i++;
        if (d === ",") {
          if (top.object !== null) top.key = this.key(top.object);
          break;
        }
        if (d === (top.array !== null ? "]" : "}")) {
          stack.pop();
          value = top.array ?? top.object;
          continue;
        }
        this.i--;
        throw this.unexpected(top.array !== null ? "',' or ']'" : "',' or '}'");
      }
    }
  }

  /** A string key and its ':' (a key already in `out` is an error). */
  key(out: Record<string, unknown>): string {
    this.ws();
    const keyAt = this.i;
    if (this.s[this.i] !== '"') throw this.unexpected("a string key");
    const key = this.string();
    if (Object.hasOwn(out, key)) throw new Fail(`duplicate key ${JSON.stringify(key)}`, keyAt);
    this.ws();
    if (this.s[this.i] !== ":") throw this.unexpected("':'");
    this.i++;
    return key;
  }

  scalar(): unknown {
    const c = this.s[this.i];
    if (c === '"') return this.string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    if (this.s.startsWith("true", this.i)) return this.literal(4, true);
    if (this.s.startsWith("false", this.i)) return this.literal(5, false);
    if (this.s.startsWith("null", this.i)) return this.literal(4, null);
    throw this.unexpected();
  }

  literal(len: number, v: boolean | null): boolean | null {
    this.i += len;
    return v;
  }

  string(): string {
    const s = this.s;
    const start = this.i;
    this.i++;
    let out = "";
    let run = this.i;
    for (;;) {
      if (this.i >= s.length) throw new Fail("unterminated string", start);
      const code = s.charCodeAt(this.i);
      if (code === 34) {
        out += s.slice(run, this.i);
        this.i++;
        return out;
      }
      if (code < 0x20) throw new Fail(`unescaped ${describeChar(s, this.i)} in a string`, this.i);
      if (code !== 92) {
        this.i++;
        continue;
      }
      out += s.slice(run, this.i);
      const e = s[this.i + 1];
      if (e === "u") {
        const hex = s.slice(this.i + 2, this.i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new Fail("invalid \\u escape", this.i);
        out += String.fromCharCode(Number.parseInt(hex, 16));
        this.i += 6;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
        out += ESCAPES[e] as string;
        this.i += 2;
      } else {
        throw new Fail(`invalid escape \\${e ?? ""}`, this.i);
      }
      run = this.i;
    }
  }

  number(): number {
    const s = this.s;
    const start = this.i;
    const digits = (): number => {
      const from = this.i;
      while (this.i < s.length && s.charCodeAt(this.i) >= 48 && s.charCodeAt(this.i) <= 57)
        this.i++;
      return this.i - from;
    };
    if (s[this.i] === "-") this.i++;
    if (s[this.i] === "0") this.i++;
    else if (digits() === 0) throw this.unexpected("a digit");
    if (s[this.i] === ".") {
      this.i++;
      if (digits() === 0) throw this.unexpected("a digit after '.'");
    }
    if (s[this.i] === "e" || s[this.i] === "E") {
      this.i++;
      if (s[this.i] === "+" || s[this.i] === "-") this.i++;
      if (digits() === 0) throw this.unexpected("a digit in the exponent");
    }
    return Number(s.slice(start, this.i));
  }
}

/**
 * Parse `text` as one JSON value: no duplicate keys, nesting at most `maxDepth` deep, nothing but
 * whitespace after the value. Never throws; errors come back with their line and column.
 * @internal
 */
export function parseStrictJson(text: string, maxDepth: number = MAX_JSON_DEPTH): StrictJsonResult {
  const p = new Parser(text, maxDepth);
  try {
    const value = p.parse();
    p.ws();
    if (p.i < text.length)
      throw new Fail(`unexpected ${describeChar(text, p.i)} after the JSON value`, p.i);
    return { ok: true, value };
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    const { line, column } = lineColumn(text, e.offset);
    return { ok: false, reason: e.reason, offset: e.offset, line, column };
  }
}
