/**
 * Tensor names as trainers spell them (docs/io.md#names-as-trainers-spell-them): map the names of a
 * file (verl's `old_log_probs`, TRL's `per_token_logps`, OpenRLHF's `action_log_probs`, or a user
 * map) onto polgrad's snake_case batch names, detect the framework when the names say so
 * unambiguously, set aside tensors the batch does not use, and cut the response part out of a
 * mask that covers prompt + response. Pure: no `node:` import.
 */
import { fmtShape, fmtValue } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { describeInput, requireArrayOf, requireObject, requireString } from "../core/validate.js";
import { ConfigError, fail, type IoError } from "../errors.js";
import { ioError } from "./_internal/ioError.js";
import { BATCH_TENSOR_NAMES, type BatchTensorName } from "./batchNames.js";
import { FRAMEWORK_NAME_MAPS, type FrameworkNameMap } from "./frameworkNames.js";
import { isLazyTensor, type NamedTensor, type TensorSet } from "./tensorTypes.js";

/** The built-in name maps: polgrad's own names and the three frameworks'. */
export const NAME_MAP_IDS = ["polgrad", "verl", "trl", "openrlhf"] as const;

/** One built-in name map. */
export type NameMapId = (typeof NAME_MAP_IDS)[number];

/**
 * A user's name map: polgrad name → the name in the user's files, the direction of
 * `--name ours=theirs` (`{"logprobs": "my_logp", "old_logprobs": "behaviour_logp"}`).
 */
export type CustomNameMap = Readonly<Partial<Record<BatchTensorName, string>>>;

/** Which columns of a `[B, P+T]` mask are the response: the last T (verl, left-padded prompts) or [start, end). */
export type ResponseSlice = "last" | { readonly start: number; readonly end: number };

/** How to read a file's names (options of toBatch, readBatch, diagnoseRun). */
export interface NameOptions {
  /** A built-in map, or a user map; default: detected from the names. */
  readonly names?: NameMapId | CustomNameMap;
  /** One-offs applied over the map: polgrad name → the file's name (`--name ours=theirs`). */
  readonly rename?: CustomNameMap;
  /**
   * Make tensors the batch does not use an error instead of a notice, and a log-probability
   * above 0 an error instead of a warning (docs/io.md#warnings). @defaultValue false
   */
  readonly strict?: boolean;
  /** Cut the response part out of a mask wider than the log-probability streams. */
  readonly responseSlice?: ResponseSlice;
}

/** How a file's names were read (kept in `batch.source.names`). */
export interface NameResolution {
  /** The map used: a built-in id or `custom`. */
  readonly map: NameMapId | "custom";
  /** True when the map was detected from the names rather than given. */
  readonly detected: boolean;
  /** polgrad name → the file's name, for every tensor taken under another name. */
  readonly renamed: Readonly<Record<string, string>>;
  /** The file's tensors the batch does not use, in file order. */
  readonly ignored: readonly string[];
  /** What was inferred beyond renaming (a response slice, TRL's on-policy old logprobs). */
  readonly notes: readonly string[];
}

type Fail = (arg: string, rule: string, actual: string) => IoError;

/** The polgrad names a framework map gives each of the file's names (null: known, unused). */
function builtinLookup(map: FrameworkNameMap): Map<string, string | null> {
  const m = new Map<string, string | null>();
  for (const e of map.entries) if (!m.has(e.theirs)) m.set(e.theirs, e.ours);
  return m;
}

const LOOKUPS: ReadonlyMap<string, Map<string, string | null>> = new Map(
  FRAMEWORK_NAME_MAPS.map((m) => [m.id, builtinLookup(m)]),
);

const CANONICAL: ReadonlySet<string> = new Set(BATCH_TENSOR_NAMES);

/** The last dotted part of a flattened name (`batch.old_log_probs` → `old_log_probs`). */
function lastPart(name: string): string {
  const i = name.lastIndexOf(".");
  return i >= 0 && i < name.length - 1 ? name.slice(i + 1) : name;
}

/**
 * The polgrad name of one file name under `lookup`: the full name first, then its last dotted
 * part; polgrad's own names always stand for themselves. `undefined`: unknown; null: known, unused.
 */
