/**
 * Enforces docs/fuzz.md in the quick profile: a seeded fuzzer over every reader of
 * TENSOR_READERS, the JSON batch path, the config JSON, run folders, Python sources and the CLI
 * argument space. Every input ends in a result or a typed error (a PolgradError); anything else
 * (another exception, a non-finite number computed from finite input, a broken CLI contract) is
 * listed with the input that caused it. The long campaign is `npm run fuzz` (scripts/fuzz.mjs).
 * POLGRAD_FUZZ_RUNS scales the number of inputs per target (default 1 = the quick profile).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { beforeAll, describe, expect, test } from "vitest";
import {
  classify,
  type FuzzTarget,
  inputOf,
  makeTargets,
  mutateBytes,
  nonFiniteNumbers,
  prng,
} from "../../scripts/fuzz/targets.mjs";
import { IoError } from "../../src/errors.js";
import { TENSOR_READERS } from "../../src/io/readers.js";
import { SRC_API } from "./api.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const scale = Number(process.env.POLGRAD_FUZZ_RUNS ?? "1") || 1;
let targets: FuzzTarget[];

beforeAll(() => {
  targets = makeTargets(SRC_API, { root, scratch: mkdtempSync(join(tmpdir(), "polgrad-fuzz-")) });
});

/** Fuzz one target with `runs` seeded inputs; resolve to the anomalies (input preview, outcome). */
async function fuzz(name: string, runs: number, seed: number): Promise<string[]> {
  const t = targets.find((x) => x.name === name);
  if (t === undefined) throw new Error(`no fuzz target ${name}`);
  const draws = fc.sample(
    fc.tuple(fc.nat({ max: t.seeds.length - 1 }), fc.nat({ max: 2 ** 31 - 1 })),
    { seed, numRuns: Math.round(runs * scale) },
  );
  const anomalies: string[] = [];
  for (const [s, m] of draws) {
    const input = t.mutate(prng(m), t.seeds[s]);
    const o = await t.run(input);
    if (o.kind === "other")
      anomalies.push(`seed ${s} mutation ${m} (${t.size(input)} bytes): ${o.detail}`);
  }
  return anomalies;
}

describe("fuzz", () => {
  test("rejects: an untyped exception, a non-finite result and a broken contract are anything else", () => {
    expect(classify(SRC_API, { threw: true, error: new TypeError("x is null") })).toMatchObject({
      kind: "other",
    });
    expect(classify(SRC_API, { threw: true, error: new IoError("f", "a", "m") })).toEqual({
      kind: "typed",
      code: "E_IO",
    });
    expect(nonFiniteNumbers({ loss: 1, grad: new Float64Array([0, Number.NaN]) })).toEqual([
      "/grad[1] = NaN",
    ]);
    expect(nonFiniteNumbers({ result: { ratio: [["Infinity"]] } })).toEqual([
      '/result/ratio/0/0 = "Infinity"',
    ]);
    expect(classify(SRC_API, { threw: false, violations: ["exit code 70"] })).toMatchObject({
      kind: "other",
    });
  });

  test("regression: mutations never write into their input, even a node buffer whose slice is a view", () => {
    // Seeds read with readFileSync are Buffers, and Buffer#slice() shares memory: a bit flip or a
    // length-field edit on `b.slice()` used to rewrite the seed itself, so that input i of a
    // campaign depended on the inputs run before it in the same process (and --dump disagreed).
    const seed = Buffer.from("x = (1, 2)\n# a python seed of some length for the mutations\n");
    const copy = Uint8Array.from(seed);
    const rand = prng(7);
    for (let k = 0; k < 2000; k++) mutateBytes(rand, seed, [seed]);
    expect(Uint8Array.from(seed)).toEqual(copy);
  });

  test("property: every reader of TENSOR_READERS ends in a tensor set or a typed error", async () => {
    expect(TENSOR_READERS.length).toBeGreaterThanOrEqual(2);
    for (const r of TENSOR_READERS)
      expect({ reader: r.format, anomalies: await fuzz(`reader:${r.format}`, 300, 11) }).toEqual({
        reader: r.format,
        anomalies: [],
      });
  });

  test("property: a mutated json batch gives a finite loss or a typed error", async () => {
    expect(await fuzz("json batch (tensorsFromJson + toBatch + policyLoss)", 300, 12)).toEqual([]);
  });

  test("property: a mutated config json gives a finite loss or a typed error", async () => {
    expect(await fuzz("config json (parsePolicyLossConfig + policyLoss)", 300, 13)).toEqual([]);
  });

  test("property: a run folder with mutated step files gives a finite diagnosis or a typed error", async () => {
    expect(await fuzz("run folder (diagnoseRun)", 30, 14)).toEqual([]);
  });

  test("property: mutated python sources give definitions or a typed error", async () => {
    expect(await fuzz("python source (extractDefinitions)", 25, 15)).toEqual([]);
  });

  test("property: a mutated framework config (TRL, verl, OpenRLHF; YAML, JSON, arguments) gives a finite loss or a typed error", async () => {
    expect(
      await fuzz("framework config (resolveFrameworkConfig + evaluateResolution)", 400, 17),
    ).toEqual([]);
  });

  test("property: a mutated safetensors batch streamed by loss --out declines or gives the whole path's file and document", async () => {
    expect(
      await fuzz("loss --out streamed (lossOutStreamed against the whole path)", 150, 18),
    ).toEqual([]);
  });

  test("property: random command lines keep the cli contract", async () => {
    expect(await fuzz("cli argv (main)", 150, 16)).toEqual([]);
  });

  test("property: the metric-log parsers (TensorBoard, JSONL, trainer_state, W&B, detection) end in a metric log that keeps its contract or a typed error", async () => {
    const names = targets.filter((t) => t.name.startsWith("metric log ")).map((t) => t.name);
    expect(names.length).toBe(5);
    for (const name of names)
      expect({ name, anomalies: await fuzz(name, 300, 19) }).toEqual({ name, anomalies: [] });
  });
});

describe("fuzz campaign inputs", () => {
  test("regression: a source with a syntax error cannot change the answer for a later source (inputs 56 and 114 of seed 1)", async () => {
    // With one tree-sitter runtime shared by every parse, campaign input 56 (2,062 bytes, a syntax
    // error at line 52) corrupted the module heap, and input 114 (1,000,000 bytes) then faulted
    // with "memory access out of bounds"; alone, 114 parses. Each source now gets its own runtime.
    const at = targets.findIndex((t) => t.name.startsWith("python source"));
    const t = targets[at] as FuzzTarget<Uint8Array>;
    // The campaign ran with two readers registered (safetensors, json); a target's inputs are
    // seeded by its index then, so the reader targets added since are subtracted.
    const readers = targets.filter((x) => x.name.startsWith("reader:")).length;
    const ti = at - (readers - 2);
    const [i56, i114] = [inputOf(t, 1, ti, 56), inputOf(t, 1, ti, 114)];
    expect([i56.length, i114.length]).toEqual([2062, 1_000_000]);
    const alone = await t.run(i114);
    expect(await t.run(i56)).toEqual({ kind: "typed", code: "E_IO" });
    expect(await t.run(i114)).toEqual(alone);
    expect(alone.kind).not.toBe("other");
  }, 60_000);
});
