/**
 * Input validation shared by every public function: rank and shape checks, mask checks, finiteness
 * at response positions, and the `[B]` / `[B, T]` advantage broadcast. Each check throws the typed
 * error of `errors.ts` with the standard message (`core/message.ts`). Validation happens at call
 * entry, before any arithmetic (docs/conventions.md#errors).
 *
 * The one home of the shared argument checks: every layer's scalar option checks (flags, eps,
 * finite and positive numbers, config objects) live here too. What stays elsewhere is a rule of
 * one domain: the policy-loss config's fields (losses/config.ts and configValidate.ts), a KL
 * clamp (kl/estimator.ts), the clip census's ClipConfig (diagnostics/clipping.ts).
 */
import { ConfigError, fail, IoError, MaskError, NonFiniteError, ShapeError } from "../errors.js";
import { fmtIndices, fmtShape, fmtValue } from "./message.js";
import { camelCase } from "./names.js";
import {
  type DenseLike,
  isDenseLike,
  isMask,
  isMatrix,
  isNumericTypedArray,
  type Mask,
  type MaskLike,
  type Matrix,
  type MatrixLike,
  type VectorLike,
} from "./tensor.js";

/** Describe the shape of an arbitrary nested-array value for a message, e.g. `[4]` or `[2, 3]`. */
export function describeShape(x: unknown): string {
  if (isMatrix(x) || isMask(x) || isDenseLike(x)) return fmtShape([x.rows, x.cols]);
  if (isNumericTypedArray(x)) return fmtShape([x.length]);
  if (!Array.isArray(x)) return x === null ? "null" : typeof x;
  // Iterative, and at most MAX_RANK dimensions printed: an array nested 1e5 deep is described in
  // a short line, never by recursion (no RangeError) nor by a 300 kB shape.
  const dims: number[] = [];
  let depth = 0;
  let cur: unknown = x;
  while (Array.isArray(cur) || isNumericTypedArray(cur)) {
    if (depth < MAX_RANK) dims.push(cur.length);
    depth++;
    cur = (cur as ArrayLike<unknown>)[0];
  }
  return depth > MAX_RANK
    ? `${fmtShape(dims).slice(0, -1)}, …] (nested ${depth} deep)`
    : fmtShape(dims);
}

/**
 * Describe what was received for a tensor argument, accurately: `shape [4, 6]` for arrays and
 * tensors, `a flat Float32Array of length 24 (build a matrix with matrix(rows, cols, data))`,
 * `{rows: 4, cols: 6} with 20 values`, `undefined`, `a string "x"`.
 * @enforcedBy test/core/inputs.test.ts > describeInput > golden: every kind of received value is named accurately
 */