function oursOf(
  lookup: ReadonlyMap<string, string | null>,
  name: string,
): string | null | undefined {
  for (const n of name === lastPart(name) ? [name] : [name, lastPart(name)]) {
    if (lookup.has(n)) return lookup.get(n);
    if (CANONICAL.has(n)) return n;
  }
  return undefined;
}

/**
 * Validate a user name map (`names`, `rename`, `--names FILE.json`): an object whose own keys
 * are polgrad batch names (`__proto__`, `constructor`, `toString` are unknown names like any
 * other, with did-you-mean) and whose values are distinct non-empty tensor names. Returns the
 * inverse map, tensor name → polgrad name.
 * @internal
 */
export function checkNameMap(fail: Fail, arg: string, map: unknown): Map<string, string> {
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    throw fail(arg, "an object of polgrad name → tensor name", fmtValue(map));
  }
  // A Map or a class instance would read as no entries, and inherited keys are not read.
  const proto = Object.getPrototypeOf(map);
  if (proto !== Object.prototype && proto !== null) {
    throw fail(
      arg,
      "a plain object of polgrad name → tensor name (own keys)",
      `a ${(map as object).constructor?.name ?? "object"} instance`,
    );
  }
  const inverse = new Map<string, string>();
  for (const [ours, theirs] of Object.entries(map)) {
    if (!CANONICAL.has(ours)) {
      throw fail(
        arg,
        `keyed by polgrad batch names (${BATCH_TENSOR_NAMES.join(", ")})`,
        `${fmtValue(ours)}${didYouMean(closestNames(ours, BATCH_TENSOR_NAMES))}`,
      );
    }
    if (typeof theirs !== "string" || theirs === "") {
      throw fail(`${arg}.${ours}`, "a non-empty tensor name", fmtValue(theirs));
    }
    const prev = inverse.get(theirs);
    if (prev !== undefined) {
      throw fail(
        arg,
        "one polgrad name per tensor",
        `${fmtValue(theirs)} for both ${prev} and ${ours}`,
      );
    }
    inverse.set(theirs, ours);
  }
  return inverse;
}

/** The file name → polgrad name outcome of one lookup over the file's names. */
function outcome(lookup: ReadonlyMap<string, string | null>, names: readonly string[]): string {
  return names.map((n) => `${n}\u0000${oursOf(lookup, n) ?? ""}`).join("\u0001");
}

/** Framework names that are not polgrad names and that the map uses (the evidence for it). */
function evidence(id: string, names: readonly string[]): string[] {
  const lookup = LOOKUPS.get(id) as Map<string, string | null>;
  return names.filter((n) => {
    const part = lookup.has(n) ? n : lastPart(n);
    return !CANONICAL.has(part) && lookup.get(part) != null;
  });
}

function detect(
  fail: Fail,
  names: readonly string[],
): { id: NameMapId; lookup: ReadonlyMap<string, string | null> } {
  let candidates = FRAMEWORK_NAME_MAPS.map((m) => ({
    id: m.id,
    hits: evidence(m.id, names),
  })).filter((c) => c.hits.length > 0);
  if (candidates.length === 0) return { id: "polgrad", lookup: new Map() };
  // Frameworks share names (verl and OpenRLHF both say old_log_probs): keep the maps that know
  // the most names of the file (as a tensor, a known unused name or a polgrad name).
  const known = candidates.map((c) => {
    const lookup = LOOKUPS.get(c.id) as Map<string, string | null>;
    return names.filter((n) => oursOf(lookup, n) !== undefined).length;
  });
  const most = Math.max(...known);
  candidates = candidates.filter((_c, i) => known[i] === most);
  const first = candidates[0] as { id: NameMapId; hits: string[] };
  const firstOutcome = outcome(LOOKUPS.get(first.id) as Map<string, string | null>, names);
  const differing = candidates.filter(
    (c) => outcome(LOOKUPS.get(c.id) as Map<string, string | null>, names) !== firstOutcome,
  );
  if (differing.length > 0) {
    const list = candidates.map((c) => `${c.id} (${c.hits.join(", ")})`).join(" and ");
    throw fail(
      "names",
      "names of one framework (or pass --names verl|trl|openrlhf|FILE.json)",
      `names that read differently as ${list}`,
    );
  }
  return { id: first.id, lookup: LOOKUPS.get(first.id) as Map<string, string | null> };
}

