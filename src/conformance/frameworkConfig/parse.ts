/**
 * A framework config as users hold it, read into one ordered list of `key → value` entries in the
 * framework's own spelling (docs/conformance/explain.md#config-forms):
 *
 * - a YAML or JSON mapping (TRL: `GRPOConfig` fields, the file `trl grpo --config` takes; verl: its
 *   Hydra YAML, nested or with dotted keys, flattened to dotted paths; OpenRLHF: flag → value,
 *   nested YAML spelling the dotted flags (`actor:` / `  eps_clip: 0.2` is `--actor.eps_clip`),
 *   dashes included);
 * - command-line arguments (TRL and OpenRLHF: `--key value`, `--key=value`, a bare `--flag` is
 *   true, several values are a list; verl: Hydra overrides `key=value`, `+key=value`,
 *   `++key=value`), one per token, whitespace- or line-separated, `#` comments and `\` line
 *   continuations allowed, a leading command (`python3 -m verl.trainer.main_ppo`, `trl grpo`,
 *   `deepspeed --module openrlhf.cli.train_ppo_ray`) skipped and reported.
 *
 * YAML is parsed by the `yaml` package (YAML 1.2 core schema; JSON is YAML). Argument values are
 * YAML scalars (`0.28` a number, `true` a boolean, `null`/`~`/`None` null, `[a, b]` a list).
 * Browser-safe: no `node:` import.
 */
import { isMap, isScalar, parseDocument, parse as parseYaml, YAMLParseError } from "yaml";
import { fmtValue, safeText } from "../../core/message.js";
import { ConfigError } from "../../errors.js";
import type { RecordedValue } from "../releases/types.js";
import { readLaunchScript } from "./shellScript.js";

/** The frameworks whose configs are read. */
export type ConfigFramework = "trl" | "verl" | "openrlhf";

/** The forms a config text takes: a mapping, arguments, or a launch script (read for its trainer command). */
export type ConfigForm = "mapping" | "args" | "script";

/** One entry: the key in the framework's spelling and its value. */
export interface ConfigEntry {
  readonly key: string;
  readonly value: RecordedValue;
  /** Where it came from: `mapping` (a YAML/JSON key), `arg` (a command-line token) or `override`. */
  readonly origin: "mapping" | "arg" | "override";
  /** A verl override written `+key=value` or `++key=value` (Hydra adds the key if it is missing). */
  readonly plus?: true;
}

/** A parsed config: its entries in source order (a later entry for a key replaces an earlier one). */
export interface ParsedFrameworkConfig {
  readonly framework: ConfigFramework;
  readonly form: ConfigForm;
  /** The entries, one per key, in the order the keys first appeared. */
  readonly entries: readonly ConfigEntry[];
  /** Tokens skipped before the first argument (a launcher command), for the report. */
  readonly skipped: readonly string[];
  /** Where the text came from (a file name, `--set`), for messages. */
  readonly source: string;
  /** What was read leniently, as the framework reads it (a duplicate YAML key), one line each. */
  readonly warnings?: readonly string[];
  /** verl: the config `--config-name` names (`.yaml` dropped); absent: the default, ppo_trainer. */
  readonly configName?: string;
  /** verl: the config-group options the overrides select (`group@package=option`), in order. */
  readonly groupSelections?: readonly GroupSelection[];
  /** verl: the keys (or subtrees) the overrides delete (`~key`), in order. */
  readonly deletions?: readonly string[];
}

/** A verl override `group@package=option` (Hydra's selection of a config group's option). */
export interface GroupSelection {
  readonly group: string;
  readonly package: string;
  readonly option: string;
  /** The override as written. */
  readonly token: string;
}

const FN = "parseFrameworkConfig";

