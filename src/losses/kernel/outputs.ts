/**
 * The `[B, T]` outputs of the fused policy-loss kernel: allocated once, in one buffer, or taken
 * from the caller (`PolicyLossOptions.out`) (docs/performance.md#outputs).
 *
 * One buffer, staggered: the three float64 outputs are written in the same loop, at the same index.
 * Separate large allocations start on page boundaries, so `grad[i]`, `objective[i]` and `ratio[i]`
 * would share their low address bits and compete for the same cache sets; writing them together
 * measured about 2× slower than one at a time (256×8192, this project's machine). Carving them from
 * one `ArrayBuffer` with a 520-byte stagger between views removes the conflict. A result's views
 * therefore share one `.buffer`; each view's `byteOffset` and `length` delimit its own data.
 */
import { fmtValue } from "../../core/message.js";
import { ConfigError, fail } from "../../errors.js";

/** The `[B, T]` arrays the kernel writes. `fresh`: zero-filled by allocation (padding is 0). */
export interface PolicyOutputs {
  readonly grad: Float64Array;
  readonly objective: Float64Array;
  readonly ratio: Float64Array;
  readonly low: Uint8Array;
  readonly high: Uint8Array;
  readonly fresh: boolean;
}

/** Caller-provided buffers for {@link policyLoss}'s `[B, T]` outputs, each of length B·T. */
export interface PolicyLossOut {
  readonly gradLogprobs?: Float64Array;
  readonly perTokenObjective?: Float64Array;
  readonly ratio?: Float64Array;
  readonly clippedLow?: Uint8Array;
  readonly clippedHigh?: Uint8Array;
}

/**
 * The one place a {@link PolicyOutputs} is built: every outputs object has the same hidden class,
 * so the kernel's property reads stay monomorphic whichever path made it. @internal
 */
export function outputs(
  grad: Float64Array,
  objective: Float64Array,
  ratio: Float64Array,
  low: Uint8Array,
  high: Uint8Array,
  fresh: boolean,
): PolicyOutputs {
  return { grad, objective, ratio, low, high, fresh };
}

/** Bytes between consecutive views (a multiple of 8, not of 64 or 4096). */
const STAGGER = 520;

/**
 * Allocate the outputs for `n` positions in one zero-filled buffer (a SharedArrayBuffer when
 * `shared`, for the worker threads), staggered. @internal
 */
export function allocOutputs(n: number, shared: boolean): PolicyOutputs {
  const f64 = n * 8 + STAGGER;
  const u8 = n + STAGGER;
  const bytes = 3 * f64 + 2 * u8;
  const buf = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  return outputs(
    new Float64Array(buf, 0, n),
    new Float64Array(buf, f64, n),
    new Float64Array(buf, 2 * f64, n),
    new Uint8Array(buf, 3 * f64, n),
    new Uint8Array(buf, 3 * f64 + u8, n),
    true,
  );
}

/** The `[B, T]` output arrays by their result names, as the caller may give or ask for them. @internal */
export type OutputKey =
  | "gradLogprobs"
  | "perTokenObjective"
  | "ratio"
  | "clippedLow"
  | "clippedHigh";

/** Only some of the outputs, each full length (the others are not returned). @internal */
export type SomeOutputs = {
  -readonly [K in OutputKey]?: K extends "clippedLow" | "clippedHigh" ? Uint8Array : Float64Array;
};

/**
 * Allocate the asked-for outputs of `n` positions in one zero-filled buffer, staggered as
 * {@link allocOutputs} staggers all five; `given` ones are kept. A single output is an array of
 * its own (nothing to stagger it from): its `buffer` is exactly its data. @internal
 */
