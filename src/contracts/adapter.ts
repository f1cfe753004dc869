/**
 * Adapter contracts evaluated on one tree (docs/conformance/adapters.md): the authors' method
 * rules — `exact` parameter tuple, `requires` subset, `forbids`, return arity — with their own
 * failure messages, and polgrad's stricter checks (return arity against the pinned file's call-site
 * unpacking, keywords the pinned file passes) as separate findings. Pure over a file reader, so a
 * checkout (./adapterCheck.ts) and a git ref (./adapterTable.ts) are checked the same way.
 */
import type {
  CallUnpacking,
  FunctionFacts,
  SourceFacts,
} from "../conformance/python/functionFacts.js";
import { extractSourceFacts } from "../conformance/python/functionFacts.js";
import { requireArrayOf, requireObject, requireString } from "../core/validate.js";
import type {
  AdapterContract,
  MethodRule,
  MethodVerdict,
  StricterFinding,
  StricterRule,
} from "./adapterTypes.js";

/** One file of a tree: its SHA-256 and UTF-8 text. */
export interface TreeFile {
  readonly sha256: string;
  readonly text: string;
}

/** Reads a file of a tree by its path from the repository root; null when absent. */
export type TreeReader = (path: string) => TreeFile | null;

/** A source's facts, parsed once per distinct content (keyed by SHA-256). */
export type FactsCache = Map<string, Promise<SourceFacts>>;

/** The facts of a file, from the cache or parsed now. */
export function factsOf(file: TreeFile, path: string, cache: FactsCache): Promise<SourceFacts> {
  let hit = cache.get(file.sha256);
  if (hit === undefined) {
    hit = extractSourceFacts(file.text, path);
    cache.set(file.sha256, hit);
  }
  return hit;
}

/** Python's repr of a str (the quote choice and escapes of CPython's unicode_repr). */
function pyStr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === "\\" || ch === q) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + q;
}

/**
 * Spell a tuple of strings as Python prints it: `('self', 'model')`, a 1-tuple `('self',)`, the
 * empty tuple `()`.
 *
 * Formula: "(" + join(", ", repr(sᵢ)) + ("," if n = 1) + ")".
 *
 * @param items - The strings.
 * @returns The repr.
 * @derivation docs/conformance/adapters.md#the-contract-language
 * @enforcedBy test/contracts/adapter.test.ts > pythonTupleRepr > golden: the 0-, 1- and 3-tuple and a quote
 * @since 0.1.0
 */
export function pythonTupleRepr(items: readonly string[]): string {
  requireArrayOf(
    "pythonTupleRepr",
    "items",
    items,
    "an array of strings",
    (s) => typeof s === "string",
  );
  const body = items.map(pyStr).join(", ");
  return `(${body}${items.length === 1 ? "," : ""})`;
}

function fill(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{([a-z]+)\}/g, (m, k: string) => vars[k] ?? m);
}

const DEFAULTS = {
  exact: "unsupported {method} signature: {signature}",
  requires: "unsupported {method} API; missing {missing}",
  forbids: "unsupported {method} API; forbidden {forbidden}",
  returns: "unsupported {method} return arity: {returns}; expected {expected}",
  missing: "unsupported {method}: not defined in {path}",
} as const;

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const arities = (a: readonly number[] | null): string =>
  a === null ? "a starred tuple" : a.length === 0 ? "no return" : a.join(" or ");

/**
 * Evaluate one method rule of the authors on the tree's definition of the method.
 *
 * Formula: exact ⇔ tuple(params) = exact; requires ⇔ requires ⊆ params; forbids ⇔
 * forbids ∩ params = ∅; returns ⇔ every return gives `returns` values. Each broken rule adds its
 * message (the rule's template, or the default) with {signature} = the Python tuple repr of the
 * parameter names and {missing}/{forbidden} sorted and joined by ", ".
 *
 * @param rule - The method rule.
 * @param fn - The tree's function facts, or undefined when the method (or its file) is absent.
 * @returns The verdict: ok, broken (with the failures in rule order) or missing.
 * @derivation docs/conformance/adapters.md#the-contract-language
 * @enforcedBy test/contracts/adapter.test.ts > evaluateMethod > golden: the authors' two messages, verbatim
 * @enforcedBy test/contracts/adapter.test.ts > evaluateMethod > golden: forbids and return arity
 * @since 0.1.0
 */
