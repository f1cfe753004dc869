/**
 * `polgrad vectors emit|check` (docs/vectors.md): write language-neutral conformance vectors for a
 * reference (inputs.safetensors, expected.safetensors, manifest.json), and check an author's
 * outputs against them. Exit: 0 conforms (or written), 1 does not conform, 2 bad input.
 */
import { fmtValue } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { Command, CommandIO, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";

const FN = "polgrad vectors";

function usage(arg: string, rule: string, got: unknown): UsageError {
  return fail(UsageError, FN, arg, rule, typeof got === "string" ? fmtValue(got) : String(got));
}

function shapesOption(raw: unknown): [number, number][] | undefined {
  if (raw === undefined) return undefined;
  const parts = typeof raw === "string" ? raw.split(",").map((s) => s.trim()) : [];
  const out = parts.map((p) => {
    const m = /^(\d+)x(\d+)$/.exec(p);
    return m === null ? null : ([Number(m[1]), Number(m[2])] as [number, number]);
  });
  if (parts.length === 0 || out.some((x) => x === null))
    throw usage("--shapes", "a comma-separated list of BxT (e.g. 4x8,2x12)", raw);
  return out as [number, number][];
}

function numberOption(values: OptionValues, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const v = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(v) || v < 0) throw usage(`--${name}`, "a finite number >= 0", raw);
  return v;
}

async function emit(values: OptionValues, io: CommandIO): Promise<number> {
  const refs = ["algorithm", "framework", "config"].filter((k) => values[k] !== undefined);
  if (refs.length !== 1)
    throw usage(
      "--algorithm",
      "exactly one of --algorithm NAME, --framework ID, --config JSON|@file.json",
      refs.length === 0 ? "none" : refs.map((r) => `--${r}`).join(" and "),
    );
  if (typeof values.out !== "string" || values.out === "")
    throw usage("--out", "a folder to write", values.out ?? "nothing");
  let reference: string | import("../../losses/config.js").PolicyLossConfig;
  if (typeof values.config === "string") {
    const { readConfigOption } = await import("./configOption.js");
    reference = (await readConfigOption(FN, values.config, io)).config;
  } else reference = String(values.algorithm ?? values.framework);
  const { emitVectors } = await import("../../conformance/vectors.js");
  const cases = intOption(values, "cases", "vectors");
  const seed = intOption(values, "seed", "vectors", 0);
  const normLen = intOption(values, "norm-len", "vectors");
  const shapes = shapesOption(values.shapes);
  const lossRtol = numberOption(values, "loss-rtol");
  const gradRtol = numberOption(values, "grad-rtol");
  const v = emitVectors(reference, {
    ...(cases === undefined ? {} : { cases }),
    ...(seed === undefined ? {} : { seed }),
    ...(normLen === undefined ? {} : { normLen }),
    ...(shapes === undefined ? {} : { shapes }),
    ...(lossRtol === undefined ? {} : { lossRtol }),
    ...(gradRtol === undefined ? {} : { gradRtol }),
  });
  const { mkdirSync } = await import("node:fs");
  const { fsPath } = await import("../../platform/fsPath.js");
  const { join } = await import("node:path");
  const { createHash } = await import("node:crypto");
  const { encodeSafetensors } = await import("../../io/writeSafetensors.js");
  const dir = values.out;
  try {
    mkdirSync(fsPath(dir), { recursive: true });
  } catch (e) {
    const { IoError } = await import("../../errors.js");
    throw new IoError(
      FN,
      "--out",
      `${FN}: --out must be a folder polgrad can create; got ${fmtValue(dir)} (${(e as Error).message})`,
      dir,
    );
  }
  const meta = { format: "polgrad-vectors", names: "<case>.<stream>" };
  const inBytes = encodeSafetensors(v.inputs, meta);
  const exBytes = encodeSafetensors(v.expected, { format: "polgrad-vectors-expected" });
  const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
  const manifest = {
    ...v.manifest,
    inputs: { ...v.manifest.inputs, sha256: sha(inBytes) },
    expected: { ...v.manifest.expected, sha256: sha(exBytes) },
  };
  // File by file, each written whole beside its name and renamed onto it, the manifest last: a
  // write that fails leaves every file complete, and a set whose data files are new and whose
  // manifest is old fails its SHA-256 check (docs/cli.md#writing-files).
  const { writeFileBytes } = await import("../../io/_internal/writeFile.js");
  writeFileBytes(FN, join(dir, "inputs.safetensors"), inBytes);
  writeFileBytes(FN, join(dir, "expected.safetensors"), exBytes);
  writeFileBytes(
    FN,
    join(dir, "manifest.json"),
    new TextEncoder().encode(`${JSON.stringify(manifest, null, 1)}\n`),
  );
  const summary = {
    dir,
    files: ["manifest.json", "inputs.safetensors", "expected.safetensors"],
    cases: manifest.cases.length,
    reference: manifest.reference,
    streams: manifest.inputs.streams,
  };
  if (values.json) writeJson(io, "vectors", { emit: summary });
  else
    io.stdout(
      `${[
        `wrote ${manifest.cases.length} cases to ${dir}: manifest.json, inputs.safetensors (${manifest.inputs.streams.join(", ")}), expected.safetensors`,
        ...manifest.reference.notes,
        `next: compute <case>.loss and <case>.grad_logprobs for every case (docs/vectors.md), then polgrad vectors check ${dir} --outputs FILE`,
      ].join("\n")}\n`,
    );
  return 0;
}