/** Split argument text into tokens: whitespace-separated, quotes group, `#` starts a comment, `\` continues a line. */
export function tokenizeArgs(text: string, source: string): string[] {
  const out: string[] = [];
  let cur = "";
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      has = true;
      continue;
    }
    if (c === "\\" && (text[i + 1] === "\n" || (text[i + 1] === "\r" && text[i + 2] === "\n"))) {
      i += text[i + 1] === "\r" ? 2 : 1;
      continue;
    }
    if (c === "#" && !has) {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      if (has) out.push(cur);
      cur = "";
      has = false;
      continue;
    }
    cur += c;
    has = true;
  }
  if (quote !== null)
    throw new ConfigError(
      FN,
      "text",
      `${FN}: ${safeText(source)} has an unterminated ${quote} quote`,
    );
  if (has) out.push(cur);
  return out;
}

/** The deepest nesting a config text may have. */
const MAX_DEPTH = 64;

/**
 * The nesting depth of a YAML/JSON text, over-estimated cheaply: the deepest run of open flow
 * brackets (`[`, `{`) outside quoted strings and comments, or the deepest block indentation in
 * columns / 2, whichever is larger.
 */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote: string | null = null;
  let comment = false;
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === "\n") {
      comment = false;
      lineStart = true;
      indent = 0;
      continue;
    }
    if (lineStart) {
      if (ch === " ") {
        indent++;
        max = Math.max(max, indent >> 1);
        continue;
      }
      lineStart = false;
    }
    if (comment) continue;
    if (quote !== null) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#") comment = true;
    else if (ch === "[" || ch === "{") max = Math.max(max, ++depth);
    else if ((ch === "]" || ch === "}") && depth > 0) depth--;
  }
  return max;
}

/** A YAML scalar's value as an argument value; `None` (Python's spelling) is null. */
function scalarOf(text: string, key: string, source: string): RecordedValue {
  if (text === "None") return null;
  try {
    const v = parseYaml(text, { strict: true }) as unknown;
    return toRecorded(v, key, source);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    return text;
  }
}

function toRecorded(v: unknown, key: string, source: string): RecordedValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v))
      throw new ConfigError(
        FN,
        key,
        `${FN}: ${safeText(key)} in ${safeText(source)} must be finite; got ${fmtValue(v)}`,
      );
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => toRecorded(x, key, source));
  if (typeof v === "object") {
    const o: Record<string, RecordedValue> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>))
      o[k] = toRecorded(x, `${key}.${k}`, source);
    return o;
  }
  throw new ConfigError(
    FN,
    key,
    `${FN}: ${safeText(key)} in ${safeText(source)} must be a YAML value; got ${fmtValue(v)}`,
  );
}

const LAUNCHER_LINE =
  /^\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:python3?|torchrun|deepspeed|accelerate|ray|trl|uv|bash|sh)\s/m;

/**
 * Whether the text is a launch script: a `#!` line, a `set`/`export` line, or a shell assignment
 * (`NAME=…`, no dots: not a Hydra key) together with a launcher command (python3, torchrun,
 * deepspeed, accelerate, ray, trl, …).
 */
function looksLikeScript(text: string): boolean {
  if (text.startsWith("#!")) return true;
  if (/^\s*(set|export)\s/m.test(text)) return true;
  return /^\s*[A-Za-z_]\w*=/m.test(text) && LAUNCHER_LINE.test(text);
}

/** The trainer namespace of each framework: a command whose words name one is a launch. */
function launchEntryOf(framework: ConfigFramework, words: readonly string[]): string | null {
  for (let j = 0; j < words.length; j++) {
    const t = words[j] as string;
    const next = words[j + 1];
    if ((t === "-m" || t === "--module") && next !== undefined) {
      if (framework === "verl" && /^(verl|recipe)\./.test(next)) return next;
      if (framework === "openrlhf" && next.startsWith("openrlhf.cli.")) return next;
      if (framework === "trl" && /grpo/.test(next)) return next;
    }
    if (framework === "verl" && /(^|\/)(verl\/trainer|recipe\/[\w/]+)\/main_\w+\.py$/.test(t))
      return t;
    if (framework === "openrlhf" && /(^|\/)openrlhf\/cli\/\w+\.py$/.test(t)) return t;
    if (framework === "trl" && t === "trl" && next !== undefined && !next.startsWith("-"))
      return `trl ${next}`;
    if (framework === "trl" && /grpo[^/]*\.py$/.test(t)) return t;
  }
  return null;
}

