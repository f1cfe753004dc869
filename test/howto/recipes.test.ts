/**
 * Enforces docs/howto/*.md and the name maps of src/io/frameworkNames.ts: each page's
 * ```python recipe``` blocks, run with python3 and a fake trainer (test/howto/fake_batch.py: 12
 * deterministic steps of a B = 4, T = 6 batch with a ragged mask, dumped every 3 steps), write
 * step files under the framework's own names in the page's folder layout; polgrad's CLI reads the
 * folder (`diagnose DIR`) and one file (`loss --batch FILE --names ID`) exactly as it reads the
 * same numbers written under polgrad's own names as a JSON batch.
 *
 * Needs a python3 that can `import torch` (Debian's /usr/bin/python3 with python3-torch, or
 * POLGRAD_PYTHON); without one the recipe tests are skipped with a printed reason.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import {
  METRIC_FRAMEWORKS,
  type MetricFramework,
  metricNames,
} from "../../src/diagnostics/logs/metricNames.js";
import { BATCH_TENSOR_NAMES, REQUIRED_BATCH_TENSORS } from "../../src/io/batchNames.js";
import { FRAMEWORK_NAME_MAPS } from "../../src/io/frameworkNames.js";
import { METRIC_LOG_FORMATS } from "../../src/io/metricLogs/types.js";
import { type CliRun, runMain } from "../cli/_run.js";

const HOWTO = fileURLToPath(new URL("../../docs/howto/", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));

/** The first python that imports torch and numpy (PATH's python3 may be one without them). */
function torchPython(): string | null {
  const candidates = [process.env.POLGRAD_PYTHON, "/usr/bin/python3", "python3"];
  for (const py of candidates) {
    if (py === undefined || py === "") continue;
    const r = spawnSync(py, ["-c", "import torch, numpy"], { encoding: "utf8", timeout: 120_000 });
    if (r.status === 0) return py;
  }
  return null;
}

const PYTHON = torchPython();
if (PYTHON === null) {
  console.log(
    "test/howto/recipes.test.ts: recipe tests skipped: no python3 can `import torch, numpy` " +
      "(tried $POLGRAD_PYTHON, /usr/bin/python3, python3)",
  );
}

/** What the fake trainer does per page: the step numbers it dumps and polgrad's view of them. */
interface Page {
  readonly framework: "trl" | "verl" | "openrlhf";
  /** The algorithm of `polgrad loss --algorithm` for the page's loss command. */
  readonly algorithm: string;
  /** The path of step N's file relative to the dump folder, per the page's layout. */
  readonly layout: (step: number) => readonly string[];
}

const PAGES: readonly Page[] = [
  { framework: "trl", algorithm: "grpo", layout: (s) => [`step_${String(s).padStart(6, "0")}.pt`] },
  { framework: "verl", algorithm: "dapo", layout: (s) => [`global_step_${s}/batch.npz`] },
  // safetensors when the package is installed, else torch.save.
  {
    framework: "openrlhf",
    algorithm: "ppo",
    layout: (s) => [`step-${s}.safetensors`, `step-${s}.pt`],
  },
];

/** fake_batch.py: steps 0..11, every 3rd dumped. */
const DUMPED_STEPS = [0, 3, 6, 9];

/** The bodies of a page's fenced blocks whose info string is exactly `python recipe`. */
function recipeBlocks(markdown: string): string[] {
  const out: string[] = [];
  const fence = /^```python recipe\n([\s\S]*?)^```[ \t]*$/gm;
  for (let m = fence.exec(markdown); m !== null; m = fence.exec(markdown)) out.push(m[1] as string);
  return out;
}

interface Dumped {
  readonly dir: string;
  readonly dumped: Readonly<Record<string, string>>;
  readonly canonical: Readonly<Record<string, string>>;
  readonly names: Readonly<Record<string, readonly string[]>>;
}

const runs = new Map<string, Dumped>();

