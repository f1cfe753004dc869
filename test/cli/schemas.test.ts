/**
 * Enforces docs/cli.md#json-schemas: one JSON Schema (draft 2020-12) per `--json` document kind
 * in docs/schemas/, compiled by ajv in strict mode; every kind the CLI produces validates (the
 * shared runner test/cli/_run.ts validates every `--json` document any CLI test produces), and the
 * schemas reject what the contract forbids (a non-finite number, a missing schema_version, an
 * unknown field, a multi-line error message).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, test } from "vitest";
import { SUBCOMMANDS } from "../../src/cli/commands/contract.js";
import { COMMANDS } from "../../src/cli/main.js";
import { runMain, SCHEMA_DIR, SCHEMA_FILES, schemaFileOf, VALIDATED, validatorOf } from "./_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-schemas-"));
const testRoot = fileURLToPath(new URL("../", import.meta.url));
const fx = fileURLToPath(new URL("../fixtures/python/", import.meta.url));
const batchPath = join(dir, "batch.json");
const papoPath = join(dir, "papo.json");
const runDir = join(dir, "run");
const livenessDir = join(dir, "liveness");
/** The schema of an adapter contract file (docs/conformance/adapters.md), an input format. */
const ADAPTER_FILE_SCHEMA = "adapter-contract.schema.json";

const batch = {
  logprobs: [
    [-0.2, -1.0, -0.7],
    [-0.5, -0.4, 123],
  ],
  old_logprobs: [
    [-0.5, -0.7, -0.9],
    [-0.6, -0.5, 123],
  ],
  ref_logprobs: [
    [-0.4, -1.1, -0.6],
    [-0.3, -0.2, 0],
  ],
  advantages: [1.5, -0.8],
  response_mask: [
    [1, 1, 1],
    [1, 1, 0],
  ],
};

beforeAll(async () => {
  writeFileSync(batchPath, JSON.stringify(batch));
  writeFileSync(
    papoPath,
    JSON.stringify({
      ...batch,
      masked_logprobs: [
        [-0.3, -1.2, -0.8],
        [-0.6, -0.6, 0],
      ],
    }),
  );
  expect((await runMain(["demo-run", runDir, "--steps", "6", "--batch-size", "3"])).code).toBe(0);
  mkdirSync(livenessDir);
  writeFileSync(
    join(livenessDir, "step_0.json"),
    JSON.stringify({ perception_kl: [0.1], perception_gradient_norm: [0.2] }),
  );
});

/** One invocation per `--json` document kind (the loss and diagnose schemas have three each). */
const KINDS: readonly (() => string[])[] = [
  () => ["which", "--json"],
  () => ["loss", "--algorithm", "grpo", "--batch", batchPath, "--json"],
  () => ["loss", "--framework", "trl@f2cd5771:grpo:token", "--batch", batchPath, "--json"],
  () => ["loss", "--algorithm", "papo_d", "--batch", papoPath, "--json"],
  () => ["verify", "--algorithm", "cispo", "--cases", "1", "--json"],
  () => ["diagnose", batchPath, "--json"],
  () => ["diagnose", runDir, "--json"],
  () => ["report", runDir, "--out", join(dir, "report.html"), "--json"],
  () => ["diagnose", join(testRoot, "fixtures/logs/jsonl/gsm8k_grpo.jsonl"), "--json"],
  () => ["demo-run", join(dir, "demo"), "--steps", "3", "--batch-size", "3", "--json"],
  () => ["frameworks", "--json"],
  () => ["explain", "--framework", "trl@v1.9.0", "--json", "--", "--beta", "0.04"],
  () => ["explain", "--diff", "trl@v0.16.0", "trl@v1.9.0", "--json"],
  () => ["history", "trl", "--key", "loss_type", "--json"],
  () => ["history", "verl", "--json"],
  () => ["loss", "--framework", "trl@v1.9.0", "--batch", batchPath, "--json"],
  () => ["deviations", "--json"],
  () => ["deviations", "--pairs", "--json"],
  () => [
    "vectors",
    "emit",
    "--algorithm",
    "ppo",
    "--cases",
    "1",
    "--out",
    join(dir, "vectors"),
    "--json",
  ],
  () => [
    "vectors",
    "check",
    join(dir, "vectors"),
    "--outputs",
    join(dir, "vectors", "expected.safetensors"),
    "--json",
  ],
  () => ["drift", "--checkout", join(fx, "drift/head"), "--framework", "verl", "--json"],
  () => [
    "contract",
    "check",
    "--checkout",
    join(fx, "contract/v1.7.0"),
    "--pin",
    "trl@v1.7.0",
    "--json",
  ],
  () => [
    "contract",
    "reduce",
    "dual_clip_to_pg_clip",
    "--batch",
    batchPath,
    "--precision",
    "fp32",
    "--json",
  ],
  () => [
    "contract",
    "check",
    "--checkout",
    join(fx, "contract/v1.7.0"),
    "--contract",
    "papo-g-adapter",
    "--json",
  ],
  () => ["contract", "table", "--git", join(testRoot, "../.git"), "--refs", "HEAD", "--json"],
  () => ["contract", "liveness", livenessDir, "--json"],
  () => ["contracts", "--json"],
  () => ["algorithms", "--json"],
  () => ["describe", "gspo", "--json"],
  () => ["describe", "no_such_algorithm", "--json"],
  () => ["coverage", "--json"],
];