export function evaluateMethod(rule: MethodRule, fn: FunctionFacts | undefined): MethodVerdict {
  requireObject("evaluateMethod", "rule", rule, "a MethodRule", ["name", "path"]);
  if (fn !== undefined)
    requireObject("evaluateMethod", "fn", fn, "FunctionFacts (extractSourceFacts) or undefined");
  const m = { ...DEFAULTS, ...rule.messages };
  const base = { method: rule.name, path: rule.path };
  if (fn === undefined) {
    return {
      name: rule.name,
      path: rule.path,
      status: "missing",
      parameters: null,
      returnArities: null,
      failures: [fill(m.missing, base)],
    };
  }
  const params = fn.parameters.map((p) => p.name);
  const have = new Set(params);
  const failures: string[] = [];
  const exact = rule.exact;
  if (exact !== null && (exact.length !== params.length || exact.some((n, i) => n !== params[i])))
    failures.push(fill(m.exact, { ...base, signature: pythonTupleRepr(params) }));
  const missing = sorted((rule.requires ?? []).filter((n) => !have.has(n)));
  if (missing.length > 0) failures.push(fill(m.requires, { ...base, missing: missing.join(", ") }));
  const forbidden = sorted((rule.forbids ?? []).filter((n) => have.has(n)));
  if (forbidden.length > 0)
    failures.push(fill(m.forbids, { ...base, forbidden: forbidden.join(", ") }));
  const ra = fn.returnArities;
  if (rule.returns !== null && !(ra !== null && ra.length === 1 && ra[0] === rule.returns))
    failures.push(fill(m.returns, { ...base, returns: arities(ra), expected: `${rule.returns}` }));
  return {
    name: rule.name,
    path: rule.path,
    status: failures.length === 0 ? "ok" : "broken",
    parameters: params,
    returnArities: ra,
    failures,
  };
}

/** The pinned file's copy a stricter check reads, and where it came from. */
export interface CallerCopy {
  readonly source: string;
  readonly facts: SourceFacts;
}

/**
 * Evaluate one of polgrad's stricter checks (never part of the authors' verdict).
 *
 * Formula: unpacking ok ⇔ the method's returns all give n values and every
 * `… = self.<method>(…)` in the caller assigns n targets (with a `*rest` target: at most n
 * targets besides it); keywords ok ⇔ every keyword the caller passes is a parameter name (or the method
 * takes `**kwargs`). Unknown when the method is missing, the caller copy is absent or the caller
 * never calls the method.
 *
 * @param rule - The stricter rule.
 * @param fn - The tree's function facts of `rule.method`, or undefined.
 * @param caller - The pinned file's copy, or null.
 * @returns The finding with its one-line message.
 * @derivation docs/conformance/adapters.md#stricter-checks
 * @enforcedBy test/contracts/adapter.test.ts > evaluateStricter > golden: the vendored file unpacks 2 values where the tree returns 3
 * @since 0.1.0
 */
