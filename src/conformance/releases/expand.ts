/**
 * The compact release facts (`polgrad-release-facts/1`, written by tools/record-releases/) expanded
 * into the per-release view the resolvers read: every release with all its keys in source order.
 * Pure and browser-safe (docs/conformance/releases.md#data).
 */
import { fmtValue, mustBe } from "../../core/message.js";
import { IoError } from "../../errors.js";
import {
  COMPACT_FORMAT,
  type CompactKeyRun,
  type CompactRelease,
  type CompactReleaseFacts,
  type RecordedConfigGroup,
  type RecordedKey,
  type RecordedNamedConfig,
  type RecordedRelease,
  type RecordedReleaseFacts,
  type RecordedValue,
} from "./types.js";

const FRAMEWORKS = ["trl", "verl", "openrlhf"];

type Obj = Readonly<Record<string, unknown>>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isIndex = (v: unknown, n: number): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) < n;

/**
 * Expand a framework's compact release facts into the per-release view, checking that it holds
 * exactly as many releases and (release, key) rows as its recorder wrote.
 *
 * @param data - The parsed JSON of `src/conformance/releases/data/<framework>.json`.
 * @param fn - The public function named by errors.
 * @param arg - The argument named by errors.
 * @returns The facts, every release with its keys in source order.
 * @throws {IoError} E_IO when the data is not the compact format or does not expand to its counts.
 * @derivation docs/conformance/releases.md#data
 * @enforcedBy test/conformance/releases/releaseFacts.test.ts > expandReleaseFacts > identity: each framework's file expands to the counts and sha256 its recorder wrote
 * @since 0.2.0
 */
export function expandReleaseFacts(
  data: unknown,
  fn = "expandReleaseFacts",
  arg = "data",
): RecordedReleaseFacts {
  const fail = (where: string, rule: string, got: unknown): IoError =>
    new IoError(fn, arg, mustBe(fn, `${arg}${where}`, rule, fmtValue(got)));
  if (!isObj(data) || data.format !== COMPACT_FORMAT)
    throw fail(".format", `"${COMPACT_FORMAT}"`, isObj(data) ? data.format : data);
  if (typeof data.framework !== "string" || !FRAMEWORKS.includes(data.framework))
    throw fail(".framework", "trl, verl or openrlhf", data.framework);
  const c = data as unknown as CompactReleaseFacts;
  if (!Array.isArray(c.releases) || !Array.isArray(c.keys) || !isObj(c.expanded))
    throw fail("", "an object with releases, keys and expanded", Object.keys(data));
  const order = new Map<string, number>();
  c.releases.forEach((r, i) => {
    if (!isObj(r) || typeof r.label !== "string" || order.has(r.label))
      throw fail(`.releases[${i}].label`, "a label no other release has", isObj(r) ? r.label : r);
    order.set(r.label, i);
  });
  // values[k][i]: key k's value at release i (undefined where it is absent).
  const values = c.keys.map((k, ki) => {
    if (!isObj(k) || typeof k.key !== "string" || !Array.isArray(k.runs))
      throw fail(`.keys[${ki}]`, "{ key, runs }", k);
    const at: (CompactKeyRun | undefined)[] = new Array(c.releases.length);
    for (const run of k.runs) {
      const a = order.get(run.from);
      const b = order.get(run.to);
      if (a === undefined || b === undefined || b < a)
        throw fail(`.keys[${ki}].runs`, "runs from one recorded release to a later one", run);
      for (let i = a; i <= b; i++) {
        if (at[i] !== undefined) throw fail(`.keys[${ki}].runs`, "disjoint runs", run);
        at[i] = run;
      }
    }
    return at;
  });
  const releases = c.releases.map((r, ri) => expandRelease(r, ri, c, values, fail));
  const keyRows = releases.reduce((n, r) => n + r.keys.length, 0);
  if (releases.length !== c.expanded.releases || keyRows !== c.expanded.keyRows)
    throw fail(
      ".expanded",
      `what the data expands to (${releases.length} releases, ${keyRows} key rows)`,
      c.expanded,
    );
  return {
    framework: c.framework,
    repo: c.repo,
    recordedBy: c.recordedBy,
    expanded: c.expanded,
    releases,
  };
}