/**
 * A launch script's trainer command (shellScript.ts reads it as bash would), as arguments: the
 * one command that launches the framework's trainer, else the one launch of anything in the
 * framework's namespace (refused later by its entry point), else an error naming what is missing.
 */
function parseLaunchScript(
  framework: ConfigFramework,
  text: string,
  source: string,
): ParsedFrameworkConfig {
  const launches = readLaunchScript(text, source, (w) => launchEntryOf(framework, w) !== null);
  const main = launches.filter((l) =>
    MAIN_ENTRY[framework].ok.test(launchEntryOf(framework, l.words) as string),
  );
  const pick = main.length > 0 ? main : launches;
  if (pick.length !== 1)
    throw new ConfigError(
      FN,
      "text",
      pick.length === 0
        ? `${FN}: ${safeText(source)} must run ${MAIN_ENTRY[framework].name} (a ${framework} trainer command); none of its commands does`
        : `${FN}: ${safeText(source)} must run one ${framework} trainer command; lines ${pick.map((l) => l.line).join(", ")} each run one (give the one you mean as arguments)`,
    );
  const parsed = parseFrameworkArgs(framework, (pick[0] as { words: readonly string[] }).words, {
    source: `${source} line ${(pick[0] as { line: number }).line}`,
  });
  return { ...parsed, form: "script" };
}

/** Whether the text is arguments rather than a YAML/JSON mapping: its first token starts with `-`, holds `=` before any `:`, or names a launcher. */
function looksLikeArgs(text: string): boolean {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("--")) return true;
    if (/^[+~]{0,2}[A-Za-z_][\w.\-/]*=/.test(line)) return true;
    if (/^(python3?|torchrun|deepspeed|accelerate|trl|ray|uv|bash|sh)\b/.test(line)) return true;
    return false;
  }
  return false;
}

/**
 * How many leading tokens are a launcher, not arguments: none when the first token is an argument;
 * otherwise through the script (`-m MODULE`, `--module MODULE`, a `*.py` file, `trl grpo`), or up
 * to the first argument when no script is named.
 */
function skipLauncher(tokens: readonly string[], framework: ConfigFramework): number {
  const isArg =
    framework === "verl"
      ? (t: string) =>
          /^[+~]{0,2}[A-Za-z_][\w.\-/@]*=|^(--config-(path|name|dir)|-c[pnd])\b/.test(t)
      : (t: string) => t.startsWith("--");
  if (tokens.length === 0 || isArg(tokens[0] as string)) return 0;
  for (let j = 0; j < tokens.length; j++) {
    const t = tokens[j] as string;
    if ((t === "-m" || t === "--module") && j + 1 < tokens.length) return j + 2;
    if (t.endsWith(".py") || (t === "grpo" && j > 0 && tokens[j - 1] === "trl")) return j + 1;
  }
  let i = 0;
  while (i < tokens.length && !isArg(tokens[i] as string)) i++;
  return i;
}

function addEntry(map: Map<string, ConfigEntry>, e: ConfigEntry): void {
  // A later entry replaces an earlier one and keeps its first position (argparse and Hydra: last wins).
  map.set(e.key, e);
}

/** Parse `--key value` arguments (TRL, OpenRLHF). */
function parseFlagArgs(
  tokens: readonly string[],
  framework: ConfigFramework,
  source: string,
): Map<string, ConfigEntry> {
  const map = new Map<string, ConfigEntry>();
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i] as string;
    if (!t.startsWith("--") || t.length === 2)
      throw new ConfigError(
        FN,
        "text",
        `${FN}: ${safeText(source)}: ${framework} arguments must be --key value pairs; got ${fmtValue(t)} where a --key was expected`,
      );
    const eq = t.indexOf("=");
    const flag = eq < 0 ? t : t.slice(0, eq);
    const key = framework === "trl" ? flag.slice(2) : flag;
    if (eq >= 0) {
      addEntry(map, { key, value: scalarOf(t.slice(eq + 1), key, source), origin: "arg" });
      i++;
      continue;
    }
    const vals: string[] = [];
    i++;
    while (i < tokens.length && !(tokens[i] as string).startsWith("--"))
      vals.push(tokens[i++] as string);
    const value: RecordedValue =
      vals.length === 0
        ? true
        : vals.length === 1
          ? scalarOf(vals[0] as string, key, source)
          : vals.map((v) => scalarOf(v, key, source));
    addEntry(map, { key, value, origin: "arg" });
  }
  return map;
}

