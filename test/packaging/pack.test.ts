/**
 * Enforces docs/packaging.md: the published package carries LICENSE, a repository field, README
 * links that resolve inside the package, only the Python grammar of tree-sitter (vendored, with
 * its licence and SHA-256s) and no runtime dependency on the 22 MB grammar bundle; `npm pack`
 * then `npm install` in an empty folder runs every command. Uses the built dist/ (`npm test`
 * builds first); packs with --ignore-scripts so the build is not repeated.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { contractViolations, runBin } from "../cli/_run.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "polgrad-pack-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

let files: string[] = [];
let unpackedSize = 0;
let installed = "";

beforeAll(() => {
  const out = execFileSync(
    NPM,
    ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  const [info] = JSON.parse(out) as {
    filename: string;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  if (info === undefined) throw new Error("npm pack printed no package");
  files = info.files.map((f) => f.path).sort();
  unpackedSize = info.unpackedSize;
  const app = join(work, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), '{"name": "app", "private": true}\n');
  execFileSync(
    NPM,
    ["install", "--prefer-offline", "--no-audit", "--no-fund", join(work, info.filename)],
    { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  installed = join(app, "node_modules", "polgrad");
}, 240_000);

describe("npm package", () => {
  test("golden: the tarball carries the licence, docs and only the python grammar", () => {
    expect(files).toContain("LICENSE");
    expect(files).toContain("README.md");
    expect(files).toContain("dist/index.js");
    // The package's bin entry is in the tarball.
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      bin: { polgrad: string };
    };
    expect(files).toContain(manifest.bin.polgrad.replace(/^\.\//, ""));
    const vendored = files.filter((f) => f.startsWith("vendor/"));
    expect(vendored).toEqual([
      "vendor/tree-sitter/LICENSE",
      "vendor/tree-sitter/PROVENANCE.json",
      "vendor/tree-sitter/package.json",
      "vendor/tree-sitter/tree-sitter-python.wasm",
      "vendor/tree-sitter/tree-sitter.js",
      "vendor/tree-sitter/tree-sitter.wasm",
    ]);
    expect(files.filter((f) => f.endsWith(".wasm"))).toHaveLength(2);
    // The vendored bytes are the ones PROVENANCE.json records.
    const provenance = JSON.parse(
      readFileSync(join(installed, "vendor/tree-sitter/PROVENANCE.json"), "utf8"),
    ) as {
      files: Record<string, string>;
    };
    for (const [name, sha] of Object.entries(provenance.files)) {
      const bytes = readFileSync(join(installed, "vendor/tree-sitter", name));
      expect([name, createHash("sha256").update(bytes).digest("hex")]).toEqual([name, sha]);
    }
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(pkg.repository).toMatchObject({ type: "git" });
    expect(Object.keys(pkg.dependencies as object).sort()).toEqual([
      "@bufbuild/protobuf",
      "@observablehq/plot",
      "fflate",
      "linkedom",
      "pure-rand",
      "yaml",
    ]);
    expect(existsSync(join(installed, "..", "@vscode", "tree-sitter-wasm"))).toBe(false);
  });

  test("golden: the tarball ships the release facts as json, no source map, and unpacks to at most 6 MB", () => {
    const facts = files.filter((f) => f.startsWith("dist/conformance/releases/"));
    expect(facts).toEqual([
      "dist/conformance/releases/data/openrlhf.json",
      "dist/conformance/releases/data/trl.json",
      "dist/conformance/releases/data/verl.json",
      "dist/conformance/releases/expand.d.ts",
      "dist/conformance/releases/expand.js",
      "dist/conformance/releases/store.d.ts",
      "dist/conformance/releases/store.js",
      // TRL's argument names beside GRPOConfig (names only, 35 KB with provenance: a module the
      // browser-safe resolver imports; tools/record-releases/trlArguments.py).
      "dist/conformance/releases/trlArgumentKeys.d.ts",
      "dist/conformance/releases/trlArgumentKeys.js",
      "dist/conformance/releases/types.d.ts",
      "dist/conformance/releases/types.js",
    ]);
    // The recorded metric names, read beside dist/diagnostics/logs/metricNames.js.
    expect(files.filter((f) => f.startsWith("dist/diagnostics/data/"))).toEqual([
      "dist/diagnostics/data/metric-names.json",
    ]);
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.filter((f) => f.startsWith("src/"))).toEqual([]);
    expect(unpackedSize).toBeLessThanOrEqual(6_000_000);
    // The facts are a subpath of the installed package: what a page bundles or serves.
    const script =
      'import("polgrad/releases/verl.json", { with: { type: "json" } }).then((m) => console.log(m.default.format, m.default.releases.length));';
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: join(installed, "..", ".."),
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("polgrad-release-facts/1 10\n");
  });

  test("golden: every relative readme link resolves inside the package", () => {
    const readme = readFileSync(join(installed, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1] as string)
      .filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(5);
    expect(links.filter((l) => !existsSync(join(installed, l)))).toEqual([]);
  });

  test("golden: the polgrad/testing subpath imports from the installed package and certifies a loss", () => {
    // An app that depends on the tarball: its own node_modules/polgrad, imported by name.
    const app = join(installed, "..", "..");
    const script = [
      'import { assertConforms, randomBatches } from "polgrad/testing";',
      'import { policyLoss } from "polgrad";',
      'const cfg = { ratio: "token", surrogate: "pg_clip", clip: { epsLow: 0.2, epsHigh: 0.2 }, aggregation: "token_mean" };',
      "const r = assertConforms((i) => policyLoss(cfg, i), cfg, { nCases: 4 });",
      "console.log(r.conforms, randomBatches(1, [[2, 3]])[0].shape.join('x'));",
    ].join("\n");
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: app,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(out.stderr).toBe("");
    expect(out.stdout).toBe("true 2x3\n");
  });

  test("golden: every command runs from the installed package", async () => {
    // As npx would: the installed package's bin entry.
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      bin: { polgrad: string };
    };
    const bin = join(installed, manifest.bin.polgrad);
    const cwd = join(work, "run");
    mkdirSync(cwd, { recursive: true });
    const batch = join(ROOT, "test/fixtures/io/frameworks/trl.pt");
    // A checkout with one tracked TRL file: drift parses it with the vendored grammar.
    const checkout = join(cwd, "checkout");
    mkdirSync(join(checkout, "trl/trainer"), { recursive: true });
    writeFileSync(join(checkout, "trl/trainer/grpo_trainer.py"), "def f(x):\n    return x\n");
    const runs: [string[], 0 | 1 | 2][] = [
      [["--help"], 0],
      [["which"], 0],
      [["loss", "--algorithm", "dapo", "--batch", batch], 0],
      [["verify", "--algorithm", "grpo", "--cases", "2"], 0],
      [["demo-run", join(cwd, "demo"), "--steps", "30"], 0],
      [["diagnose", join(cwd, "demo")], 1],
      [["report", join(cwd, "demo"), "--out", join(cwd, "run.html")], 0],
      [["report", "--out", join(cwd, "batch.html")], 0],
      [["frameworks"], 0],
      [["explain", "--framework", "trl@v1.9.0", "--", "--loss_type", "cispo"], 0],
      [["history", "trl", "--key", "loss_type"], 0],
      [["deviations"], 0],
      [["deviations", "--pairs"], 0],
      [
        ["vectors", "emit", "--algorithm", "grpo", "--cases", "2", "--out", join(cwd, "vectors")],
        0,
      ],
      [
        [
          "vectors",
          "check",
          join(cwd, "vectors"),
          "--outputs",
          join(cwd, "vectors", "expected.safetensors"),
        ],
        0,
      ],
      [["drift", "--checkout", checkout, "--framework", "trl"], 1],
      [["contract", "check", "--contract", "papo-g-adapter", "--checkout", checkout], 1],
      [["contracts"], 0],
      [["algorithms"], 0],
      [["describe", "grpo"], 0],
      [["coverage"], 0],
      // playground serves until Ctrl-C: its usage error here, its page served below.
      [["playground", "--port", "70000", "--no-open"], 2],
    ];
    // Through the shared runner: exit code, streams and --json schemas checked as for any run.
    const results = runs.map(([args, expected]) => {
      const r = runBin(args, { bin, cwd, timeoutMs: 120_000 });
      return { args: args.join(" "), violations: contractViolations(r, expected) };
    });
    expect(results.filter((r) => r.violations.length > 0)).toEqual([]);
    // Every command of the CLI is in the list above (contract's subcommands through check).
    const help = runBin(["--help"], { bin }).stdout;
    const commands = [...help.matchAll(/^ {2}([a-z-]+) /gm)].map((m) => m[1]);
    expect(commands.filter((c) => !runs.some(([a]) => a[0] === c))).toEqual([]);
    // The playground is in the package: the installed command serves its page and its script.
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [bin, "playground", batch, "--no-open"], { cwd });
    let said = "";
    const at = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        said += d.toString();
        const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(said);
        if (m !== null) resolve(m[1] as string);
      });
      child.on("close", () => reject(new Error(`playground exited: ${said}`)));
    });
    const html = await (await fetch(at)).text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`${at}${script}`)).status).toBe(200);
    expect((await fetch(`${at}batch`)).status).toBe(200);
    child.kill("SIGINT");
    expect(await new Promise((r) => child.on("close", r))).toBe(0);
  });
});