/** Run the page's recipe blocks and the fake trainer once; the step files and their JSON twins. */
function dumpedBy(page: Page): Dumped {
  const done = runs.get(page.framework);
  if (done !== undefined) return done;
  const blocks = recipeBlocks(readFileSync(join(HOWTO, `${page.framework}.md`), "utf8"));
  const dir = mkdtempSync(join(tmpdir(), `polgrad-howto-${page.framework}-`));
  const out = join(dir, "dumps");
  const script = join(dir, "run_recipe.py");
  writeFileSync(
    script,
    [
      ...blocks,
      "import sys",
      `sys.path.insert(0, ${JSON.stringify(HERE)})`,
      "import fake_batch",
      `fake_batch.main(${JSON.stringify(page.framework)}, globals(), ${JSON.stringify(out)}, ${JSON.stringify(join(dir, "canonical"))})`,
      "",
    ].join("\n"),
  );
  const r = spawnSync(PYTHON as string, [script], { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`python ${script} exited ${r.status}:\n${r.stderr}`);
  const doc = JSON.parse(r.stdout.trim().split("\n").pop() as string) as Omit<Dumped, "dir">;
  const result = { dir: out, ...doc };
  runs.set(page.framework, result);
  return result;
}

/** A loss document's numbers: `result` without what names where the batch came from. */
function lossNumbers(run: CliRun): unknown {
  const doc = JSON.parse(run.stdout) as { result: Record<string, unknown> };
  const { names: _n, source: _s, batch: _b, notes: _t, ...numbers } = doc.result;
  return numbers;
}

describe("framework name maps", () => {
  it("golden: every map names each framework tensor once and maps onto polgrad batch names", () => {
    const ours: readonly (string | null)[] = [...BATCH_TENSOR_NAMES, null];
    expect(FRAMEWORK_NAME_MAPS.map((m) => m.id)).toEqual(["verl", "trl", "openrlhf"]);
    for (const m of FRAMEWORK_NAME_MAPS) {
      expect(m.commit, m.id).toMatch(/^[0-9a-f]{40}$/);
      const theirs = m.entries.map((e) => e.theirs);
      expect(new Set(theirs).size, `${m.id}: a name listed twice`).toBe(theirs.length);
      for (const e of m.entries) {
        expect(ours, `${m.id}.${e.theirs}`).toContain(e.ours);
        expect(Number.isInteger(e.source.line) && e.source.line > 0, e.theirs).toBe(true);
        expect(e.source.path, e.theirs).toMatch(/^[\w./-]+\.py$/);
      }
      // A policy loss needs the four required tensors: each framework has a name for each.
      const mapped = new Set(m.entries.map((e) => e.ours));
      for (const r of REQUIRED_BATCH_TENSORS) expect(mapped.has(r), `${m.id} → ${r}`).toBe(true);
    }
  });
});

describe("docs/howto recipes", () => {
  it("identity: every docs/howto page has recipe blocks and a fake trainer", () => {
    // The logs-*.md pages need no hook: they are checked below.
    const pages = readdirSync(HOWTO)
      .filter((f) => f.endsWith(".md") && !f.startsWith("logs-"))
      .map((f) => basename(f, ".md"))
      .sort();
    expect(pages).toEqual(PAGES.map((p) => p.framework).sort());
    for (const p of pages) {
      expect(recipeBlocks(readFileSync(join(HOWTO, `${p}.md`), "utf8")).length, p).toBeGreaterThan(
        0,
      );
    }
    const fake = readFileSync(join(HERE, "fake_batch.py"), "utf8");
    for (const p of pages) expect(fake).toContain(`"${p}": ${p}_step`);
  });

  for (const page of PAGES) {
    it.skipIf(PYTHON === null)(
      `golden: the ${page.framework} recipe writes steps 0, 3, 6, 9 in the page's layout, every name known to the map`,
      () => {
        const d = dumpedBy(page);
        expect(Object.keys(d.dumped).map(Number)).toEqual(DUMPED_STEPS);
        for (const step of DUMPED_STEPS) {
          const file = relative(d.dir, d.dumped[String(step)] as string);
          expect(page.layout(step)).toContain(file);
          expect(existsSync(join(d.dir, file)), file).toBe(true);
        }
        // Every tensor the recipe writes is a name the framework's map reads into the batch.
        const map = FRAMEWORK_NAME_MAPS.find((m) => m.id === page.framework);
        const used = new Map(map?.entries.map((e) => [e.theirs, e.ours]));
        for (const name of d.names[String(DUMPED_STEPS[0])] ?? []) {
          expect(used.get(name), `${page.framework} writes ${name}`).toBeTypeOf("string");
        }
      },
      300_000,
    );

    it.skipIf(PYTHON === null)(
      `golden: the ${page.framework} recipe dumps steps 0, 3, 6, 9 that polgrad reads like its own names`,
      async () => {
        const d = dumpedBy(page);
        // The folder: every dumped step diagnosed, in order (exit 1 is an alarm, not a failure).
        const diag = await runMain(["diagnose", d.dir, "--json"]);
        expect([0, 1], diag.stderr).toContain(diag.code);
        const steps = (JSON.parse(diag.stdout) as { result: { steps: { step: number }[] } }).result
          .steps;
        expect(steps.map((s) => s.step)).toEqual(DUMPED_STEPS);
        // One file: the same loss, bit for bit, as the same numbers under polgrad's names.
        const step = String(DUMPED_STEPS[2]);
        const file = d.dumped[step] as string;
        const theirs = await runMain([
          "loss",
          "--batch",
          file,
          "--names",
          page.framework,
          "--algorithm",
          page.algorithm,
          "--json",
        ]);
        expect(theirs.code, theirs.stderr).toBe(0);
        const own = await runMain([
          "loss",
          "--batch",
          d.canonical[step] as string,
          "--algorithm",
          page.algorithm,
          "--json",
        ]);
        expect(own.code, own.stderr).toBe(0);
        expect(JSON.stringify(lossNumbers(theirs))).toBe(JSON.stringify(lossNumbers(own)));
      },
      300_000,
    );
  }
});

describe("docs/howto logs pages", () => {
  it("identity: one logs page per framework; every polgrad command on them uses diagnose's options, formats and recorded releases", () => {
    const pages = readdirSync(HOWTO)
      .filter((f) => f.startsWith("logs-") && f.endsWith(".md"))
      .sort();
    expect(pages).toEqual(["logs-openrlhf.md", "logs-trl.md", "logs-verl.md"]);
    const diagnose = COMMANDS.find((c) => c.name === "diagnose");
    const options = new Set(Object.keys(diagnose?.options ?? {}).map((o) => `--${o}`));
    for (const page of pages) {
      const text = readFileSync(join(HOWTO, page), "utf8");
      const lines = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
        (m[1] as string).split("\n").filter((l) => l.startsWith("polgrad ")),
      );
      expect({ page, commands: lines.length > 0 }).toEqual({ page, commands: true });
      for (const line of lines) {
        const words = (line.split("#")[0] as string).trim().split(/\s+/);
        expect({ line, command: words[1] }).toEqual({ line, command: "diagnose" });
        for (const [i, w] of words.entries()) {
          if (!w.startsWith("--")) continue;
          expect({ line, option: w, known: options.has(w) }).toEqual({
            line,
            option: w,
            known: true,
          });
          const value = words[i + 1] as string;
          if (w === "--format") expect([...METRIC_LOG_FORMATS, "dumps"]).toContain(value);
          if (w === "--names") {
            const [fw, release] = value.split("@") as [MetricFramework, string | undefined];
            expect(METRIC_FRAMEWORKS).toContain(fw);
            if (release !== undefined)
              expect(metricNames(fw).releases.map((r) => r.label)).toContain(release);
          }
        }
      }
    }
  });
});
