/**
 * Where the resolvers get the recorded release facts: each framework's compact JSON
 * (`src/conformance/releases/data/<framework>.json`, copied to `dist/` by the build), read on first
 * use and kept. Under Node the file is read synchronously beside this module
 * (`process.getBuiltinModule("node:fs")`, so no `node:` import is reachable from the browser
 * entry); in a browser the caller loads it first with `loadReleaseFacts`
 * (docs/browser.md#framework-configs). Browser-safe.
 */
import { fmtValue, mustBe } from "../../core/message.js";
import { oneOf } from "../../core/names.js";
import { fail, IoError } from "../../errors.js";
import { expandReleaseFacts } from "./expand.js";
import type { RecordedReleaseFacts } from "./types.js";

/** A framework whose releases are recorded. */
export type FactsFramework = RecordedReleaseFacts["framework"];

/** Every framework whose releases are recorded. */
export const FACTS_FRAMEWORKS: readonly FactsFramework[] = ["trl", "verl", "openrlhf"];

/** Reads a framework's compact facts file synchronously and returns its parsed JSON. */
export type FactsReader = (framework: FactsFramework) => unknown;

const cache = new Map<FactsFramework, RecordedReleaseFacts>();

// The folder of the data files: beside this module in src/ (tests) and in dist/ (the package).
// Held in a variable so that a bundler does not take `new URL(…, import.meta.url)` for an asset.
const here: string = import.meta.url;

interface SyncFs {
  readFileSync(path: URL, encoding: "utf8"): string;
}

/** The package's own files, read with Node's fs; null where there is no Node (a browser). */
function packageReader(): FactsReader | null {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof proc?.getBuiltinModule !== "function") return null;
  const fs = proc.getBuiltinModule("node:fs") as SyncFs | undefined;
  if (fs === undefined) return null;
  return (framework) => {
    const url = new URL(`data/${releaseFactsFile(framework)}`, here);
    let text: string;
    try {
      text = fs.readFileSync(url, "utf8");
    } catch (e) {
      throw new IoError(
        "releaseFacts",
        framework,
        mustBe(
          "releaseFacts",
          framework,
          `a readable file ${url.pathname} (the package's recorded release facts)`,
          (e as { code?: string }).code ?? String(e),
        ),
        url.pathname,
      );
    }
    return JSON.parse(text) as unknown;
  };
}

let reader: FactsReader | null = packageReader();

/**
 * The file name of a framework's compact facts (`verl.json`), under `src/conformance/releases/data/`
 * and `dist/conformance/releases/data/` (in the package: `polgrad/releases/verl.json`).
 *
 * @param framework - `trl`, `verl` or `openrlhf`.
 * @returns The file name.
 * @derivation docs/browser.md#framework-configs
 * @enforcedBy test/conformance/releases/releaseStore.test.ts > loadReleaseFacts > golden: without a file system the resolvers raise until the caller loads the facts
 * @throws {UnknownNameError} E_UNKNOWN_NAME for a framework other than trl, verl, openrlhf.
 * @since 0.2.0
 */
export function releaseFactsFile(framework: FactsFramework): string {
  return `${oneOf("releaseFactsFile", "framework", framework, FACTS_FRAMEWORKS)}.json`;
}

/**
 * A framework's recorded release facts, read and expanded on first use.
 *
 * @param framework - `trl`, `verl` or `openrlhf`.
 * @param fn - The public function named by errors.
 * @param arg - The argument named by errors.
 * @returns The facts, every release with all its keys.
 * @throws {IoError} E_IO when the facts are not loaded and cannot be read here (a browser before
 *   `loadReleaseFacts`), or the file is not the compact format.
 * @derivation docs/conformance/releases.md#data
 * @enforcedBy test/conformance/releases/releaseStore.test.ts > releaseFacts > identity: a framework's file is read on its first use only
 * @since 0.2.0
 */
export function releaseFacts(
  framework: FactsFramework,
  fn = "releaseFacts",
  arg = "framework",
): RecordedReleaseFacts {
  const hit = cache.get(framework);
  if (hit !== undefined) return hit;
  if (reader === null)
    throw fail(
      IoError,
      fn,
      arg,
      `a framework whose recorded release facts are loaded (without a file system: await loadReleaseFacts(fetchJson) first, docs/browser.md#framework-configs)`,
      fmtValue(framework),
    );
  return store(framework, reader(framework), fn);
}

/** Whether a framework's facts are loaded (read or given) already. */
export function releaseFactsLoaded(framework: FactsFramework): boolean {
  return cache.has(framework);
}

/**
 * Load the recorded release facts where there is no file system (a browser): `fetchJson` returns
 * the parsed JSON of a framework's file (`releaseFactsFile(framework)`), e.g. with `fetch` from
 * where the page serves the package's `dist/conformance/releases/data/`, or a bundler's dynamic
 * `import("polgrad/releases/verl.json")`. Frameworks already loaded are not fetched again.
 *
 * @param fetchJson - Returns the parsed JSON of one framework's file.
 * @param frameworks - The frameworks to load (default all three).
 * @returns Resolves when every listed framework is loaded.
 * @throws {IoError} E_IO (the promise rejects) when a file is not the compact format or is another
 *   framework's.
 * @derivation docs/browser.md#framework-configs
 * @enforcedBy test/conformance/releases/releaseStore.test.ts > loadReleaseFacts > golden: without a file system the resolvers raise until the caller loads the facts
 * @since 0.2.0
 */
export async function loadReleaseFacts(
  fetchJson: (file: string, framework: FactsFramework) => unknown,
  frameworks: readonly FactsFramework[] = FACTS_FRAMEWORKS,
): Promise<void> {
  await Promise.all(
    frameworks.map(async (f) => {
      if (cache.has(f)) return;
      const data = await fetchJson(releaseFactsFile(f), f);
      store(f, data, "loadReleaseFacts");
    }),
  );
}

function store(framework: FactsFramework, data: unknown, fn: string): RecordedReleaseFacts {
  const facts = expandReleaseFacts(data, fn, releaseFactsFile(framework));
  if (facts.framework !== framework)
    throw new IoError(
      fn,
      framework,
      mustBe(fn, releaseFactsFile(framework), `${framework}'s facts`, fmtValue(facts.framework)),
    );
  cache.set(framework, facts);
  return facts;
}

/**
 * Replace a framework's facts (or forget them with undefined) and the file reader (null: none, as
 * in a browser; undefined: unchanged). For tests: synthetic releases, the browser path.
 *
 * @internal
 */
export function _setReleaseFacts(
  framework: FactsFramework,
  facts: RecordedReleaseFacts | undefined,
  read?: FactsReader | null,
): void {
  if (facts === undefined) cache.delete(framework);
  else cache.set(framework, facts);
  if (read !== undefined) reader = read;
}

/** The reader this environment has (Node's fs, or null). @internal */
export function _packageReader(): FactsReader | null {
  return packageReader();
}