function expandRelease(
  r: CompactRelease,
  ri: number,
  c: CompactReleaseFacts,
  values: readonly (readonly (CompactKeyRun | undefined)[])[],
  fail: (where: string, rule: string, got: unknown) => IoError,
): RecordedRelease {
  const where = `.releases[${ri}]`;
  if (!Array.isArray(r.files) || !Array.isArray(r.keyRanges) || !Array.isArray(r.keyLines))
    throw fail(where, "a release with files, keyRanges and keyLines", Object.keys(r));
  const keys: RecordedKey[] = [];
  for (const range of r.keyRanges) {
    const [first, count] = Array.isArray(range) ? range : [];
    if (!isIndex(first, c.keys.length) || !isIndex(count - 1, c.keys.length - first))
      throw fail(`${where}.keyRanges`, "[first, count] ranges of the key table", range);
    for (let ki = first; ki < first + count; ki++) {
      const j = keys.length;
      const v = values[ki]?.[ri];
      const fi = typeof r.keyFile === "number" ? r.keyFile : r.keyFile[j];
      const file = isIndex(fi, r.files.length) ? r.files[fi] : undefined;
      const line = r.keyLines[j];
      if (v === undefined || file === undefined || !Number.isInteger(line))
        throw fail(`${where}`, "a value, file and line for every key", c.keys[ki]?.key);
      keys.push({
        key: (c.keys[ki] as { key: string }).key,
        default: v.default,
        type: v.type,
        choices: v.choices,
        at: { path: file.path, line: line as number },
      });
    }
  }
  if (keys.length !== r.keyLines.length)
    throw fail(`${where}.keyLines`, `${keys.length} lines (one per key)`, r.keyLines.length);
  return {
    label: r.label,
    tag: r.tag,
    commit: r.commit,
    date: r.date,
    files: r.files.map((f) => ({ path: f.path, sha256: f.sha256 })),
    keys,
    ...(r.configs === undefined
      ? {}
      : { configs: namedConfigs(r, keys, `${where}.configs`, fail) }),
    ...(r.groups === undefined ? {} : { groups: configGroups(r.groups, `${where}.groups`, fail) }),
  };
}

/** A release's config groups, checked: each a group, a package, a default and the options shipped. */
function configGroups(
  groups: unknown,
  where: string,
  fail: (where: string, rule: string, got: unknown) => IoError,
): RecordedConfigGroup[] {
  if (!Array.isArray(groups)) throw fail(where, "a list of config groups", groups);
  return groups.map((raw: unknown, i) => {
    const g = isObj(raw) ? raw : {};
    const options = Array.isArray(g.options) ? (g.options as unknown[]) : null;
    const ok =
      typeof g.group === "string" &&
      typeof g.package === "string" &&
      typeof g.default === "string" &&
      options !== null &&
      options.every((o) => typeof o === "string");
    if (!ok) throw fail(`${where}[${i}]`, "{ group, package, default, options } of strings", raw);
    return {
      group: g.group as string,
      package: g.package as string,
      default: g.default as string,
      options: options as string[],
    };
  });
}

/** A release's named configs, checked: distinct names, a recorded file, values of recorded keys. */
function namedConfigs(
  r: CompactRelease,
  keys: readonly RecordedKey[],
  where: string,
  fail: (where: string, rule: string, got: unknown) => IoError,
): RecordedNamedConfig[] {
  if (!Array.isArray(r.configs)) throw fail(where, "a list of named configs", r.configs);
  const known = new Set(keys.map((k) => k.key));
  const names = new Set<string>();
  return r.configs.map((raw: unknown, i) => {
    const c = isObj(raw) ? raw : {};
    const values = Array.isArray(c.values) ? (c.values as unknown[]) : null;
    const name = c.name;
    const ok =
      typeof name === "string" &&
      !names.has(name) &&
      isIndex(c.file, r.files.length) &&
      values !== null &&
      values.every((v) => isObj(v) && typeof v.key === "string" && known.has(v.key));
    if (!ok) throw fail(`${where}[${i}]`, "{ name, file, values } of recorded keys", raw);
    names.add(name);
    return {
      name,
      file: c.file as number,
      values: (values as Obj[]).map((v) => ({
        key: v.key as string,
        default: v.default as RecordedValue,
      })),
    };
  });
}