async function check(
  values: OptionValues,
  args: readonly string[],
  io: CommandIO,
): Promise<number> {
  const dir = args[0];
  if (dir === undefined)
    throw usage("DIR", "the vectors folder (from polgrad vectors emit)", "nothing");
  if (typeof values.outputs !== "string")
    throw usage(
      "--outputs",
      "the file with your <case>.loss and <case>.grad_logprobs",
      values.outputs ?? "nothing",
    );
  const { readFileSync } = await import("node:fs");
  const { fsPath } = await import("../../platform/fsPath.js");
  const { join } = await import("node:path");
  const { createHash } = await import("node:crypto");
  const { IoError } = await import("../../errors.js");
  const read = (name: string): Uint8Array => {
    try {
      return readFileSync(fsPath(join(dir, name)));
    } catch (e) {
      throw new IoError(
        FN,
        "DIR",
        `${FN}: DIR must hold ${name}; got ${fmtValue(dir)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        join(dir, name),
      );
    }
  };
  const { parseJsonText } = await import("../../io/_internal/jsonText.js");
  const manifest = parseJsonText(
    FN,
    new TextDecoder().decode(read("manifest.json")),
    join(dir, "manifest.json"),
  ) as import("../../conformance/vectors.js").VectorsManifest;
  const { parseSafetensors } = await import("../../io/safetensors.js");
  const { readTensors } = await import("../../io/readTensors.js");
  const file = (f: { file: string; sha256: string } | undefined, what: string) => {
    if (f === undefined || typeof f.file !== "string")
      throw usage("DIR", `a folder whose manifest.json names its ${what} file`, dir);
    const bytes = read(f.file);
    const got = createHash("sha256").update(bytes).digest("hex");
    if (got !== f.sha256)
      throw new IoError(
        FN,
        "DIR",
        `${FN}: ${f.file} must have the sha256 manifest.json records (${f.sha256}); got ${got} (the folder was changed after emit)`,
        join(dir, f.file),
      );
    return parseSafetensors(bytes, join(dir, f.file));
  };
  const inputs = file(manifest?.inputs, "inputs");
  const expected = file(manifest?.expected, "expected");
  const outputs = readTensors(values.outputs);
  const { checkVectors } = await import("../../conformance/vectors.js");
  const r = checkVectors(manifest, inputs, expected, outputs);
  if (values.json) writeJson(io, "vectors", { check: r });
  else {
    const { renderVectorsText } = await import("../../report/summarize.js");
    io.stdout(`${renderVectorsText(r, { dir, outputs: values.outputs })}\n`);
  }
  return r.conforms ? 0 : 1;
}

/** The `vectors` command. */
export const vectorsCommand: Command = {
  name: "vectors",
  summary:
    "Write language-neutral conformance vectors for a loss (emit), and check your implementation's outputs against them (check).",
  usage:
    "vectors emit --algorithm NAME|--framework ID|--config JSON [--cases N] [--seed S] [--shapes 4x8,2x12] [--norm-len N] [--loss-rtol X] [--grad-rtol X] --out DIR [--json]\n   or: polgrad vectors check DIR --outputs FILE [--json]",
  positionals: 2,
  positionalRoles: [null, "input"],
  options: {
    algorithm: {
      type: "string",
      argument: "NAME",
      description: "emit: a registered algorithm (its policy-loss config)",
    },
    framework: {
      type: "string",
      argument: "ID",
      description: "emit: a framework model id (polgrad frameworks)",
    },
    config: {
      type: "string",
      role: "input",
      argument: "JSON",
      description: "emit: a policy-loss config, inline or @file.json",
    },
    cases: { type: "string", argument: "N", description: "emit: number of cases (default 16)" },
    seed: {
      type: "string",
      argument: "S",
      description: "emit: randomBatches' master seed (default 0)",
    },
    shapes: {
      type: "string",
      argument: "BxT,…",
      description: "emit: the case shapes, cycled (default 4x8,2x12)",
    },
    "norm-len": {
      type: "string",
      argument: "N",
      description: "emit: Dr.GRPO's budget for a token_sum_norm reference without one",
    },
    "loss-rtol": {
      type: "string",
      argument: "X",
      description: "emit: the loss tolerance recorded in the manifest (default 1e-9)",
    },
    "grad-rtol": {
      type: "string",
      argument: "X",
      description: "emit: the gradient tolerance recorded in the manifest (default 1e-9)",
    },
    out: {
      type: "string",
      role: "output",
      argument: "DIR",
      description: "emit: the folder to write",
    },
    outputs: {
      type: "string",
      role: "input",
      argument: "FILE",
      description:
        "check: your <case>.loss and <case>.grad_logprobs (safetensors, npz, npy folder, JSON, pt)",
    },
    json: { type: "boolean", description: "print one JSON document" },
  },
  async run(values, positionals, io) {
    const [word, ...args] = positionals;
    const emitOnly = [
      "algorithm",
      "framework",
      "config",
      "cases",
      "seed",
      "shapes",
      "norm-len",
      "loss-rtol",
      "grad-rtol",
      "out",
    ];
    if (word === "emit") {
      if (values.outputs !== undefined)
        throw usage("--outputs", "used with 'vectors check' only", "it with 'vectors emit'");
      if (args.length > 0) throw usage("emit", "given no positional argument", args[0]);
      return emit(values, io);
    }
    if (word === "check") {
      const wrong = emitOnly.find((k) => values[k] !== undefined);
      if (wrong !== undefined)
        throw usage(`--${wrong}`, "used with 'vectors emit' only", "it with 'vectors check'");
      return check(values, args, io);
    }
    throw usage("SUBCOMMAND", "'emit' or 'check'", word ?? "nothing");
  },
};
