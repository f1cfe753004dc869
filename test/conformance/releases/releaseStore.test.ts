/**
 * Enforces docs/conformance/releases.md#data and docs/browser.md#framework-configs: the release
 * facts are read on first use, one framework at a time; where there is no file system the
 * resolvers raise a typed error until the caller loads the facts; and the browser bundle holds none
 * of them.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import { findRelease, RELEASE_FACTS } from "../../../src/conformance/frameworkConfig/releases.js";
import {
  _packageReader,
  _setReleaseFacts,
  FACTS_FRAMEWORKS,
  type FactsFramework,
  loadReleaseFacts,
  releaseFactsLoaded,
} from "../../../src/conformance/releases/store.js";
import { IoError } from "../../../src/errors.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dataDir = join(root, "src/conformance/releases/data");
const readJson = (file: string): unknown => JSON.parse(readFileSync(join(dataDir, file), "utf8"));

function forgetAll(reader = _packageReader()): void {
  for (const f of FACTS_FRAMEWORKS) _setReleaseFacts(f, undefined, reader);
}

afterEach(() => forgetAll());

describe("releaseFacts", () => {
  test("identity: a framework's file is read on its first use only", () => {
    // Importing the resolvers read nothing.
    expect(FACTS_FRAMEWORKS.map(releaseFactsLoaded)).toEqual([false, false, false]);
    const reads: FactsFramework[] = [];
    const node = _packageReader();
    expect(node).not.toBeNull();
    forgetAll((f) => {
      reads.push(f);
      return node?.(f);
    });
    expect(findRelease("verl@v0.9.0").ref).toBe("verl@v0.9.0");
    resolveFrameworkConfig("verl@1dda039b");
    expect(RELEASE_FACTS.verl.releases.length).toBe(10);
    expect(reads).toEqual(["verl"]);
    expect(FACTS_FRAMEWORKS.map(releaseFactsLoaded)).toEqual([false, true, false]);
  });
});

describe("loadReleaseFacts", () => {
  test("golden: without a file system the resolvers raise until the caller loads the facts", async () => {
    const want = JSON.stringify(resolveFrameworkConfig("trl@v1.9.0"));
    forgetAll(null);
    for (const run of [
      () => findRelease("trl@v1.9.0"),
      () => resolveFrameworkConfig("trl@v1.9.0"),
      () => RELEASE_FACTS.trl,
    ]) {
      expect(run).toThrow(IoError);
      expect(run).toThrow(/loadReleaseFacts/);
    }
    const asked: string[] = [];
    await loadReleaseFacts(async (file) => {
      asked.push(file);
      return readJson(file);
    });
    expect(asked.sort()).toEqual(["openrlhf.json", "trl.json", "verl.json"]);
    expect(JSON.stringify(resolveFrameworkConfig("trl@v1.9.0"))).toBe(want);
    // Loaded frameworks are not fetched again.
    await loadReleaseFacts(() => {
      throw new Error("fetched again");
    });
  });

  test("rejects: a file that is another framework's or not the compact format", async () => {
    forgetAll(null);
    await expect(loadReleaseFacts(() => readJson("trl.json"), ["verl"])).rejects.toThrow(IoError);
    await expect(loadReleaseFacts(() => ({ releases: [] }), ["verl"])).rejects.toThrow(IoError);
    expect(releaseFactsLoaded("verl")).toBe(false);
  });
});

describe("browser bundle", () => {
  test("identity: vite's bundle of src/browser.ts holds no recorded release facts", async () => {
    const { build } = await import("vite");
    const outDir = mkdtempSync(join(tmpdir(), "polgrad-browser-facts-"));
    await build({
      configFile: false,
      logLevel: "silent",
      build: {
        lib: { entry: join(root, "src/browser.ts"), formats: ["es"], fileName: "polgrad" },
        outDir,
        minify: false,
        target: "es2022",
        emptyOutDir: true,
      },
    });
    const files = readdirSync(outDir, { recursive: true }).map(String);
    expect(files.filter((f) => f.endsWith(".json"))).toEqual([]);
    const code = files
      .filter((f) => f.endsWith(".js"))
      .map((f) => readFileSync(join(outDir, f), "utf8"))
      .join("\n");
    // The recorded key names that no source file names (the facts hold them, nothing else does)
    // are not in the bundle.
    const sources = readdirSync(join(root, "src"), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => readFileSync(join(root, "src", f), "utf8"))
      .join("\n");
    const onlyInFacts = FACTS_FRAMEWORKS.flatMap((fw) =>
      (readJson(`${fw}.json`) as { keys: { key: string }[] }).keys.map((k) => `"${k.key}"`),
    ).filter((k) => !sources.includes(k));
    expect(onlyInFacts.length).toBeGreaterThan(1000);
    expect(onlyInFacts.filter((k) => code.includes(k))).toEqual([]);
  }, 120_000);
});