export function describeInput(x: unknown): string {
  if (x === undefined) return "undefined";
  if (x === null) return "null";
  if (isNumericTypedArray(x)) {
    return `a flat ${x.constructor.name} of length ${x.length} (give 2-D data as matrix(rows, cols, data) or mask(rows, cols, data))`;
  }
  if (ArrayBuffer.isView(x)) return `a ${x.constructor.name}`;
  if (isDenseLike(x) || isMatrix(x) || isMask(x)) {
    const d = x as { rows: number; cols: number; data: { length: number } };
    const n = d.rows * d.cols;
    return d.data.length === n
      ? `shape ${fmtShape([d.rows, d.cols])}`
      : `{rows: ${fmtValue(d.rows)}, cols: ${fmtValue(d.cols)}} with ${d.data.length} values`;
  }
  if (Array.isArray(x)) return `shape ${describeShape(x)}`;
  if (typeof x === "object") {
    const keys = Object.keys(x).slice(0, 5);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return `a ${typeof x} ${fmtValue(x)}`;
}

/** Dimensions {@link describeShape} prints before eliding the rest. */
const MAX_RANK = 8;

/** Describe one offending cell of a nested array: a primitive by value, an array or object by kind. */
function cellText(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object" && v !== null) return "an object";
  return fmtValue(v);
}

/**
 * Require `x` to be a plain object (a record of named tensors such as PolicyLossInputs), so that
 * reading its fields can never throw a TypeError; otherwise a {@link ShapeError} naming `arg`.
 * @enforcedBy test/hardening/losses.test.ts > hardening: typed errors > rejects: null, undefined, a number, a string or an array as the inputs object
 */
export function requireRecord(fn: string, arg: string, x: unknown, what: string): void {
  if (typeof x !== "object" || x === null || Array.isArray(x)) {
    throw fail(ShapeError, fn, arg, what, fmtValue(x));
  }
  // polgrad's file and Python names are snake_case; the TypeScript fields are camelCase. A
  // snake_case key whose camelCase field is absent is a porting slip, not a missing tensor.
  for (const key of Object.keys(x)) {
    if (!key.includes("_")) continue;
    const c = camelCase(key);
    if (INPUT_FIELDS.has(c) && !Object.hasOwn(x, c)) {
      throw fail(
        ShapeError,
        fn,
        `${arg}.${c}`,
        `given under its camelCase name (the TypeScript API; snake_case is the file and Python name, docs/porting.md)`,
        `the snake_case key ${fmtValue(key)} (did you mean "${c}"?)`,
      );
    }
  }
}

/**
 * Whether `x` is an array holding a number at every index. An index loop, not `every`: a hole
 * (`[ , 1]`) reads `undefined` and fails here instead of being skipped, and `new Array(1e9)` fails
 * at index 0 instead of being walked. @internal
 */
export function isNumberArray(x: unknown): x is number[] {
  if (!Array.isArray(x)) return false;
  for (let i = 0; i < x.length; i++) if (typeof x[i] !== "number") return false;
  return true;
}

/**
 * Require an object argument that is not a tensor (a config, an options object, a result to
 * render, a report): not null, not a primitive, not an array, and holding each of `keys`;
 * otherwise a {@link ConfigError} naming `arg` (or `arg.key` for a key that is absent), so that
 * reading its fields can never throw a TypeError.
 * @enforcedBy test/hardening/plainValues.test.ts > public api > rejects: every hostile plain value to every exported function is a PolgradError, quickly
 */
export function requireObject(
  fn: string,
  arg: string,
  x: unknown,
  what: string,
  keys: readonly string[] = [],
): void {
  if (typeof x !== "object" || x === null || Array.isArray(x)) {
    throw fail(ConfigError, fn, arg, what, describeInput(x));
  }
  for (const k of keys) {
    if (!(k in x)) {
      throw fail(ConfigError, fn, `${arg}.${k}`, `present (${arg} is ${what})`, "undefined");
    }
  }
}

/**
 * Require a string argument (a name, a path, a source text); otherwise a {@link ConfigError}
 * naming `arg`, described without converting it (an array of 1e9 holes is never joined).
 */
export function requireString(
  fn: string,
  arg: string,
  x: unknown,
  what = "a string",
): asserts x is string {
  if (typeof x !== "string") throw fail(ConfigError, fn, arg, what, describeInput(x));
}

/**
 * Require an array whose every index holds an item `ok` accepts (a hole is `undefined`, so a sparse
 * array fails at its first hole, and `new Array(1e9)` at index 0); otherwise a
 * {@link ConfigError} naming `arg` and the first bad index.
 */
export function requireArrayOf(
  fn: string,
  arg: string,
  x: unknown,
  what: string,
  ok: (item: unknown) => boolean,
): void {
  if (!Array.isArray(x)) throw fail(ConfigError, fn, arg, what, describeInput(x));
  for (let i = 0; i < x.length; i++) {
    if (!ok(x[i])) {
      throw fail(ConfigError, fn, arg, what, `${describeInput(x[i])} at index ${i}`);
    }
  }
}

/**
 * Require a number (any float: a formatter prints NaN and ±∞ as Python does); otherwise a
 * {@link ConfigError} naming `arg`.
 */
export function requireNumber(fn: string, arg: string, x: unknown): asserts x is number {
  if (typeof x !== "number") throw fail(ConfigError, fn, arg, "a number", describeInput(x));
}

/** Require an integer in [lo, hi]; otherwise a {@link ConfigError} naming `arg` and the range. */
export function requireInteger(
  fn: string,
  arg: string,
  x: unknown,
  lo: number,
  hi: number,
): asserts x is number {
  if (typeof x !== "number" || !Number.isInteger(x) || x < lo || x > hi)
    throw fail(ConfigError, fn, arg, `an integer in [${lo}, ${hi}]`, fmtValue(x));
}

/** Require a function argument (a loss, a callback); otherwise a {@link ConfigError} naming `arg`. */
export function requireFunction(fn: string, arg: string, x: unknown, what = "a function"): void {
  if (typeof x !== "function") throw fail(ConfigError, fn, arg, what, describeInput(x));
}

/**
 * Require a path argument: a non-empty string; otherwise an {@link IoError} naming `arg`.
 */
export function requirePath(fn: string, arg: string, x: unknown): asserts x is string {
  if (typeof x !== "string" || x.length === 0)
    throw fail(
      IoError,
      fn,
      arg,
      "a non-empty file path",
      typeof x === "string" ? '""' : describeInput(x),
    );
}

/**
 * Require the bytes of a file (a parser's input): a Uint8Array (a Node Buffer is one); otherwise an
 * {@link IoError} naming `arg`.
 */
export function requireBytes(fn: string, arg: string, x: unknown): asserts x is Uint8Array {
  if (!(x instanceof Uint8Array)) {
    const got = ArrayBuffer.isView(x) ? `a ${x.constructor.name}` : describeInput(x);
    throw fail(IoError, fn, arg, "a Uint8Array of the file's bytes", got);
  }
}

/** Whether `x` is a non-empty array of rows (arrays or numeric typed arrays), holes failing. */
function isRows(x: unknown): x is readonly ArrayLike<unknown>[] {
  if (!Array.isArray(x) || x.length === 0) return false;
  for (let i = 0; i < x.length; i++) {
    const r: unknown = x[i];
    if (!Array.isArray(r) && !isNumericTypedArray(r)) return false;
  }
  return true;
}

/** The camelCase fields of the inputs records (PolicyLossInputs, PapoInputs, batches). */
/** The `[B, T]` streams a batch may hold besides its mask and advantages, in field order. @internal */
export const BATCH_STREAM_FIELDS = [
  "logprobs",
  "oldLogprobs",
  "refLogprobs",
  "rolloutLogprobs",
  "values",
  "oldValues",
  "returns",
  "entropies",
  "maskedLogprobs",
  "maskedEntropies",
] as const;

const INPUT_FIELDS: ReadonlySet<string> = new Set([
  ...BATCH_STREAM_FIELDS,
  "advantages",
  "responseMask",
]);

/**
 * Validate and convert a `[B, T]` matrix argument. Nested rows must be rectangular and hold numbers
 * (any float, NaN included: finiteness is checked separately at response positions).
 */
export function toMatrix(
  fn: string,
  arg: string,
  x: MatrixLike,
  alloc: (n: number) => Float64Array = newF64,
): Matrix {
  if (isMatrix(x)) {
    checkDense(fn, arg, x);
    return x;
  }
  const cell = (v: unknown, b: number, t: number): number => {
    if (typeof v === "number") return v;
    throw fail(ShapeError, fn, arg, "a [B, T] array of numbers", `${cellText(v)} at (${b}, ${t})`);
  };
  return isDenseLike(x) ? fromDense(fn, arg, x, alloc, cell) : fromRows(fn, arg, x, alloc, cell);
}

/** A fresh zero-filled float64 array (the default allocation of a converted stream). */
const newF64 = (n: number): Float64Array => new Float64Array(n);
/** A fresh zero-filled byte array (the default allocation of a converted mask). */
const newU8 = (n: number): Uint8Array => new Uint8Array(n);

/**
 * Copy a {@link DenseLike}'s row-major data into a typed array from `alloc` (every element is
 * written, so it may be reused memory), converting each cell with `cell`.
 */
function fromDense<A extends Float64Array | Uint8Array>(
  fn: string,
  arg: string,
  x: DenseLike,
  alloc: (n: number) => A,
  cell: (v: unknown, b: number, t: number) => number,
): { rows: number; cols: number; data: A } {
  checkDense(fn, arg, x);
  const data = alloc(x.rows * x.cols);
  const src = x.data;
  // A typed array of numbers converts whole (float64 target); a mask still checks every cell.
  if (!(data instanceof Uint8Array) && isNumericTypedArray(src)) {
    data.set(src as ArrayLike<number>);
    return { rows: x.rows, cols: x.cols, data };
  }
  for (let b = 0; b < x.rows; b++)
    for (let t = 0; t < x.cols; t++) data[b * x.cols + t] = cell(src[b * x.cols + t], b, t);
  return { rows: x.rows, cols: x.cols, data };
}

function checkDense(fn: string, arg: string, x: Matrix | Mask | DenseLike): void {
  if (
    !Number.isInteger(x.rows) ||
    !Number.isInteger(x.cols) ||
    x.rows < 1 ||
    x.cols < 1 ||
    x.data.length !== x.rows * x.cols
  ) {
    throw fail(ShapeError, fn, arg, "2-D [B, T] with B, T >= 1", describeInput(x));
  }
}

/**
 * Copy rectangular nested rows into a row-major typed array, converting each cell with `cell`.
 * One pass per stream: a `Float64Array` row is copied whole; a plain row is read cell by cell with
 * the common case (a number, or a 0/1 for a mask) tested first and `cell` called only for the rest,
 * which converts or throws (docs/performance.md#nested-input). The float and mask loops are
 * separate functions, so that each stores into one kind of typed array (a loop storing into both
 * is polymorphic and several times slower).
 */
function fromRows<A extends Float64Array | Uint8Array>(
  fn: string,
  arg: string,
  x: unknown,
  alloc: (n: number) => A,
  cell: (v: unknown, b: number, t: number) => number,
): { rows: number; cols: number; data: A } {
  if (!isRows(x)) throw fail(ShapeError, fn, arg, "2-D [B, T]", describeInput(x));
  const rows = x.length;
  const cols = (x[0] as ArrayLike<unknown>).length;
  if (cols < 1) throw fail(ShapeError, fn, arg, "2-D [B, T] with T >= 1", "T = 0");
  const data = alloc(rows * cols);
  const checked = (v: unknown, b: number, t: number): number => {
    // A cell that is itself an array is a rank > 2 tensor (however deep): a shape error.
    if (Array.isArray(v)) {
      throw fail(ShapeError, fn, arg, "2-D [B, T]", describeInput(x));
    }
    return cell(v, b, t);
  };
  for (let b = 0; b < rows; b++) {
    const row = x[b] as ArrayLike<unknown>;
    if (row.length !== cols) {
      throw fail(
        ShapeError,
        fn,
        arg,
        `rectangular [B, T] (every row of length ${cols})`,
        `row ${b} of length ${row.length}`,
      );
    }
    if (data instanceof Uint8Array) maskRow(row, data, b, cols, checked);
    else if (row instanceof Float64Array) data.set(row, b * cols);
    else floatRow(row, data as Float64Array, b, cols, checked);
  }
  return { rows, cols, data };
}

/** Row b of a float stream: numbers as they are, anything else through `fail`. */
function floatRow(
  row: ArrayLike<unknown>,
  data: Float64Array,
  b: number,
  cols: number,
  fail: (v: unknown, b: number, t: number) => number,
): void {
  const o = b * cols;
  for (let t = 0; t < cols; t++) {
    const v = row[t];
    data[o + t] = typeof v === "number" ? v : fail(v, b, t);
  }
}

/** Row b of a mask: 0 and 1 as they are, anything else (booleans, errors) through `fail`. */
function maskRow(
  row: ArrayLike<unknown>,
  data: Uint8Array,
  b: number,
  cols: number,
  fail: (v: unknown, b: number, t: number) => number,
): void {
  const o = b * cols;
  for (let t = 0; t < cols; t++) {
    const v = row[t];
    data[o + t] = v === 1 || v === 0 ? v : fail(v, b, t);
  }
}

/** Validate and convert a `[B]` vector argument (any float values; finiteness checked separately). */
export function toVector(fn: string, arg: string, x: VectorLike): Float64Array {
  if (x instanceof Float64Array) return x;
  if (isNumericTypedArray(x)) return Float64Array.from(x);
  if (!isNumberArray(x)) {
    throw fail(
      ShapeError,
      fn,
      arg,
      "1-D [B] of numbers",
      Array.isArray(x) ? `shape ${describeShape(x)}` : describeInput(x),
    );
  }
  return Float64Array.from(x);
}

/**
 * Validate and convert a `[B, T]` response mask: values 0/1 (or booleans), shape equal to
 * `like`'s, and at least one response token in every row (unless `emptyRows` is "allow", as the
 * framework models need: verl, OpenRLHF and TRL accept rows with no response token).
 * @enforcedBy test/core/validate.test.ts > toMask > rejects: non-boolean values, wrong shapes and rows with zero response tokens
 */
export function toMask(
  fn: string,
  x: MaskLike,
  like?: { readonly rows: number; readonly cols: number; readonly arg: string },
  arg = "responseMask",
  emptyRows: "reject" | "allow" = "reject",
  values: "check" | "caller" = "check",
  alloc: (n: number) => Uint8Array = newU8,
): Mask {
  let mask: Mask;
  if (isMask(x)) {
    // "caller": a kernel that reads every mask value anyway checks them (checkMaskValues).
    if (values === "check") checkMaskValues(fn, arg, x.data);
    checkDense(fn, arg, x);
    mask = x;
  } else {
    const cell = (v: unknown, b: number, t: number): number => {
      if (v === true || v === 1) return 1;
      if (v === false || v === 0) return 0;
      throw fail(
        MaskError,
        fn,
        arg,
        "boolean (true/false or 1/0)",
        `${cellText(v)} at (${b}, ${t})`,
      );
    };
    mask = isDenseLike(x) ? fromDense(fn, arg, x, alloc, cell) : fromRows(fn, arg, x, alloc, cell);
  }
  if (like !== undefined && (mask.rows !== like.rows || mask.cols !== like.cols)) {
    throw fail(
      ShapeError,
      fn,
      arg,
      `the shape of ${like.arg} ${fmtShape([like.rows, like.cols])}`,
      `shape ${fmtShape([mask.rows, mask.cols])}`,
    );
  }
  if (emptyRows === "allow") return mask;
  const empty: number[] = [];
  for (let b = 0; b < mask.rows; b++) {
    let any = 0;
    for (let t = 0; t < mask.cols; t++) any |= mask.data[b * mask.cols + t] as number;
    if (!any) empty.push(b);
  }
  if (empty.length > 0) throw emptyRowsError(fn, arg, empty);
  return mask;
}

/**
 * Require a {@link Mask}'s values to be 0 or 1: a {@link MaskError} at the first other value.
 * (Nested and dense masks are converted cell by cell, which checks them.)
 */
export function checkMaskValues(fn: string, arg: string, data: Uint8Array): void {
  for (let i = 0; i < data.length; i++) {
    if ((data[i] as number) > 1) {
      throw fail(MaskError, fn, arg, "0/1 valued", `${data[i]} at flat index ${i}`);
    }
  }
}

/**
 * The error for a mask with rows of zero response tokens (listed in `empty`), as {@link toMask}
 * throws it; kernels that count row lengths themselves throw the same one.
 */
export function emptyRowsError(fn: string, arg: string, empty: readonly number[]): MaskError {
  return fail(
    MaskError,
    fn,
    arg,
    "non-empty in every row (at least one response token)",
    `zero response tokens in rows ${fmtIndices(empty)}`,
  );
}

/** Require two matrices to have identical shapes. */
export function checkSameShape(fn: string, argA: string, a: Matrix, argB: string, b: Matrix): void {
  if (a.rows !== b.rows || a.cols !== b.cols) {
    throw fail(
      ShapeError,
      fn,
      argB,
      `the shape of ${argA} ${fmtShape([a.rows, a.cols])}`,
      `shape ${fmtShape([b.rows, b.cols])}`,
    );
  }
}

/**
 * Require `x` to be finite at every response position (padding may hold anything).
 * @enforcedBy test/core/validate.test.ts > checkFiniteAt > rejects: nan and infinity at response positions only
 */
export function checkFiniteAt(fn: string, arg: string, x: Matrix, mask: Mask): void {
  const { data } = x;
  const m = mask.data;
  for (let i = 0; i < data.length; i++) {
    if (m[i] === 1 && !Number.isFinite(data[i] as number)) {
      const b = Math.floor(i / x.cols);
      throw fail(
        NonFiniteError,
        fn,
        arg,
        "finite at response positions",
        `${data[i]} at (${b}, ${i - b * x.cols})`,
      );
    }
  }
}

/** Require every entry of `x` to be finite. */
export function checkFiniteAll(fn: string, arg: string, x: ArrayLike<number>, cols = 0): void {
  for (let i = 0; i < x.length; i++) {
    if (!Number.isFinite(x[i] as number)) {
      const where = cols > 0 ? `(${Math.floor(i / cols)}, ${i % cols})` : `index ${i}`;
      throw fail(NonFiniteError, fn, arg, "finite everywhere", `${x[i]} at ${where}`);
    }
  }
}

/**
 * Validate `[B]` or `[B, T]` advantages against `like` without broadcasting: `{ row }`, a `[B]`
 * vector finite everywhere, or `{ token }`, a `[B, T]` matrix whose finiteness at response positions
 * the caller checks (checkFiniteAt, or a kernel where it reads the values).
 */
export function advantagesOf(
  fn: string,
  advantages: VectorLike | MatrixLike,
  like: { readonly rows: number; readonly cols: number },
  likeArg: string,
  arg = "advantages",
  alloc: (n: number) => Float64Array = newF64,
):
  | { readonly row: Float64Array; readonly token: null }
  | { readonly row: null; readonly token: Matrix } {
  const { rows, cols } = like;
  const isVec = isNumericTypedArray(advantages) || isNumberArray(advantages);
  if (isVec) {
    const v = toVector(fn, arg, advantages as VectorLike);
    if (v.length !== rows) {
      throw fail(
        ShapeError,
        fn,
        arg,
        `[B] with B = ${rows} (the rows of ${likeArg}) or [B, T] = ${fmtShape([rows, cols])}`,
        `shape ${fmtShape([v.length])}`,
      );
    }
    checkFiniteAll(fn, arg, v);
    return { row: v, token: null };
  }
  if (!isMatrix(advantages) && !isDenseLike(advantages) && !isRows(advantages)) {
    throw fail(ShapeError, fn, arg, "[B] or [B, T]", describeInput(advantages));
  }
  const a = toMatrix(fn, arg, advantages as MatrixLike, alloc);
  if (a.rows !== rows || a.cols !== cols) {
    throw fail(
      ShapeError,
      fn,
      arg,
      `[B] with B = ${rows} or [B, T] = ${fmtShape([rows, cols])} (the shape of ${likeArg})`,
      `shape ${fmtShape([a.rows, a.cols])}`,
    );
  }
  return { row: null, token: a };
}

/**
 * Broadcast `[B]` or `[B, T]` advantages to `[B, T]`, zero at masked positions. A `[B]` vector must
 * be finite everywhere; a `[B, T]` matrix only at response positions.
 * @enforcedBy test/core/validate.test.ts > broadcastAdvantages > golden: [B] advantages expand along T and are zero at padding
 */
export function broadcastAdvantages(
  fn: string,
  advantages: VectorLike | MatrixLike,
  like: Matrix,
  likeArg: string,
  mask: Mask,
  arg = "advantages",
): Matrix {
  const { rows, cols } = like;
  const out = new Float64Array(rows * cols);
  const m = mask.data;
  const adv = advantagesOf(fn, advantages, like, likeArg, arg);
  if (adv.row !== null) {
    const v = adv.row;
    for (let b = 0; b < rows; b++) {
      const a = v[b] as number;
      for (let t = 0; t < cols; t++) if (m[b * cols + t] === 1) out[b * cols + t] = a;
    }
    return { rows, cols, data: out };
  }
  const a = adv.token;
  checkFiniteAt(fn, arg, a, mask);
  for (let i = 0; i < out.length; i++) if (m[i] === 1) out[i] = a.data[i] as number;
  return { rows, cols, data: out };
}

/**
 * Require a boolean option.
 * @internal
 */
export function checkFlag(fn: string, arg: string, value: unknown): boolean {
  if (typeof value !== "boolean") {
    throw fail(ConfigError, fn, arg, "a boolean", fmtValue(value));
  }
  return value;
}

/**
 * Require a finite number >= 0: an `eps` (a regularizer added to a std or a variance), a
 * tolerance, a gap, a weight.
 * @internal
 */
export function checkEps(fn: string, arg: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw fail(ConfigError, fn, arg, "a finite number >= 0", fmtValue(value));
  }
  return value;
}

/**
 * Require a finite number (GAE's γ and λ; polgrad leaves their range open).
 * @internal
 */
export function checkFiniteNumber(fn: string, arg: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw fail(ConfigError, fn, arg, "a finite number", fmtValue(value));
  }
  return value;
}

/**
 * Throw when a denominator `spread + eps` is 0, i.e. the spread is 0 and `eps` is 0: polgrad would
 * return 0/0 = NaN there; polgrad-ts raises instead (docs/derivations/advantages.md#group-normalization).
 * @internal
 */
export function zeroDenominator(fn: string, arg: string, where: string): ConfigError {
  return fail(ConfigError, fn, arg, `> 0 when ${where}`, "0");
}

/**
 * Require a config object (not null, not a primitive).
 * @internal
 */
export function checkObject<T extends object>(fn: string, arg: string, value: T): T {
  if (typeof value !== "object" || value === null) {
    throw fail(ConfigError, fn, arg, "an object", fmtValue(value));
  }
  return value;
}

/**
 * Require a positive finite number (a clip width, a bound, a finite-difference step).
 * @internal
 */
export function checkPositive(fn: string, arg: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw fail(ConfigError, fn, arg, "a positive finite number", fmtValue(value));
  }
  return value;
}