export function allocSome(n: number, want: readonly OutputKey[], given: SomeOutputs): SomeOutputs {
  const make = want.filter((k) => given[k] === undefined);
  if (make.length === 1) {
    const k = make[0] as OutputKey;
    const out: SomeOutputs = { ...given };
    if (k === "clippedLow" || k === "clippedHigh") out[k] = new Uint8Array(n);
    else out[k] = new Float64Array(n);
    return out;
  }
  const size = (k: OutputKey) => (k === "clippedLow" || k === "clippedHigh" ? n : n * 8) + STAGGER;
  const buf = new ArrayBuffer(make.reduce((a, k) => a + size(k), 0));
  const out: SomeOutputs = { ...given };
  let at = 0;
  // The float64 views first: their offsets stay multiples of 8.
  for (const k of [...make].sort((a, b) => size(b) - size(a))) {
    if (k === "clippedLow" || k === "clippedHigh") out[k] = new Uint8Array(buf, at, n);
    else out[k] = new Float64Array(buf, at, n);
    at += size(k);
  }
  return out;
}

const OUT_FIELDS = [
  ["gradLogprobs", Float64Array],
  ["perTokenObjective", Float64Array],
  ["ratio", Float64Array],
  ["clippedLow", Uint8Array],
  ["clippedHigh", Uint8Array],
] as const;

/**
 * Validate `options.out` (every given field a Float64Array / Uint8Array of length n, disjoint from
 * the others and from the input arrays `reads`) and complete it with fresh arrays; undefined when
 * no field is given. @internal
 */
export function callerOutputs(
  fn: string,
  out: unknown,
  n: number,
  reads: readonly ArrayBufferView[],
): PolicyOutputs | undefined {
  const given = callerArrays(fn, out, n, reads);
  if (given === undefined) return undefined;
  const pick = <A>(v: A | undefined, make: () => A): A => (v === undefined ? make() : v);
  return outputs(
    pick(given.gradLogprobs, () => new Float64Array(n)),
    pick(given.perTokenObjective, () => new Float64Array(n)),
    pick(given.ratio, () => new Float64Array(n)),
    pick(given.clippedLow, () => new Uint8Array(n)),
    pick(given.clippedHigh, () => new Uint8Array(n)),
    false,
  );
}

/**
 * The arrays of `options.out`, validated as {@link callerOutputs} validates them; undefined when
 * none is given. @internal
 */
export function callerArrays(
  fn: string,
  out: unknown,
  n: number,
  reads: readonly ArrayBufferView[],
): SomeOutputs | undefined {
  if (out === undefined || out === null) return undefined;
  if (typeof out !== "object" || Array.isArray(out)) {
    throw fail(ConfigError, fn, "options.out", "an object of output arrays", fmtValue(out));
  }
  const given = out as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!OUT_FIELDS.some(([k]) => k === key)) {
      throw fail(
        ConfigError,
        fn,
        `options.out.${key}`,
        `one of ${OUT_FIELDS.map(([k]) => k).join(", ")}`,
        "an unknown field",
      );
    }
  }
  const views: ArrayBufferView[] = [];
  for (const [key, Ctor] of OUT_FIELDS) {
    const v = given[key];
    if (v === undefined) continue;
    const arg = `options.out.${key}`;
    if (!(v instanceof Ctor) || v.length !== n) {
      const got =
        v instanceof Float64Array || v instanceof Uint8Array
          ? `a ${v.constructor.name} of length ${v.length}`
          : fmtValue(v);
      throw fail(ConfigError, fn, arg, `a ${Ctor.name} of length ${n} (B·T)`, got);
    }
    for (const w of views) {
      if (w.buffer === v.buffer && overlaps(w, v)) {
        const why = "disjoint from the other outputs";
        throw fail(ConfigError, fn, arg, why, "a view overlapping another output");
      }
    }
    for (const w of reads) {
      if (w.buffer === v.buffer && overlaps(w, v)) {
        const why = "disjoint from the inputs (the kernel reads them after writing outputs)";
        throw fail(ConfigError, fn, arg, why, "a view overlapping an input");
      }
    }
    views.push(v);
  }
  if (views.length === 0) return undefined;
  return given as SomeOutputs;
}

function overlaps(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}