/** The ignored tensors that look like typos of a polgrad or framework name, for messages. */
function typoHints(ignored: readonly string[], lookup: ReadonlyMap<string, string | null>): string {
  const known = [
    ...BATCH_TENSOR_NAMES,
    ...[...lookup].filter(([, o]) => o !== null).map(([t]) => t),
  ];
  const hints = ignored
    .map((n) => ({ n, near: closestNames(lastPart(n), known).filter((k) => k !== lastPart(n)) }))
    .filter((h) => h.near.length > 0)
    .map((h) => `${fmtValue(h.n)}${didYouMean(h.near)}`);
  return hints.length > 0 ? hints.join(", ") : "";
}

function checkSlice(fail: Fail, slice: unknown): ResponseSlice {
  if (slice === "last") return slice;
  const s = slice as { start?: unknown; end?: unknown };
  if (
    typeof slice === "object" &&
    slice !== null &&
    Number.isInteger(s.start) &&
    Number.isInteger(s.end) &&
    (s.start as number) >= 0 &&
    (s.end as number) > (s.start as number)
  )
    return { start: s.start as number, end: s.end as number };
  throw fail("responseSlice", '"last" or {start, end} with 0 <= start < end', fmtValue(slice));
}

/** Columns [start, end) of a `[B, W]` tensor. */
function sliceColumns(t: NamedTensor, start: number, end: number): NamedTensor {
  const [rows = 0, width = 0] = t.shape;
  const cols = end - start;
  const data =
    t.data instanceof Uint8Array ? new Uint8Array(rows * cols) : new Float64Array(rows * cols);
  for (let b = 0; b < rows; b++)
    data.set(t.data.subarray(b * width + start, b * width + end), b * cols);
  return { dtype: t.dtype, shape: [rows, cols], data };
}

const MASK_STAND_INS = ["attention_mask"] as const;

/** The `[B, T]` of the file's log-probability streams, if it has one. */
function streamShape(tensors: ReadonlyMap<string, NamedTensor>): readonly number[] | undefined {
  for (const n of ["logprobs", "old_logprobs", "rollout_logprobs", "ref_logprobs", "entropies"]) {
    const t = tensors.get(n);
    if (t !== undefined && t.shape.length === 2) return t.shape;
  }
  return undefined;
}

/**
 * Make `response_mask` the width of the streams: cut it out of a wider mask (or out of an
 * `attention_mask` stand-in when the file has no response mask) with `slice`, or explain how.
 */
function fitMask(
  fail: Fail,
  out: Map<string, NamedTensor>,
  ignored: readonly string[],
  set: TensorSet,
  slice: ResponseSlice | undefined,
  notes: string[],
): void {
  const shape = streamShape(out);
  let maskName = "response_mask";
  let mask = out.get("response_mask");
  if (mask === undefined) {
    const standIn = ignored.find((n) =>
      (MASK_STAND_INS as readonly string[]).includes(lastPart(n)),
    );
    if (standIn === undefined) return;
    const t = set.tensors.get(standIn) as NamedTensor;
    if (slice === undefined) {
      if (
        shape !== undefined &&
        t.shape.length === 2 &&
        (t.shape[1] as number) > (shape[1] as number)
      ) {
        throw fail(
          "response_mask",
          `present, or an ${standIn} cut to the response with --response-slice last (its last ${shape[1]} columns) or START:END`,
          `no response mask; ${standIn} is ${fmtShape(t.shape)} (prompt + response) and the log-probabilities are ${fmtShape(shape)}`,
        );
      }
      return;
    }
    maskName = standIn;
    mask = t;
  }
  if (mask.shape.length !== 2 || shape === undefined) return;
  const [, width = 0] = mask.shape;
  const T = shape[1] as number;
  if (slice === undefined) {
    if (width > T) {
      throw fail(
        "response_mask",
        `the width of the log-probabilities (${T}), or cut to it with --response-slice last (the last ${T} columns) or START:END`,
        `${maskName} ${fmtShape(mask.shape)}, wider than the log-probabilities ${fmtShape(shape)} (a mask over prompt + response?)`,
      );
    }
    return;
  }
  const { start, end } = slice === "last" ? { start: width - T, end: width } : slice;
  if (start < 0 || end > width || end - start !== T) {
    throw fail(
      "responseSlice",
      `${T} columns inside the ${width} of ${maskName}`,
      slice === "last" ? `last ${T} of ${width}` : `${start}:${end}`,
    );
  }
  if (start === 0 && end === width && maskName === "response_mask") return; // already the response
  out.set("response_mask", sliceColumns(mask, start, end));
  notes.push(`response_mask = ${maskName}[:, ${start}:${end}]`);
}

