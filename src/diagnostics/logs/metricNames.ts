/**
 * The metric names each framework logs, per recorded release: the recording
 * `src/diagnostics/data/metric-names.json` (tools/record-releases/metricNames.py, copied to `dist/`
 * by the build), read on first use and kept (docs/diagnostics/metric-names.md). Under Node the file
 * is read synchronously beside the package (`process.getBuiltinModule("node:fs")`, so no `node:`
 * import is reachable from the browser entry); elsewhere the caller gives it with
 * `loadMetricNames`. Browser-safe.
 */
import { fmtValue, mustBe } from "../../core/message.js";
import { oneOf } from "../../core/names.js";
import { fail, IoError } from "../../errors.js";

/** A framework whose metric names are recorded. */
export type MetricFramework = "trl" | "verl" | "openrlhf";

/** Every framework whose metric names are recorded. */
export const METRIC_FRAMEWORKS: readonly MetricFramework[] = ["trl", "verl", "openrlhf"];

/** The format tag of the recording. */
export const METRIC_NAMES_FORMAT = "polgrad-metric-names/1";

/** Where a name is written in the framework's source at one release. */
export interface MetricNameSite {
  /** The logged name; a pattern such as `rewards/{reward_func_name}/mean` when `pattern`. */
  readonly name: string;
  /** True for a name with a variable part (an f-string): never matched by the name maps. */
  readonly pattern: boolean;
  /** Why the name is recorded as it is (a prefix the framework adds, a variable key). */
  readonly note: string | null;
  /** The file (path in the framework's repository) and 1-based line. */
  readonly path: string;
  readonly line: number;
}

/** One recorded release: its identity, the files read and the names found. */
export interface MetricNamesRelease {
  readonly label: string;
  readonly commit: string;
  readonly files: readonly { readonly path: string; readonly sha256: string }[];
  readonly names: readonly MetricNameSite[];
  /** The non-pattern names, for lookups. */
  readonly exact: ReadonlySet<string>;
}

/** A framework's recording: its releases in release order and the names every release logs. */
export interface FrameworkMetricNames {
  readonly framework: MetricFramework;
  readonly repo: string;
  readonly releases: readonly MetricNamesRelease[];
  /** Names added to every release's log by a library the framework runs on (TRL: transformers' Trainer). */
  readonly shared: ReadonlySet<string>;
}

interface RawRelease {
  label: string;
  commit: string;
  files: { path: string; sha256: string }[];
  names: [number, number, number][];
}
interface RawFramework {
  repo: string;
  names: { name: string; pattern?: boolean; note?: string }[];
  releases: RawRelease[];
  trainer?: { wheels: { names: { name: string }[] }[] };
}

let raw: Record<string, RawFramework> | null = null;
const cache = new Map<MetricFramework, FrameworkMetricNames>();
const here: string = import.meta.url;

interface SyncFs {
  readFileSync(path: URL, encoding: "utf8"): string;
}

function readPackageFile(): unknown {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const fs =
    typeof proc?.getBuiltinModule === "function"
      ? (proc.getBuiltinModule("node:fs") as SyncFs | undefined)
      : undefined;
  if (fs === undefined)
    throw fail(
      IoError,
      "metricNames",
      "framework",
      "a loaded metric-name recording (without a file system: loadMetricNames(json) first)",
      "none loaded",
    );
  const url = new URL("../data/metric-names.json", here);
  try {
    return JSON.parse(fs.readFileSync(url, "utf8")) as unknown;
  } catch (e) {
    throw new IoError(
      "metricNames",
      "framework",
      mustBe("metricNames", "framework", `a readable file ${url.pathname}`, String(e)),
      url.pathname,
    );
  }
}

/**
 * Give the recording (the parsed JSON of `metric-names.json`), where there is no file system or to
 * replace the package's file (tests). Checks the format tag and the shape it reads.
 *
 * @param json - The parsed recording.
 * @throws {IoError} E_IO when `json` is not the `polgrad-metric-names/1` format.
 */
export function loadMetricNames(json: unknown): void {
  const obj = json as { format?: unknown; frameworks?: unknown } | null;
  if (obj === null || typeof obj !== "object" || obj.format !== METRIC_NAMES_FORMAT)
    throw fail(
      IoError,
      "loadMetricNames",
      "json",
      `the ${METRIC_NAMES_FORMAT} recording`,
      fmtValue((obj as { format?: unknown } | null)?.format),
    );
  const fws = obj.frameworks as Record<string, RawFramework> | undefined;
  for (const f of METRIC_FRAMEWORKS)
    if (!fws || !Array.isArray(fws[f]?.releases) || !Array.isArray(fws[f]?.names))
      throw fail(IoError, "loadMetricNames", "json", `a recording with ${f}'s releases`, "none");
  raw = fws as Record<string, RawFramework>;
  cache.clear();
}

/**
 * A framework's recorded metric names, per release in release order (read on first use).
 *
 * @param framework - `trl`, `verl` or `openrlhf`.
 * @returns The recording of that framework.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for another framework.
 * @throws {IoError} E_IO when the recording cannot be read here and was not loaded.
 */
export function metricNames(framework: MetricFramework): FrameworkMetricNames {
  const f = oneOf("metricNames", "framework", framework, METRIC_FRAMEWORKS);
  const hit = cache.get(f);
  if (hit !== undefined) return hit;
  if (raw === null) loadMetricNames(readPackageFile());
  const r = (raw as Record<string, RawFramework>)[f] as RawFramework;
  const releases = r.releases.map((rel): MetricNamesRelease => {
    const names = rel.names.map(([ni, fi, line]): MetricNameSite => {
      const n = r.names[ni];
      const file = rel.files[fi];
      if (n === undefined || file === undefined)
        throw fail(
          IoError,
          "metricNames",
          "framework",
          "name and file indices in range",
          rel.label,
        );
      return {
        name: n.name,
        pattern: n.pattern === true,
        note: n.note ?? null,
        path: file.path,
        line,
      };
    });
    const exact = new Set(names.filter((n) => !n.pattern).map((n) => n.name));
    return { label: rel.label, commit: rel.commit, files: rel.files, names, exact };
  });
  const shared = new Set((r.trainer?.wheels ?? []).flatMap((w) => w.names.map((n) => n.name)));
  const out: FrameworkMetricNames = { framework: f, repo: r.repo, releases, shared };
  cache.set(f, out);
  return out;
}

/**
 * Whether a release of a framework logs `name` (a recorded non-pattern name of that release, or a
 * name every release gets from the library it runs on).
 *
 * @param framework - The framework.
 * @param label - A recorded release label (`v0.23.0`).
 * @param name - The metric name as the framework writes it (no logger prefix).
 * @returns True when recorded at that release.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for a release that is not recorded.
 */
export function releaseLogs(framework: MetricFramework, label: string, name: string): boolean {
  const rec = metricNames(framework);
  const labels = rec.releases.map((r) => r.label);
  const i = labels.indexOf(oneOf("releaseLogs", "release", label, labels));
  return rec.shared.has(name) || (rec.releases[i] as MetricNamesRelease).exact.has(name);
}
