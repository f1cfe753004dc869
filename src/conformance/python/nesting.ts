/**
 * CPython's tokenizer limits, checked before tree-sitter sees a source: at most 99 levels of
 * indentation (CPython's `MAXINDENT` is 100 entries of its indentation stack, the base level
 * included: "too many levels of indentation") and at most 200 nested brackets (`MAXLEVEL`, "too
 * many nested parentheses"); measured with CPython 3.11.7's compile(), see the test. A source past either is not valid Python,
 * and tree-sitter's WASM runtime, whose C stack lives in a fixed region of linear memory, fails on
 * such nesting with "memory access out of bounds" instead of a syntax error (docs/fuzz.md).
 *
 * A small lexer, written by hand because no maintained npm package tokenizes Python: it skips
 * comments and string literals (single, double and triple quotes, with backslash escapes and any
 * prefix), counts bracket depth, and keeps a stack of indentation widths for lines that start a
 * logical line outside brackets and strings. It only needs to be exact for valid Python; on invalid
 * Python it may report a different first problem than CPython, which rejects the source either way.
 * @internal
 */

/** The deepest indentation CPython's tokenizer accepts: `MAXINDENT` (100) less the base level. */
export const MAX_INDENT_LEVELS = 99;
/** CPython's `MAXLEVEL`: the deepest bracket nesting the tokenizer accepts. */
export const MAX_BRACKET_DEPTH = 200;

/**
 * The deepest indentation stack over *physical* lines (continuation lines inside brackets
 * included), a bound of the parser rather than of Python. tree-sitter-python's external scanner
 * keeps an indentation stack that error recovery pushes inside brackets too, and serializes it
 * into a 1 KiB buffer; the fuzzer found that 1,400 such levels corrupt the WASM runtime so that
 * later, valid sources silently extract no definitions. The deepest physical stack in any `.py`
 * file of TRL f2cd5771 is 9 levels.
 */
export const MAX_PHYSICAL_INDENT_LEVELS = 200;

/** The first nesting limit a source breaks: what, and the 1-based line. */
export interface NestingViolation {
  readonly what: string;
  readonly line: number;
}

/** Width of a line's leading whitespace with tabs to the next multiple of 8, as CPython counts it. */
function indentWidth(src: string, start: number): { width: number; end: number } {
  let width = 0;
  let i = start;
  for (; i < src.length; i++) {
    const c = src[i];
    if (c === " ") width++;
    else if (c === "\t") width = (Math.floor(width / 8) + 1) * 8;
    else if (c === "\f") width = 0;
    else break;
  }
  return { width, end: i };
}

function physicalViolation(line: number): NestingViolation {
  return {
    what: `more than ${MAX_PHYSICAL_INDENT_LEVELS} levels of indentation over physical lines (the parser's bound)`,
    line,
  };
}

/**
 * The first CPython tokenizer nesting limit `source` breaks, or null. Linear in the source length,
 * no recursion, no allocation beyond the two indentation stacks (≤ 100 and ≤ 201 entries).
 */
export function pythonNestingViolation(source: string): NestingViolation | null {
  const indents: number[] = [0];
  const physical: number[] = [0];
  /** Push or pop the physical stack for a line indented `width`; true past the bound. */
  const physicalLine = (width: number): boolean => {
    while (physical.length > 1 && width < (physical[physical.length - 1] as number)) physical.pop();
    if (width > (physical[physical.length - 1] as number)) {
      physical.push(width);
      if (physical.length - 1 > MAX_PHYSICAL_INDENT_LEVELS) return true;
    }
    return false;
  };
  let depth = 0;
  let line = 1;
  let atLineStart = true;
  let i = 0;
  const n = source.length;
  while (i < n) {
    if (atLineStart) {
      atLineStart = false;
      const { width, end } = indentWidth(source, i);
      i = end;
      const c = source[i];
      const blank = c === undefined || c === "\n" || c === "\r" || c === "#";
      if (!blank && physicalLine(width)) return physicalViolation(line);
      if (depth > 0) continue;
      // Blank and comment-only lines do not change the indentation.
      if (c !== undefined && c !== "\n" && c !== "\r" && c !== "#") {
        const top = indents[indents.length - 1] as number;
        if (width > top) {
          indents.push(width);
          if (indents.length - 1 > MAX_INDENT_LEVELS)
            return { what: `more than ${MAX_INDENT_LEVELS} levels of indentation`, line };
        } else {
          while (indents.length > 1 && width < (indents[indents.length - 1] as number))
            indents.pop();
        }
      }
      continue;
    }
    const c = source[i] as string;
    if (c === "\n") {
      line++;
      i++;
      atLineStart = true;
      continue;
    }
    if (c === "\\" && source[i + 1] === "\n") {
      // An explicit line join: the next physical line continues this logical line.
      line++;
      i += 2;
      continue;
    }
    if (c === "#") {
      while (i < n && source[i] !== "\n") i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const triple = source[i + 1] === c && source[i + 2] === c;
      const quote = triple ? c.repeat(3) : c;
      const opened = line;
      i += quote.length;
      let closed = false;
      while (i < n) {
        const d = source[i] as string;
        if (d === "\\") {
          if (source[i + 1] === "\n") line++;
          i += 2;
          continue;
        }
        if (d === "\n") {
          line++;
          if (!triple) {
            closed = true; // an unterminated single-quoted string ends at the line
            break;
          }
          // tree-sitter's error recovery may lex a string's lines as code: they count towards
          // the parser's physical bound too (docs/fuzz.md, input 1396).
          const { width, end } = indentWidth(source, i + 1);
          const e = source[end];
          if (e !== undefined && e !== "\n" && e !== "\r" && physicalLine(width))
            return physicalViolation(line);
        }
        if (source.startsWith(quote, i)) {
          i += quote.length;
          closed = true;
          break;
        }
        i++;
      }
      // CPython: "unterminated triple-quoted string literal"; tree-sitter's recovery of a long
      // one did not end (the fuzzer's input 1396: a 1 MB source, no outcome after minutes).
      if (!closed && triple)
        return {
          what: `an unterminated triple-quoted string (opened at line ${opened})`,
          line: opened,
        };
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      depth++;
      if (depth > MAX_BRACKET_DEPTH)
        return { what: `more than ${MAX_BRACKET_DEPTH} nested brackets`, line };
    } else if ((c === ")" || c === "]" || c === "}") && depth > 0) depth--;
    i++;
  }
  return null;
}