/**
 * Whether a `--config-path` is verl.trainer.main_ppo's own config folder (verl/trainer/config):
 * Hydra reads a relative path from the folder of main_ppo.py (`config`, `./config`), an absolute
 * one as it is; `pkg://verl.trainer.config` names the package.
 */
function isMainPpoConfigFolder(path: string): boolean {
  const p = path.replace(/\/+$/, "");
  if (p === "config" || p === "./config" || p === "pkg://verl.trainer.config") return true;
  return /^(\/|~\/)(.*\/)?verl\/trainer\/config$/.test(p);
}

/**
 * Hydra's own options and the override forms that select or delete config. `--config-name` /
 * `-cn` names a config of main_ppo's folder (returned; the resolver reads the release's recorded
 * config of that name or refuses naming it), and `--config-path` / `-cp` may name that folder;
 * `group@package=option` is returned (the resolver checks it against the release's recorded
 * groups), and `~key` too (the resolver refuses deleting a key the loss reads); another folder
 * (`--config-path`, `--config-dir`) is refused by name: the explanation would otherwise be of a
 * config the run does not load.
 *
 * @returns The option's value and how many tokens it took (0: not a Hydra option).
 */
function hydraOption(
  t: string,
  next: string | undefined,
  source: string,
): { name: string | null; took: number; group?: GroupSelection; deleted?: string } {
  const opt = /^(--config-path|--config-name|--config-dir|-cp|-cn|-cd)(=(.*))?$/s.exec(t);
  if (opt !== null) {
    const value = opt[3] ?? next ?? "";
    const took = opt[2] === undefined ? 2 : 1;
    if (opt[1] === "-cn" || opt[1] === "--config-name")
      return { name: value.replace(/\.yaml$/, ""), took };
    if ((opt[1] === "-cp" || opt[1] === "--config-path") && isMainPpoConfigFolder(value))
      return { name: null, took };
    throw new ConfigError(
      FN,
      opt[1] as string,
      `${FN}: ${safeText(source)}: ${opt[1]} ${fmtValue(value)} makes verl load its config from ${opt[1] === "--config-dir" || opt[1] === "-cd" ? "a further folder" : "another folder"}; polgrad resolves the configs verl.trainer.main_ppo ships (verl/trainer/config), so it cannot say which loss this run computes`,
    );
  }
  const group = /^([+]{0,2})([A-Za-z_][\w./]*)@([\w.]+)=(.*)$/s.exec(t);
  if (group !== null)
    return {
      name: null,
      took: 1,
      group: {
        group: group[2] as string,
        package: group[3] as string,
        option: group[4] as string,
        token: t,
      },
    };
  const deleted = /^~([A-Za-z_][\w.\-/]*)(=.*)?$/s.exec(t);
  if (deleted !== null) return { name: null, took: 1, deleted: deleted[1] as string };
  if (t.startsWith("~"))
    throw new ConfigError(
      FN,
      t,
      `${FN}: ${safeText(source)}: verl deletions must be ~key or ~key=value (Hydra syntax); got ${fmtValue(t)}`,
    );
  return { name: null, took: 0 };
}