/**
 * Require a {@link TensorSet} (what the readers return): an object whose `path` is a string and
 * whose `tensors` is a Map of name → `{dtype, shape, data}`, `data` a Float64Array or Uint8Array
 * holding the product of `shape` values (with `values` "shapes", any number: a header's shapes
 * without their values, as the streamed reader resolves names on); otherwise a ConfigError naming
 * the field. Checked before anything is read from it, so that `{tensors: new Array(1e9)}` is an
 * error at once.
 * @internal
 */
export function checkTensorSet(
  fn: string,
  arg: string,
  set: unknown,
  values: "all" | "shapes" = "all",
): asserts set is TensorSet {
  requireObject(fn, arg, set, "a TensorSet {path, format, tensors, metadata}", ["path", "tensors"]);
  const { path, tensors } = set as { path: unknown; tensors: unknown };
  requireString(fn, `${arg}.path`, path);
  if (!(tensors instanceof Map))
    throw fail(
      ConfigError,
      fn,
      `${arg}.tensors`,
      "a Map of tensor name → {dtype, shape, data}",
      describeInput(tensors),
    );
  for (const [name, t] of tensors) {
    const where = `${arg}.tensors[${fmtValue(name)}]`;
    requireObject(fn, where, t, "a tensor {dtype, shape, data}", ["dtype", "shape", "data"]);
    const { shape } = t as { shape: unknown };
    requireArrayOf(
      fn,
      `${where}.shape`,
      shape,
      "an array of sizes (integers >= 0)",
      (d) => Number.isSafeInteger(d) && (d as number) >= 0,
    );
    // A reader's lazy tensor is not decoded to be checked: its decoder makes exactly this.
    if (isLazyTensor(t)) continue;
    const n = (shape as number[]).reduce((a, d) => a * d, 1);
    const data: unknown = (t as { data: unknown }).data;
    const typed = data instanceof Float64Array || data instanceof Uint8Array;
    if (!typed || (values === "all" && data.length !== n))
      throw fail(
        ConfigError,
        fn,
        `${where}.data`,
        `a Float64Array or Uint8Array of ${n} values (the product of its shape)`,
        describeInput(data),
      );
  }
}

/**
 * Map a file's tensor names onto polgrad's batch names.
 *
 * Format: the map is `options.names` (a built-in id or a user map), else detected: the
 * frameworks whose own names (those that are not polgrad names) appear in the file, narrowed to
 * those that know the most names of the file; several that read the file the same way
 * are one; frameworks that read it differently are an error asking for `--names`. polgrad's names always stand for themselves; a flattened name (`batch.x`) is
 * looked up whole, then by its last dotted part. `rename` one-offs apply over the map. Tensors
 * the batch does not use are returned in `ignored` (an error with `strict`). With TRL's names and
 * no `old_per_token_logps`, old_logprobs = logprobs (TRL's on-policy case: `old_per_token_logps`
 * is None and the ratio is 1), noted. A mask wider than the streams is cut with `responseSlice`
 * (`last`: verl's `response_mask = attention_mask[:, -T:]`), else an error saying how.
 *
 * @param fn - The public function named in errors.
 * @param set - The file's tensors.
 * @param options - names, rename, strict, responseSlice.
 * @returns The tensors under polgrad's names and how they were read.
 * @throws {IoError} E_IO for a user map not keyed by polgrad names, a rename of a tensor the file
 *   lacks, two tensors for one polgrad name, ambiguous names, unused tensors under `strict`, or a
 *   mask wider than the streams without a (fitting) `responseSlice`.
 * @derivation docs/io.md#names-as-trainers-spell-them
 * @enforcedBy test/io/names.test.ts > resolveNames > golden: each framework's names are detected and read as polgrad's
 * @enforcedBy test/io/names.test.ts > resolveNames > rejects: names that two frameworks read differently
 * @enforcedBy test/io/names.test.ts > resolveNames > golden: a prompt + response attention mask is cut with the response slice
 * @since 0.1.0
 */
