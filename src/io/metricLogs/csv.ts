/**
 * A small RFC 4180 CSV reader for the W&B exports (docs/diagnostics/logs.md#wb-exports):
 * fields separated by `,`, records by CRLF or LF, a field in double quotes may hold `,`, line
 * breaks and `""` (one quote). It yields each row with the line it starts on and whether it
 * ended with a line break, so that the caller can tell a row cut off by a live writer (the last
 * one, without its line break) from a malformed row inside the file, and it stops collecting a
 * row's fields past a bound. Written here rather than taken from npm: the readers need those
 * positions and that distinction, over text, in a pure module. Pure: no `node:` import.
 * @internal
 */

/** One CSV row. @internal */
export interface CsvRow {
  /** The fields, unquoted (at most the reader's `maxFields`). */
  readonly fields: string[];
  /** 1-based line the row starts on. */
  readonly line: number;
  /** The row ended with a line break (false for the last row of a file without one). */
  readonly complete: boolean;
  /** Why the row is malformed (a quote inside an unquoted field, text after a closing quote, an unclosed quote, too many fields), when it is. */
  readonly error?: string;
}

/** Reads the rows of a CSV text one by one. @internal */
export class CsvReader {
  private i = 0;
  private line = 1;

  /**
   * @param s - The text.
   * @param maxFields - Fields kept per row; a row with more is malformed (settable: a caller
   *   bounds the data rows by the header's length).
   */
  constructor(
    private readonly s: string,
    public maxFields: number,
  ) {
    if (s.charCodeAt(0) === 0xfeff) this.i = 1;
  }

  /** The next row, or null at the end of the text. */
  next(): CsvRow | null {
    const s = this.s;
    if (this.i >= s.length) return null;
    const line = this.line;
    const fields: string[] = [];
    let error: string | undefined;
    for (;;) {
      let field: string;
      if (s.charCodeAt(this.i) === 34) {
        const r = this.quoted();
        if (r === null) {
          return {
            fields,
            line,
            complete: false,
            error: "an unclosed quote at the end of the file",
          };
        }
        field = r;
        const c = s.charCodeAt(this.i);
        if (this.i < s.length && c !== 44 && c !== 10 && c !== 13 && error === undefined)
          error = `text after a closing quote at line ${this.line}`;
      } else {
        const from = this.i;
        while (this.i < s.length) {
          const c = s.charCodeAt(this.i);
          if (c === 44 || c === 10 || c === 13) break;
          if (c === 34 && error === undefined)
            error = `a quote inside an unquoted field at line ${this.line}`;
          this.i++;
        }
        field = s.slice(from, this.i);
      }
      if (fields.length < this.maxFields) fields.push(field);
      else if (error === undefined) error = `more than ${this.maxFields} fields`;
      // Skip to the separator or the end of the record (text after a closing quote included).
      while (this.i < s.length) {
        const c = s.charCodeAt(this.i);
        if (c === 44 || c === 10 || c === 13) break;
        this.i++;
      }
      if (this.i >= s.length) return withError({ fields, line, complete: false }, error);
      const c = s.charCodeAt(this.i);
      if (c === 44) {
        this.i++;
        continue;
      }
      // CRLF, LF or a lone CR ends the record.
      this.i += c === 13 && s.charCodeAt(this.i + 1) === 10 ? 2 : 1;
      this.line++;
      return withError({ fields, line, complete: true }, error);
    }
  }

  /** A quoted field from the opening quote at `i`; null when it is never closed. */
  private quoted(): string | null {
    const s = this.s;
    let out = "";
    let from = this.i + 1;
    for (let j = from; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c === 10) this.line++;
      else if (c === 34) {
        if (s.charCodeAt(j + 1) === 34) {
          out += s.slice(from, j + 1);
          from = j + 2;
          j++;
        } else {
          this.i = j + 1;
          return out + s.slice(from, j);
        }
      }
    }
    this.i = s.length;
    return null;
  }
}

function withError(row: CsvRow, error: string | undefined): CsvRow {
  return error === undefined ? row : { ...row, error };
}
