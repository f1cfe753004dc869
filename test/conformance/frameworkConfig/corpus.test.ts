/**
 * The launch configs the frameworks ship (test/fixtures/frameworks/corpus/*.json, recorded by
 * tools/record-corpus/corpus.py: the trainer's words as bash expands them, with provenance), each
 * explained at every recorded release where it exists, as `polgrad explain` does without --batch.
 *
 * The outcome of every (launch, release) is compared with the committed ledger
 * (corpus/outcomes.json; POLGRAD_WRITE_CORPUS=1 rewrites it after a change, and its diff is the
 * change's effect on real configs). Beside the ledger, the rules of docs/conformance/explain.md
 * are checked on every outcome; the launches that still break one are listed in OPEN by the rule
 * and the point of issue 33 that fixes them, and a listed launch that no longer breaks its rule
 * fails the test until it is taken off the list.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { builtinBatchFor } from "../../../src/conformance/frameworkConfig/evaluationBatch.js";
import {
  explainResolution,
  resolveFrameworkConfig,
} from "../../../src/conformance/frameworkConfig/explain.js";
import {
  type ConfigFramework,
  type ParsedFrameworkConfig,
  parseFrameworkArgs,
  parseFrameworkConfig,
} from "../../../src/conformance/frameworkConfig/parse.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { BUILTIN_BATCH } from "../../../src/which/index.js";

const DIR = "test/fixtures/frameworks/corpus";
const SOURCES = ["verl", "openrlhf", "trl", "open-r1"] as const;

interface Launch {
  readonly id: string;
  readonly path: string;
  readonly kind: string;
  readonly entry: string;
  readonly launcher: readonly string[];
  readonly args?: readonly string[];
  readonly mapping?: Record<string, unknown>;
  readonly kwargs?: Record<string, unknown>;
  readonly seen: readonly (readonly [string, number, string])[];
}

interface Corpus {
  readonly framework: string;
  readonly repo: string;
  readonly releases: readonly { readonly label: string; readonly commit: string }[];
  readonly pins?: { readonly trl: string };
  readonly launches: readonly Launch[];
}

function load(source: string): Corpus {
  return JSON.parse(readFileSync(`${DIR}/${source}.json`, "utf8")) as Corpus;
}

/** The entry point's words as the launch spelled them (`-m MODULE`, a script, `trl grpo`). */
function entryWords(entry: string): string[] {
  if (entry.startsWith("trl ")) return entry.split(" ");
  return entry.endsWith(".py") ? [entry] : ["-m", entry];
}

/** A launch's settings as polgrad reads them: its whole command line, launcher included. */
function parsedOf(framework: ConfigFramework, l: Launch): ParsedFrameworkConfig {
  if (l.args !== undefined)
    return parseFrameworkArgs(framework, [...l.launcher, ...entryWords(l.entry), ...l.args], {
      source: l.id,
    });
  // A recorded mapping (YAML file) or GRPOConfig(...) keywords: read as the YAML mapping it is.
  return parseFrameworkConfig(framework, JSON.stringify(l.mapping ?? l.kwargs ?? {}), {
    source: l.id,
    form: "mapping",
  });
}

type Outcome =
  | { readonly kind: "explained"; readonly ignored: readonly string[] }
  | {
      readonly kind: "refused" | "not-evaluated";
      readonly message: string;
    };

function outcomeOf(framework: ConfigFramework, release: string, l: Launch): Outcome {
  let parsed: ParsedFrameworkConfig;
  let res: ReturnType<typeof resolveFrameworkConfig>;
  try {
    parsed = parsedOf(framework, l);
    res = resolveFrameworkConfig(`${framework}@${release}`, parsed, {});
    explainResolution(res);
  } catch (e) {
    return { kind: "refused", message: (e as Error).message };
  }
  const batch = builtinBatchFor(BUILTIN_BATCH, [res]);
  if ("tooLarge" in batch)
    return { kind: "not-evaluated", message: `the plan needs ${batch.tooLarge} rows` };
  try {
    evaluateResolution(res, batch.inputs);
  } catch (e) {
    return { kind: "not-evaluated", message: (e as Error).message };
  }
  return { kind: "explained", ignored: res.ignored.map((x) => x.key) };
}