/** Parse Hydra overrides `key=value`, `+key=value`, `++key=value` (verl), and the config name. */
function parseOverrides(
  tokens: readonly string[],
  source: string,
): {
  map: Map<string, ConfigEntry>;
  configName: string | null;
  groups: GroupSelection[];
  deletions: string[];
} {
  const map = new Map<string, ConfigEntry>();
  let configName: string | null = null;
  const groups: GroupSelection[] = [];
  const deletions: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    const hydra = hydraOption(t, tokens[i + 1], source);
    if (hydra.took > 0) {
      if (hydra.name !== null) configName = hydra.name;
      if (hydra.group !== undefined) groups.push(hydra.group);
      if (hydra.deleted !== undefined) deletions.push(hydra.deleted);
      i += hydra.took - 1;
      continue;
    }
    const m = /^([+]{0,2})([A-Za-z_][\w.\-/]*)=(.*)$/s.exec(t);
    if (m === null)
      throw new ConfigError(
        FN,
        "text",
        `${FN}: ${safeText(source)}: verl overrides must be key=value (Hydra syntax, optionally +key=value); got ${fmtValue(t)}`,
      );
    const key = m[2] as string;
    addEntry(map, {
      key,
      value: scalarOf(m[3] as string, key, source),
      origin: "override",
      ...(m[1] === "" ? {} : { plus: true as const }),
    });
  }
  return { map, configName, groups, deletions };
}

/** Every key a mapping (or a mapping inside it) holds twice: "key a.b on lines 3 and 7". */
function duplicateKeys(node: unknown, prefix: string, text: string): string[] {
  if (!isMap(node)) return [];
  const out: string[] = [];
  const seen = new Map<string, number>();
  const lineAt = (offset: number) => text.slice(0, offset).split("\n").length;
  for (const item of node.items) {
    const k = isScalar(item.key) ? String(item.key.value) : String(item.key);
    const line = isScalar(item.key) && item.key.range ? lineAt(item.key.range[0]) : 0;
    const name = prefix === "" ? k : `${prefix}.${k}`;
    const before = seen.get(k);
    if (before !== undefined) out.push(`key ${name} on lines ${before} and ${line}`);
    seen.set(k, line);
    out.push(...duplicateKeys(item.value, name, text));
  }
  return out;
}

/** Flatten a nested mapping to dotted keys (verl); lists and scalars are leaves. */
function flatten(
  o: Record<string, RecordedValue>,
  prefix: string,
  map: Map<string, ConfigEntry>,
): void {
  for (const [k, v] of Object.entries(o)) {
    const key = prefix === "" ? k : `${prefix}.${k}`;
    if (v !== null && typeof v === "object" && !Array.isArray(v))
      flatten(v as Record<string, RecordedValue>, key, map);
    else addEntry(map, { key, value: v, origin: "mapping" });
  }
}

/**
 * Read a framework config from text.
 *
 * Formula: entries = the mapping's keys (verl: flattened to dotted paths; OpenRLHF: `--` added to
 * a key written without it) or the arguments' keys, each with its value, last occurrence wins.
 *
 * @param framework - `trl`, `verl` or `openrlhf`.
 * @param text - The config text (YAML, JSON, or arguments).
 * @param options - `source` (for messages), `form` to force `mapping` or `args` (default: detected).
 * @returns The parsed entries.
 * @throws {ConfigError} E_CONFIG for unparsable YAML, a mapping that is not one, malformed arguments.
 * @derivation docs/conformance/explain.md#config-forms
 * @enforcedBy test/conformance/frameworkConfig/parse.test.ts > parseFrameworkConfig > golden: the three frameworks' forms give the same entries
 * @since 0.2.0
 */