export function evaluateStricter(
  rule: StricterRule,
  fn: FunctionFacts | undefined,
  caller: CallerCopy | null,
): StricterFinding {
  requireObject("evaluateStricter", "rule", rule, "a StricterRule", ["kind", "method", "caller"]);
  requireString("evaluateStricter", "rule.method", rule.method);
  if (fn !== undefined)
    requireObject("evaluateStricter", "fn", fn, "FunctionFacts (extractSourceFacts) or undefined");
  if (caller !== null)
    requireObject("evaluateStricter", "caller", caller, "a CallerCopy {source, facts} or null", [
      "facts",
    ]);
  const attr = rule.method.split(".").at(-1) as string;
  const calls: CallUnpacking[] =
    caller === null ? [] : caller.facts.unpackings.filter((u) => u.method === attr);
  const base = {
    kind: rule.kind,
    method: rule.method,
    caller: rule.caller,
    callerSource: caller?.source ?? null,
  };
  const unknown = (why: string): StricterFinding => ({
    ...base,
    status: "unknown",
    returns: fn?.returnArities ?? null,
    unpacks: null,
    unknownKeywords: [],
    message: `${rule.kind}: unknown (${why})`,
  });
  if (fn === undefined) return unknown(`${rule.method} is not defined in this tree`);
  if (caller === null) return unknown(`no copy of ${rule.caller} matching its pin`);
  if (calls.length === 0) return unknown(`${rule.caller} never assigns from self.${attr}(...)`);
  const unpacks = [...new Set(calls.map((c) => c.targets))].sort((a, b) => a - b);
  if (rule.kind === "unpacking") {
    const ra = fn.returnArities;
    const ok =
      ra !== null &&
      ra.length === 1 &&
      calls.every((c) => (c.starred ? c.targets - 1 <= (ra[0] as number) : c.targets === ra[0]));
    const what = `the vendored file unpacks ${unpacks.join(" or ")} values where this tree returns ${arities(ra)}`;
    return {
      ...base,
      status: ok ? "ok" : "mismatch",
      returns: ra,
      unpacks,
      unknownKeywords: [],
      message: `unpacking: ${ok ? "ok, " : ""}${what}`,
    };
  }
  const params = new Set(fn.parameters.map((p) => p.name));
  const anyKw = fn.parameters.some((p) => p.kind === "var_keyword");
  const positionalOnly = new Set(
    fn.parameters.filter((p) => p.kind === "positional_only").map((p) => p.name),
  );
  const passed = new Set(calls.flatMap((c) => c.keywords));
  const unknownKeywords = sorted(
    [...passed].filter((k) => (!params.has(k) || positionalOnly.has(k)) && !anyKw),
  );
  return {
    ...base,
    status: unknownKeywords.length === 0 ? "ok" : "mismatch",
    returns: fn.returnArities,
    unpacks,
    unknownKeywords,
    message:
      unknownKeywords.length === 0
        ? `keywords: ok, every keyword the vendored file passes (${passed.size}) is a parameter`
        : `keywords: the vendored file passes ${unknownKeywords.join(", ")}, which this tree does not take`,
  };
}

/** The authors' verdicts and polgrad's findings on one tree. */
export interface TreeEvaluation {
  readonly methods: readonly MethodVerdict[];
  readonly stricter: readonly StricterFinding[];
}

/**
 * Evaluate a contract's method rules and stricter checks on one tree.
 *
 * @param contract - The contract.
 * @param read - Reads the tree's files.
 * @param callerOf - The pinned file's copy for a stricter check's caller path, or null.
 * @param cache - Parsed sources by SHA-256.
 * @returns The verdicts in rule order and the findings in stricter order.
 * @throws {IoError} E_IO when a method's file is not valid Python.
 * @derivation docs/conformance/adapters.md#the-contract-language
 * @enforcedBy test/contracts/adapter.test.ts > checkAdapterContract > golden: the v1.7.0 fixture holds, the v0.29.1 fixture breaks with the authors' message
 * @since 0.1.0
 */
export async function evaluateTree(
  contract: AdapterContract,
  read: TreeReader,
  callerOf: (path: string) => CallerCopy | null,
  cache: FactsCache,
): Promise<TreeEvaluation> {
  const fnOf = new Map<string, FunctionFacts | undefined>();
  for (const rule of contract.methods) {
    const file = read(rule.path);
    const facts = file === null ? null : await factsOf(file, rule.path, cache);
    fnOf.set(rule.name, facts?.functions.get(rule.name));
  }
  return {
    methods: contract.methods.map((r) => evaluateMethod(r, fnOf.get(r.name))),
    stricter: contract.stricter.map((s) =>
      evaluateStricter(s, fnOf.get(s.method), callerOf(s.caller)),
    ),
  };
}
