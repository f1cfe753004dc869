/**
 * Adapter contracts as data: the built-ins by name, and contract files (JSON, schema
 * docs/schemas/adapter-contract.schema.json) validated field by field into an
 * {@link AdapterContract}. Pure: the caller reads the file (src/io) and hands over the parsed value.
 */
import { fmtValue, mustBe } from "../core/message.js";
import { closestNames, didYouMean } from "../core/names.js";
import { requireObject, requireString } from "../core/validate.js";
import { ConfigError, fail, UnknownNameError } from "../errors.js";
import { PAPO_G_ADAPTER } from "./adapters/papoGAdapter.js";
import type {
  AdapterContract,
  FilePin,
  MethodMessages,
  MethodRule,
  StricterRule,
} from "./adapterTypes.js";

/** The built-in adapter contracts by name. */
export const ADAPTER_CONTRACTS: Readonly<Record<string, AdapterContract>> = Object.freeze({
  "papo-g-adapter": PAPO_G_ADAPTER,
});

/** Most methods, files, stricter checks or names one contract may list. */
export const MAX_CONTRACT_ITEMS = 256;
const FN = "parseAdapterContract";
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PATH = /^(?![/-])(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._/+-]{1,300}$/;
const TEMPLATE_KEYS = ["exact", "requires", "forbids", "returns", "missing"] as const;

function bad(arg: string, rule: string, got: unknown): ConfigError {
  return fail(ConfigError, FN, arg, rule, fmtValue(got));
}

function record(v: unknown, arg: string, keys: readonly string[]): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw bad(arg, "an object", v);
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!keys.includes(k)) throw bad(`${arg}.${k}`, `absent (known: ${keys.join(", ")})`, o[k]);
  return o;
}

function text(v: unknown, arg: string, re?: RegExp): string {
  if (typeof v !== "string" || v.length === 0 || v.length > 1000 || (re && !re.test(v)))
    throw bad(arg, re ? `a string matching ${re.source}` : "a non-empty string", v);
  return v;
}

function list(v: unknown, arg: string): unknown[] {
  if (!Array.isArray(v) || v.length > MAX_CONTRACT_ITEMS)
    throw bad(arg, `an array of at most ${MAX_CONTRACT_ITEMS} items`, v);
  return v;
}

function names(v: unknown, arg: string, unique: boolean): string[] | null {
  if (v === undefined || v === null) return null;
  const out = list(v, arg).map((x, i) => text(x, `${arg}[${i}]`, IDENT));
  if (unique && new Set(out).size !== out.length) throw bad(arg, "names without repeats", v);
  return out;
}

function method(v: unknown, arg: string): MethodRule {
  const keys = ["name", "path", "exact", "requires", "forbids", "returns", "messages"];
  const o = record(v, arg, keys);
  const returns = o.returns ?? null;
  if (returns !== null && !(Number.isSafeInteger(returns) && (returns as number) >= 0))
    throw bad(`${arg}.returns`, "a non-negative integer", returns);
  const msgs: Record<string, string> = {};
  if (o.messages !== undefined) {
    const m = record(o.messages, `${arg}.messages`, TEMPLATE_KEYS);
    for (const k of TEMPLATE_KEYS)
      if (m[k] !== undefined) msgs[k] = text(m[k], `${arg}.messages.${k}`);
  }
  const rule: MethodRule = {
    name: text(o.name, `${arg}.name`, NAME),
    path: text(o.path, `${arg}.path`, PATH),
    exact: names(o.exact, `${arg}.exact`, false),
    requires: names(o.requires, `${arg}.requires`, true),
    forbids: names(o.forbids, `${arg}.forbids`, true),
    returns: returns as number | null,
    messages: msgs as MethodMessages,
  };
  if (rule.exact === null && rule.requires === null && rule.forbids === null && returns === null)
    throw bad(arg, "a rule with at least one of exact, requires, forbids, returns", v);
  return rule;
}

function filePin(v: unknown, arg: string): FilePin {
  const o = record(v, arg, ["path", "sha256", "ref"]);
  return {
    path: text(o.path, `${arg}.path`, PATH),
    sha256: text(o.sha256, `${arg}.sha256`, /^[0-9a-f]{64}$/),
    ref: o.ref === undefined || o.ref === null ? null : text(o.ref, `${arg}.ref`, PATH),
  };
}

function stricter(v: unknown, arg: string, m: readonly MethodRule[], f: readonly FilePin[]) {
  const o = record(v, arg, ["kind", "method", "caller"]);
  if (o.kind !== "unpacking" && o.kind !== "keywords")
    throw bad(`${arg}.kind`, "one of 'unpacking', 'keywords'", o.kind);
  const rule: StricterRule = {
    kind: o.kind,
    method: text(o.method, `${arg}.method`, NAME),
    caller: text(o.caller, `${arg}.caller`, PATH),
  };
  if (!m.some((x) => x.name === rule.method))
    throw bad(`${arg}.method`, "the name of one of the contract's methods", rule.method);
  if (!f.some((x) => x.path === rule.caller))
    throw bad(`${arg}.caller`, "the path of one of the contract's files", rule.caller);
  return rule;
}