export function parseFrameworkConfig(
  framework: ConfigFramework,
  text: string,
  options: { readonly source?: string; readonly form?: ConfigForm } = {},
): ParsedFrameworkConfig {
  const source = options.source ?? "the config";
  if (typeof text !== "string")
    throw new ConfigError(FN, "text", `${FN}: text must be a string; got ${fmtValue(text)}`);
  const form =
    options.form ?? (looksLikeScript(text) ? "script" : looksLikeArgs(text) ? "args" : "mapping");
  if (form === "args") return parseFrameworkArgs(framework, tokenizeArgs(text, source), { source });
  if (form === "script") return parseLaunchScript(framework, text, source);
  // A config is shallow; a deeply nested text would overflow the YAML parser's stack, so its
  // depth is measured first (flow brackets outside quotes and comments, and block indentation).
  const depth = nestingDepth(text);
  if (depth > MAX_DEPTH)
    throw new ConfigError(
      FN,
      "text",
      `${FN}: ${safeText(source)} must nest at most ${MAX_DEPTH} levels (brackets or indentation); got ${depth}`,
    );
  let doc: unknown;
  let duplicates: string[] = [];
  try {
    // Duplicate keys are read as yaml.safe_load reads them (TRL's config files): the last wins,
    // and the explanation warns.
    const d = parseDocument(text, { strict: true, uniqueKeys: false });
    const first = d.errors[0];
    if (first !== undefined) throw first;
    duplicates = duplicateKeys(d.contents, "", text);
    doc = d.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const why = e instanceof YAMLParseError ? e.message.split("\n")[0] : String(e);
    throw new ConfigError(
      FN,
      "text",
      `${FN}: ${safeText(source)} must be YAML or JSON (a mapping) or command-line arguments; got a parse error: ${safeText(why ?? "")}`,
    );
  }
  const warnings = duplicates.map(
    (d) => `${safeText(source)}: ${d} (the last value wins, as yaml.safe_load reads it)`,
  );
  if (doc === null || doc === undefined)
    return { framework, form, entries: [], skipped: [], source };
  if (Array.isArray(doc) && doc.every((x) => typeof x === "string")) {
    // A YAML list of overrides or arguments.
    return parseFrameworkConfig(framework, (doc as string[]).map(quoteToken).join("\n"), {
      source,
      form: "args",
    });
  }
  if (typeof doc !== "object" || Array.isArray(doc))
    throw new ConfigError(
      FN,
      "text",
      `${FN}: ${safeText(source)} must be a mapping of config keys to values (or arguments); got ${fmtValue(doc)}`,
    );
  const rec = toRecorded(doc, "", source) as Record<string, RecordedValue>;
  const map = new Map<string, ConfigEntry>();
  if (framework === "verl") flatten(rec, "", map);
  else if (framework === "openrlhf") {
    // Nested YAML spells the dotted flags (`actor:\n  policy_loss_type: gspo` is
    // --actor.policy_loss_type); a key written without its dashes gets `--`.
    const flat = new Map<string, ConfigEntry>();
    flatten(rec, "", flat);
    for (const e of flat.values())
      addEntry(map, { ...e, key: e.key.startsWith("-") ? e.key : `--${e.key}` });
  } else
    for (const [k, v] of Object.entries(rec))
      addEntry(map, { key: k, value: v, origin: "mapping" });
  return {
    framework,
    form,
    entries: [...map.values()],
    skipped: [],
    source,
    ...(warnings.length === 0 ? {} : { warnings }),
  };
}

/**
 * Read a framework config from command-line words, as a shell hands them to the trainer (each
 * word one argument, quotes already removed): a leading launcher is skipped and reported, the rest
 * read as `parseFrameworkConfig` reads arguments.
 *
 * @param framework - `trl`, `verl` or `openrlhf`.
 * @param words - The words.
 * @param options - `source` (for messages).
 * @returns The parsed entries.
 * @throws {ConfigError} E_CONFIG for malformed arguments.
 * @derivation docs/conformance/explain.md#config-forms
 * @enforcedBy test/conformance/frameworkConfig/corpus.test.ts > the launch configs the frameworks ship > ledger: every launch's outcome at every release is the committed one
 * @since 0.2.0
 */
export function parseFrameworkArgs(
  framework: ConfigFramework,
  words: readonly string[],
  options: { readonly source?: string } = {},
): ParsedFrameworkConfig {
  const source = options.source ?? "the arguments";
  const start = skipLauncher(words, framework);
  const rest = words.slice(start);
  if (framework !== "verl")
    return {
      framework,
      form: "args",
      entries: [...parseFlagArgs(rest, framework, source).values()],
      skipped: words.slice(0, start),
      source,
    };
  const { map, configName, groups, deletions } = parseOverrides(rest, source);
  return {
    framework,
    form: "args",
    entries: [...map.values()],
    skipped: words.slice(0, start),
    source,
    ...(configName === null ? {} : { configName }),
    ...(groups.length === 0 ? {} : { groupSelections: groups }),
    ...(deletions.length === 0 ? {} : { deletions }),
  };
}