export function resolveNames(
  fn: string,
  set: TensorSet,
  options: NameOptions = {},
): { readonly set: TensorSet; readonly names: NameResolution } {
  requireString("resolveNames", "fn", fn);
  checkTensorSet(fn, "set", set, "shapes");
  if (options !== undefined) requireObject(fn, "options", options, "a NameOptions object");
  const fail: Fail = (arg, rule, actual) => ioError(fn, set.path, arg, rule, actual);
  const names = [...set.tensors.keys()];
  let map: NameMapId | "custom";
  let detected = false;
  let lookup: ReadonlyMap<string, string | null>;
  const given = options.names;
  if (given === undefined) {
    const d = detect(fail, names);
    map = d.id;
    lookup = d.lookup;
    detected = true;
  } else if (typeof given === "string") {
    if (!(NAME_MAP_IDS as readonly string[]).includes(given)) {
      throw fail(
        "names",
        `one of ${NAME_MAP_IDS.join(", ")} or a map of polgrad name → tensor name`,
        `${fmtValue(given)}${didYouMean(closestNames(given, NAME_MAP_IDS))}`,
      );
    }
    map = given;
    lookup = LOOKUPS.get(given) ?? new Map();
  } else {
    map = "custom";
    lookup = checkNameMap(fail, "names", given);
  }
  const overrides =
    options.rename === undefined
      ? new Map<string, string>()
      : checkNameMap(fail, "rename", options.rename);
  for (const theirs of overrides.keys()) {
    if (!set.tensors.has(theirs)) {
      throw fail(
        "rename",
        `names of tensors in the file (${names.join(", ") || "none"})`,
        `${fmtValue(`${overrides.get(theirs)}=${theirs}`)}: no tensor ${fmtValue(theirs)}${didYouMean(closestNames(theirs, names))}`,
      );
    }
  }
  const out = new Map<string, NamedTensor>();
  const from = new Map<string, string>();
  const ignored: string[] = [];
  const renamed: Record<string, string> = {};
  for (const name of names) {
    const ours = overrides.get(name) ?? oursOf(lookup, name);
    if (ours == null) {
      ignored.push(name);
      continue;
    }
    const prev = from.get(ours);
    if (prev !== undefined) {
      throw fail(
        "names",
        `one tensor per polgrad name (${map} names)`,
        `both ${fmtValue(prev)} and ${fmtValue(name)} read as ${ours}`,
      );
    }
    from.set(ours, name);
    out.set(ours, set.tensors.get(name) as NamedTensor);
    if (ours !== name) renamed[ours] = name;
  }
  const notes: string[] = [];
  const slice =
    options.responseSlice === undefined ? undefined : checkSlice(fail, options.responseSlice);
  fitMask(fail, out, ignored, set, slice, notes);
  if (map === "trl" && out.has("logprobs") && !out.has("old_logprobs")) {
    out.set("old_logprobs", out.get("logprobs") as NamedTensor);
    notes.push("old_logprobs = logprobs (TRL: old_per_token_logps is None on-policy, ratio 1)");
  }
  if (options.strict === true && ignored.length > 0) {
    const hints = typoHints(ignored, lookup);
    throw fail(
      ignored[0] as string,
      `a batch tensor under ${map} names (--strict)`,
      `unused tensor(s) ${ignored.map((n) => fmtValue(n)).join(", ")}${hints === "" ? "" : `; ${hints}`}`,
    );
  }
  return {
    set: { ...set, tensors: out },
    names: { map, detected, renamed, ignored, notes },
  };
}

/**
 * The ignored tensors of a resolution that look like typos, as ` (ignored: "old_logprob" (did you
 * mean "old_logprobs"?))`, for a missing-tensor message; "" when none does. @internal
 */
export function ignoredHint(names: NameResolution): string {
  if (names.ignored.length === 0) return "";
  const lookup = names.map === "custom" ? new Map() : (LOOKUPS.get(names.map) ?? new Map());
  const hints = typoHints(names.ignored, lookup);
  return ` (ignored: ${hints === "" ? names.ignored.map((n) => fmtValue(n)).join(", ") : hints})`;
}
