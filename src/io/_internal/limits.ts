/**
 * The readers' bounds on hostile files (docs/io.md#bounds-on-hostile-files) that are not one
 * format's own: the element cap of a read (`options.maxElements`) as a budget the parsers draw on
 * before allocating, and a counter of a JSON object's top-level keys that runs over the raw bytes
 * (chunk by chunk, so a file reader can stop before it has read a 100 MB header). Pure (no
 * `node:` import).
 * @internal
 */
import { fmtValue } from "../../core/message.js";
import { ConfigError, fail, type IoError } from "../../errors.js";
import { DEFAULT_MAX_ELEMENTS, MAX_FILE_TENSORS } from "../tensorTypes.js";

/** Builds the IoError of one rule. @internal */
export type Fail = (arg: string, rule: string, actual: string) => IoError;

/**
 * Validate a `maxElements` option: a positive safe integer, or undefined for
 * {@link DEFAULT_MAX_ELEMENTS}. @internal
 */
export function checkMaxElements(fn: string, maxElements: unknown): number {
  if (maxElements === undefined) return DEFAULT_MAX_ELEMENTS;
  if (typeof maxElements !== "number" || !Number.isSafeInteger(maxElements) || maxElements < 1) {
    throw fail(
      ConfigError,
      fn,
      "options.maxElements",
      "a positive integer (elements)",
      fmtValue(maxElements),
    );
  }
  return maxElements;
}

/** The elements a read may still allocate, out of `max` (options.maxElements). @internal */
export interface ElementBudget {
  readonly max: number;
  left: number;
}

/** A fresh budget of `max` elements. @internal */
export function elementBudget(max: number = DEFAULT_MAX_ELEMENTS): ElementBudget {
  return { max, left: max };
}

/**
 * Draw `count` elements of the tensor `arg` from the budget, or throw (before anything is
 * allocated) when they exceed what is left. @internal
 */
export function takeElements(
  fail: Fail,
  budget: ElementBudget,
  arg: string,
  count: number,
  what: string,
): void {
  if (count > budget.left) {
    throw fail(
      arg,
      `within options.maxElements = ${budget.max} elements in all tensors of the file (${budget.left} left; raise options.maxElements to read it)`,
      `${count} elements (${what})`,
    );
  }
  budget.left -= count;
}

/**
 * Counts the top-level keys of a JSON object from its bytes, fed in chunks: the commas at depth 1
 * outside strings, plus one (an upper bound: `{}` counts 1). No value is built; malformed text is
 * counted all the same and left to the parser to report. @internal
 */
export class TopLevelKeys {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private commas = 0;

  /** The keys seen so far (an upper bound). */
  get count(): number {
    return this.commas + 1;
  }

  /** Scan `bytes`; returns false as soon as more than `limit` keys are seen. */
  push(bytes: Uint8Array, limit: number): boolean {
    let { depth, inString, escaped, commas } = this;
    const stop = limit - 1;
    let ok = true;
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) depth--;
      else if (c === 0x2c && depth === 1 && ++commas > stop) {
        ok = false;
        break;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.commas = commas;
    return ok;
  }
}

/**
 * Throw unless the JSON object in `bytes` has at most {@link MAX_FILE_TENSORS} tensor keys (plus
 * `__metadata__`), counted over the raw bytes before anything is decoded or parsed. @internal
 */
export function checkTopLevelKeys(fail: Fail, arg: string, bytes: Uint8Array): void {
  const keys = new TopLevelKeys();
  if (!keys.push(bytes, MAX_FILE_TENSORS + 1)) throw tooManyTensors(fail, arg, keys.count);
}

/** The IoError of a file listing more than {@link MAX_FILE_TENSORS} tensors. @internal */
export function tooManyTensors(fail: Fail, arg: string, seen: number): IoError {
  return fail(
    arg,
    `at most ${MAX_FILE_TENSORS} tensors (and __metadata__)`,
    `more (${seen} entries counted before stopping)`,
  );
}