/**
 * Validate a parsed contract file into an adapter contract.
 *
 * Format (docs/schemas/adapter-contract.schema.json): `{name, version, framework, description?,
 * methods: [{name, path, exact?, requires?, forbids?, returns?, messages?}], files?: [{path,
 * sha256, ref?}], stricter?: [{kind, method, caller}]}`; unknown keys are errors.
 *
 * @param value - The parsed JSON value.
 * @returns The contract (frozen plain data).
 * @throws {ConfigError} E_CONFIG naming the first field that breaks the format.
 * @derivation docs/conformance/adapters.md#the-contract-language
 * @enforcedBy test/contracts/adapter.test.ts > parseAdapterContract > identity: the built-in round-trips through its json form
 * @enforcedBy test/contracts/adapter.test.ts > parseAdapterContract > rejects: an unknown key, an empty rule, a bad hash and a dangling stricter check
 * @since 0.1.0
 */
export function parseAdapterContract(value: unknown): AdapterContract {
  const keys = ["$schema", "name", "version", "framework", "description", "methods", "files"];
  const o = record(value, "contract", [...keys, "stricter"]);
  const methods = list(o.methods, "methods").map((m, i) => method(m, `methods[${i}]`));
  if (methods.length === 0) throw bad("methods", "a non-empty array", o.methods);
  const files = list(o.files ?? [], "files").map((f, i) => filePin(f, `files[${i}]`));
  const strict = list(o.stricter ?? [], "stricter").map((s, i) =>
    stricter(s, `stricter[${i}]`, methods, files),
  );
  return Object.freeze({
    name: text(o.name, "name"),
    version: text(o.version, "version"),
    framework: text(o.framework, "framework"),
    description: o.description === undefined ? "" : text(o.description, "description"),
    methods,
    files,
    stricter: strict,
  });
}

/**
 * A built-in adapter contract by name.
 *
 * @param name - A key of {@link ADAPTER_CONTRACTS}, e.g. `papo-g-adapter`.
 * @returns The contract.
 * @throws {UnknownNameError} E_UNKNOWN_NAME with the closest names when none has that name.
 * @derivation docs/conformance/adapters.md#the-built-in-papo-g-adapter
 * @enforcedBy test/contracts/adapter.test.ts > parseAdapterContract > rejects: an unknown built-in name suggests the closest one
 * @since 0.1.0
 */
export function getAdapterContract(name: string): AdapterContract {
  requireString("getAdapterContract", "name", name);
  const found = Object.hasOwn(ADAPTER_CONTRACTS, name) ? ADAPTER_CONTRACTS[name] : undefined;
  if (found !== undefined) return found;
  const known = Object.keys(ADAPTER_CONTRACTS);
  const near = closestNames(name, known).slice(0, 3);
  throw new UnknownNameError(
    "getAdapterContract",
    "contract",
    `${mustBe("getAdapterContract", "contract", `one of ${known.join(", ")} or a contract file`, fmtValue(name))}${didYouMean(near)}`,
    near,
  );
}

/**
 * The JSON form of a contract (the contract-file format), e.g. to start a file from a built-in.
 *
 * Formula: parseAdapterContract(adapterContractJson(c)) deep-equals c.
 *
 * @param c - The contract.
 * @returns A plain JSON value in the snake_case file format.
 * @derivation docs/conformance/adapters.md#the-contract-language
 * @enforcedBy test/contracts/adapter.test.ts > parseAdapterContract > identity: the built-in round-trips through its json form
 * @since 0.1.0
 */
export function adapterContractJson(c: AdapterContract): Record<string, unknown> {
  requireObject(
    "adapterContractJson",
    "c",
    c,
    "an AdapterContract (getAdapterContract, parseAdapterContract)",
    ["name", "version", "framework", "methods", "files", "stricter"],
  );
  return {
    name: c.name,
    version: c.version,
    framework: c.framework,
    description: c.description,
    methods: c.methods.map((m) => {
      const out: Record<string, unknown> = { name: m.name, path: m.path };
      if (m.exact !== null) out.exact = m.exact;
      if (m.requires !== null) out.requires = m.requires;
      if (m.forbids !== null) out.forbids = m.forbids;
      if (m.returns !== null) out.returns = m.returns;
      if (Object.keys(m.messages).length > 0) out.messages = m.messages;
      return out;
    }),
    files: c.files.map((f) => ({ path: f.path, sha256: f.sha256, ref: f.ref })),
    stricter: c.stricter,
  };
}