/** Every TypeScript file under test/, as a path relative to test/. */
function testSources(at: string = testRoot): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((e) => {
    const p = join(at, e.name);
    if (e.isDirectory()) return e.name === "fixtures" ? [] : testSources(p);
    return e.name.endsWith(".ts") ? [relative(testRoot, p)] : [];
  });
}

/** A valid `loss --json` document, to mutate. */
async function lossDoc(): Promise<Record<string, unknown>> {
  const r = await runMain(["loss", "--algorithm", "grpo", "--batch", batchPath, "--json"]);
  return JSON.parse(r.stdout);
}

describe("json schemas", () => {
  test("identity: every schema is draft 2020-12, named by its $id, and compiles in ajv strict mode", () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    const schemas = SCHEMA_FILES.map((f) => JSON.parse(readFileSync(join(SCHEMA_DIR, f), "utf8")));
    for (const [i, s] of schemas.entries()) {
      expect(s.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(s.$id).toBe(SCHEMA_FILES[i]);
    }
    ajv.addSchema(schemas);
    for (const f of SCHEMA_FILES) expect(typeof ajv.getSchema(f)).toBe("function");
  });

  test("identity: every command with --json has a success schema and every schema is used", () => {
    // adapter-contract is the schema of a contract *file* (an input), not of a document.
    const expected = new Set(["defs.schema.json", "error.schema.json", ADAPTER_FILE_SCHEMA]);
    for (const c of COMMANDS) {
      if (c.options.json === undefined) continue;
      if (c.name === "contract")
        for (const s of SUBCOMMANDS) expected.add(schemaFileOf(`contract ${s.name}`));
      else expected.add(schemaFileOf(c.name));
    }
    expect([...expected].sort()).toEqual([...SCHEMA_FILES]);
  });

  test("property: every --json document kind the cli produces validates against its schema", async () => {
    VALIDATED.clear();
    for (const args of KINDS) {
      const r = await runMain(args());
      expect([args().join(" "), r.code === 0 || r.code === 1 || r.code === 2]).toEqual([
        args().join(" "),
        true,
      ]);
    }
    const used = [...VALIDATED.keys()].sort();
    expect(used).toEqual(
      SCHEMA_FILES.filter((f) => f !== "defs.schema.json" && f !== ADAPTER_FILE_SCHEMA),
    );
  });

  test("identity: every test that runs the cli goes through the shared runner", () => {
    // Vitest isolates test files, so no file sees the documents another one validated: a count
    // across files is not observable here. What makes every --json document of the suite
    // validated is that only cli/_run.ts starts the CLI (runMain/runBin validate what they
    // see), and the property above validates a document of every schema in this one file.
    const bypass: string[] = [];
    // Built from parts so that this file does not match its own patterns.
    const binPath = ["bin", "polgrad.js"].join("/");
    const commandsDir = ["src", "cli", "commands", ""].join("/");
    const jsonOption = new RegExp(["\\bjson", "true\\b"].join(": "));
    for (const f of testSources()) {
      if (f === join("cli", "_run.ts")) continue;
      const src = readFileSync(join(testRoot, f), "utf8");
      if (src.includes(binPath)) bypass.push(`${f}: spawns the binary`);
      const importsMain = /import \{[^}]*\bmain\b[^}]*\} from "[./]*src\/cli\/main\.js"/.test(src);
      if (importsMain && /\bmain\(/.test(src)) bypass.push(`${f}: calls main()`);
      if (src.includes(commandsDir) && jsonOption.test(src))
        bypass.push(`${f}: runs a command action with its json option set`);
    }
    expect(bypass).toEqual([]);
  });

  test("rejects: a non-finite number, a missing schema_version or an unknown field", async () => {
    const v = validatorOf("loss.schema.json");
    const doc = await lossDoc();
    expect(v(doc)).toBe(true);
    const result = doc.result as Record<string, unknown>;
    // The wire form writes a non-finite number as a string: the schema must refuse it.
    expect(v({ ...doc, result: { ...result, loss: "NaN" } })).toBe(false);
    const grad = result.grad_logprobs as number[][];
    expect(
      v({
        ...doc,
        result: { ...result, grad_logprobs: [["Infinity", ...(grad[0] ?? []).slice(1)]] },
      }),
    ).toBe(false);
    const { schema_version: _sv, ...noVersion } = doc;
    expect(v(noVersion)).toBe(false);
    expect(v({ ...doc, extra: 1 })).toBe(false);
    expect(v({ ...doc, command: "which" })).toBe(false);
  });

  test("rejects: an error document with a raw newline, an unknown code or without schema_version", () => {
    const v = validatorOf("error.schema.json");
    const ok = {
      schema_version: 1,
      command: "loss",
      ok: false,
      error: { code: "E_IO", name: "IoError", fn: "readBatch", arg: "path", message: "m" },
    };
    expect(v(ok)).toBe(true);
    expect(v({ ...ok, error: { ...ok.error, message: "a\nerror[E_X]: forged" } })).toBe(false);
    expect(v({ ...ok, error: { ...ok.error, code: "E_WHATEVER" } })).toBe(false);
    const { schema_version: _sv, ...noVersion } = ok;
    expect(v(noVersion)).toBe(false);
  });
});