/**
 * Two configs of one run read in order, the later over the earlier (a config file, then the
 * arguments after it): the later's entries replace the earlier's by key, its config name replaces
 * the earlier's, and the skipped words, warnings, group selections and deletions add up.
 * @internal
 */
export function laterOver(
  earlier: ParsedFrameworkConfig,
  later: ParsedFrameworkConfig,
  source: string,
): ParsedFrameworkConfig {
  const seen = new Set(later.entries.map((e) => e.key));
  const warnings = [...(earlier.warnings ?? []), ...(later.warnings ?? [])];
  const groups = [...(earlier.groupSelections ?? []), ...(later.groupSelections ?? [])];
  const deletions = [...(earlier.deletions ?? []), ...(later.deletions ?? [])];
  const configName = later.configName ?? earlier.configName;
  return {
    framework: later.framework,
    form: "args",
    entries: [...earlier.entries.filter((e) => !seen.has(e.key)), ...later.entries],
    skipped: [...earlier.skipped, ...later.skipped],
    source,
    ...(warnings.length === 0 ? {} : { warnings }),
    ...(configName === undefined ? {} : { configName }),
    ...(groups.length === 0 ? {} : { groupSelections: groups }),
    ...(deletions.length === 0 ? {} : { deletions }),
  };
}

/** The trainer each framework's config is resolved for, by its launch entry point. */
const MAIN_ENTRY: Readonly<
  Record<ConfigFramework, { readonly name: string; readonly ok: RegExp }>
> = {
  verl: {
    name: "verl.trainer.main_ppo",
    ok: /^(verl\.trainer\.main_ppo|.*verl\/trainer\/main_ppo\.py)$/,
  },
  openrlhf: {
    name: "openrlhf.cli.train_ppo_ray",
    ok: /^(openrlhf\.cli\.train_ppo_ray|.*openrlhf\/cli\/train_ppo_ray\.py)$/,
  },
  // TRL: `trl grpo`, or a script built on GRPOTrainer (examples/scripts/grpo_vlm.py, a user's train_grpo.py).
  trl: { name: "trl grpo", ok: /^(trl grpo|.*grpo[^/]*\.py|[\w.]*grpo[\w.]*)$/ },
};

/**
 * The entry point a parsed config's skipped launcher names (`-m MODULE`, `--module MODULE`, a
 * `*.py` script, `trl SUBCOMMAND`), or null when it names none.
 */
export function launchedEntry(parsed: ParsedFrameworkConfig): string | null {
  const w = parsed.skipped;
  for (let j = 0; j < w.length; j++) {
    const t = w[j] as string;
    if ((t === "-m" || t === "--module") && j + 1 < w.length) return w[j + 1] as string;
    if (t.endsWith(".py")) return t;
    if (t === "trl" && j + 1 < w.length) return `trl ${w[j + 1] as string}`;
  }
  return null;
}

/**
 * Refuse a config launched through another trainer than the one polgrad resolves for its
 * framework (a verl recipe's own main, OpenRLHF's SFT or DPO trainer, `trl rloo`), by name.
 *
 * @throws {ConfigError} E_CONFIG naming the entry point.
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > rejects: a launch through another trainer (a verl recipe's main, trl rloo) is refused by its entry point
 */
export function checkEntryPoint(fn: string, parsed: ParsedFrameworkConfig): void {
  const entry = launchedEntry(parsed);
  const main = MAIN_ENTRY[parsed.framework];
  if (entry === null || main.ok.test(entry)) return;
  throw new ConfigError(
    fn,
    "config",
    `${fn}: ${safeText(parsed.source)} launches ${safeText(entry)}; polgrad resolves the config of ${main.name} (${entry} reads a config or a loss of its own)`,
  );
}

function quoteToken(t: string): string {
  return /[\s#"'\\]/.test(t) ? `'${t.replaceAll("'", "")}'` : t;
}