interface Row {
  readonly source: string;
  readonly release: string;
  readonly launch: Launch;
  readonly framework: ConfigFramework;
  readonly outcome: Outcome;
}

function allRows(): Row[] {
  const rows: Row[] = [];
  for (const source of SOURCES) {
    const c = load(source);
    const framework = (source === "open-r1" ? "trl" : source) as ConfigFramework;
    for (const l of c.launches) {
      const releases = c.pins !== undefined ? [c.pins.trl] : l.seen.map((s) => s[0]);
      for (const release of releases)
        rows.push({
          source,
          release,
          launch: l,
          framework,
          outcome: outcomeOf(framework, release, l),
        });
    }
  }
  return rows;
}

function ledgerLine(r: Row): string {
  const o = r.outcome;
  const what =
    o.kind === "explained"
      ? `explained${o.ignored.length > 0 ? `; ignored ${o.ignored.join(" ")}` : ""}`
      : `${o.kind}: ${o.message}`;
  return JSON.stringify([r.source, r.release, r.launch.id, what]);
}

describe("the launch configs the frameworks ship", () => {
  const rows = allRows();

  test("golden: the recorded corpus holds every framework's launches, with provenance", () => {
    for (const source of SOURCES) {
      const c = load(source);
      expect(c.launches.length).toBeGreaterThan(0);
      for (const l of c.launches) {
        expect(l.seen.length).toBeGreaterThan(0);
        for (const [label, line, sha] of l.seen) {
          expect(c.releases.some((r) => r.label === label)).toBe(true);
          expect(line).toBeGreaterThan(0);
          expect(sha).toMatch(/^[0-9a-f]{64}$/);
        }
      }
    }
  });

  test("ledger: every launch's outcome at every release is the committed one", () => {
    const got = `[\n${rows.map(ledgerLine).join(",\n")}\n]\n`;
    const path = `${DIR}/outcomes.json`;
    if (process.env.POLGRAD_WRITE_CORPUS === "1") writeFileSync(path, got);
    const want = readFileSync(path, "utf8");
    // Compared line by line so a failure names the launches that changed.
    const a = new Set(want.split("\n"));
    const changed = got.split("\n").filter((x) => !a.has(x));
    expect(changed.slice(0, 20)).toEqual([]);
    expect(got.length).toBe(want.length);
  });

  test("a refusal names the framework's own key or entry point, never an internal field", () => {
    const bad = rows.filter((r) => {
      const o = r.outcome;
      if (o.kind === "explained") return false;
      if (/config\.[a-z]+\.[a-zA-Z]+|config\.[a-zA-Z]+ must/.test(o.message)) return true;
      let keys: string[] = [];
      try {
        const p = parsedOf(r.framework, r.launch);
        keys = p.entries.map((e) => e.key);
        // A named config's value is named with the option that selected it.
        if (p.configName !== undefined) keys.push(`--config-name ${p.configName}`);
        // A config-group selection is named as written.
        for (const g of p.groupSelections ?? []) keys.push(g.token);
      } catch {
        // The words do not parse: the message must name the word it stopped at.
        // (A word as a whole, quoted as the message quotes it, or a word's key.)
        const words = r.launch.args ?? [];
        keys = [
          ...words.map((w) => JSON.stringify(w)),
          ...words.map((w) => w.split("=")[0] as string).filter((k) => k.length > 2),
        ];
      }
      return !keys.some((k) => o.message.includes(k)) && !o.message.includes(r.launch.entry);
    });
    expect(
      bad
        .map((r) => `${r.launch.id}@${r.release}: ${(r.outcome as { message: string }).message}`)
        .slice(0, 10),
    ).toEqual([]);
  });
});
