/**
 * Enforces docs/performance.md#loss---out-streamed: `polgrad loss --out` on a safetensors file
 * reads, evaluates and writes the batch a block of rows at a time (lossOutStreamed), and what it
 * prints and writes is byte for byte what the whole-batch path (`--threads 2`, which reads the file
 * whole and allocates the result) prints and writes; wherever a block alone cannot judge (an
 * error anywhere, a config that reads every row first, another format), it declines with nothing
 * printed and nothing written, and the CLI's answer is the whole path's.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { lossOutStreamed } from "../../src/cli/lossOut.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { getAlgorithm } from "../../src/registry/index.js";
import { useTmpDir } from "../io/_kit.js";
import { capturedIO, runMain } from "./_run.js";

const tmp = useTmpDir();

/** A deterministic uniform on [0, 1) (a 32-bit LCG; the cases only need variety, not quality). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Dtype = "F64" | "F32" | "BF16" | "BOOL" | "U8";

interface Case {
  readonly label: string;
  /** The CLI's config arguments. */
  readonly args: readonly string[];
  /** The config lossOutStreamed is called with (what the args resolve to). */
  readonly config: PolicyLossConfig;
  readonly B: number;
  readonly T: number;
  readonly names: "polgrad" | "verl" | "verl-attention";
  readonly lpDtype: Dtype;
  readonly maskDtype: Dtype;
  readonly tokenAdvantages: boolean;
  readonly emptyRow: boolean;
  readonly extra: readonly string[];
  /** Old log-probabilities above 0 at some response positions, in several blocks (a warning). */
  readonly positiveOld?: boolean;
  /** Rows per block in the direct call (positions = rows·T). */
  readonly blockRows: number;
}

/** Write a random ragged batch of `c` (with holes and junk at padding) and return its path. */
function writeCase(dir: string, c: Case, seed: number): string {
  const u = rng(seed);
  const { B, T } = c;
  const n = B * T;
  const lp = new Float64Array(n);
  const old = new Float64Array(n);
  const ref = new Float64Array(n);
  const mask = new Uint8Array(n);
  const adv = new Float64Array(c.tokenAdvantages ? n : B);
  for (let b = 0; b < B; b++) {
    if (!c.tokenAdvantages) adv[b] = 2 * u() - 1;
    const L = c.emptyRow && b === B - 1 ? 0 : 1 + Math.floor(u() * T);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (t < L) {
        mask[i] = t > 0 && u() < 0.1 ? 0 : 1;
        old[i] = -0.5 - 3 * u();
        lp[i] = old[i] + 0.8 * (u() - 0.5);
        ref[i] = old[i] + 0.2 * (u() - 0.5);
        if (c.tokenAdvantages) adv[i] = 2 * u() - 1;
        // polgrad's README batches: old = lp + 0.1·noise, so some are above 0.
        if (c.positiveOld === true && u() < 0.2) old[i] = 0.01 + 0.1 * u();
      } else {
        // Padding: junk (finite, to be written by any dtype; never read).
        lp[i] = 5 * u();
        old[i] = 7;
        ref[i] = -3;
      }
    }
  }
  const verl = c.names !== "polgrad";
  const m = (data: Float64Array | Uint8Array, dtype: Dtype, shape = [B, T]) => ({
    dtype,
    shape,
    data,
  });
  const tensors: Record<string, ReturnType<typeof m>> = {};
  tensors[verl ? "log_probs" : "logprobs"] = m(lp, c.lpDtype);
  tensors[verl ? "old_log_probs" : "old_logprobs"] = m(old, c.lpDtype);
  tensors[verl ? "ref_log_prob" : "ref_logprobs"] = m(ref, "F64");
  tensors.advantages = m(adv, "F64", c.tokenAdvantages ? [B, T] : [B]);
  if (c.names === "verl-attention") {
    // No response_mask: attention_mask over prompt (3 columns of 1) + response, cut with --response-slice last.
    const att = new Uint8Array(B * (T + 3));
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T + 3; t++) att[b * (T + 3) + t] = t < 3 ? 1 : (mask[b * T + t - 3] ?? 0);
    tensors.attention_mask = m(att, c.maskDtype === "F64" ? "F64" : "U8", [B, T + 3]);
  } else {
    tensors.response_mask = m(
      c.maskDtype === "BOOL" || c.maskDtype === "U8" ? mask : Float64Array.from(mask),
      c.maskDtype,
    );
  }
  // Tensors the batch does not use: one by rows, one not (a notice names them).
  for (const x of c.extra) {
    if (x === "rows") tensors.unused_rows = m(new Float64Array(B * 2).fill(1.5), "F32", [B, 2]);
    if (x === "scalar") tensors.unused_scalar = m(Float64Array.of(3), "F64", []);
  }
  const path = join(dir, `${c.label}.safetensors`);
  writeSafetensors(path, tensors);
  return path;
}

const KL_CONFIG: PolicyLossConfig = {
  ...getAlgorithm("dapo").loss,
  kl: { kind: "k3", coef: 0.1 },
} as PolicyLossConfig;
const KL_JSON =
  '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.28},"aggregation":"token_mean","kl":{"kind":"k3","coef":0.1}}';

function cases(): Case[] {
  const base = {
    names: "polgrad" as const,
    lpDtype: "F64" as Dtype,
    maskDtype: "BOOL" as Dtype,
    tokenAdvantages: false,
    emptyRow: false,
    extra: [] as string[],
  };
  const algo = (name: string) => ({
    args: ["--algorithm", name],
    config: getAlgorithm(name).loss,
  });
  return [
    {
      ...base,
      ...algo("dapo"),
      label: "dapo-one-row-blocks",
      B: 9,
      T: 37,
      blockRows: 1,
      positiveOld: true,
    },
    {
      ...base,
      ...algo("grpo"),
      label: "grpo-f32-u8",
      B: 13,
      T: 50,
      blockRows: 4,
      lpDtype: "F32",
      maskDtype: "U8",
    },
    {
      ...base,
      ...algo("gspo"),
      label: "gspo-bf16-f64mask",
      B: 8,
      T: 21,
      blockRows: 3,
      lpDtype: "BF16",
      maskDtype: "F64",
    },
    {
      ...base,
      ...algo("cispo"),
      label: "cispo-token-adv",
      B: 6,
      T: 40,
      blockRows: 5,
      tokenAdvantages: true,
    },
    {
      ...base,
      args: ["--algorithm", "dr_grpo", "--norm-len", "64"],
      config: { ...getAlgorithm("dr_grpo").loss, normLen: 64 },
      label: "drgrpo-verl-extra",
      B: 11,
      T: 17,
      blockRows: 2,
      names: "verl",
      extra: ["rows", "scalar"],
      positiveOld: true,
    },
    {
      ...base,
      ...algo("dapo"),
      label: "dapo-verl-attention",
      B: 7,
      T: 12,
      blockRows: 3,
      names: "verl-attention",
    },
    {
      ...base,
      args: ["--config", KL_JSON],
      config: KL_CONFIG,
      label: "kl-k3",
      B: 10,
      T: 30,
      blockRows: 4,
    },
    { ...base, ...algo("dapo"), label: "one-row", B: 1, T: 1, blockRows: 1 },
    { ...base, ...algo("dapo"), label: "whole-in-one-block", B: 5, T: 9, blockRows: 100 },
  ];
}

function namesOf(c: Case): { args: string[]; options: Record<string, unknown> } {
  if (c.names === "verl-attention")
    return { args: ["--response-slice", "last"], options: { responseSlice: "last" } };
  return { args: [], options: {} };
}

describe("lossOutStreamed", () => {
  test("identity: the streamed file, JSON and text are byte for byte the whole-batch path's, across dtypes, name maps, configs and block sizes", async () => {
    const dir = tmp("streamed");
    mkdirSync(dir, { recursive: true });
    let seed = 11;
    for (const c of cases()) {
      const batch = writeCase(dir, c, seed++);
      const names = namesOf(c);
      for (const json of [true, false]) {
        const tag = `${c.label}${json ? "-json" : "-text"}`;
        const streamedFile = join(dir, `${tag}-streamed.safetensors`);
        const wholeFile = join(dir, `${tag}-whole.safetensors`);
        // The direct call, with small blocks: it must take the rows (not decline).
        const { out, io } = capturedIO();
        const code = await lossOutStreamed(
          { json, out: streamedFile },
          io,
          c.config,
          c.args[0] === "--algorithm" ? `algorithm ${c.args[1]}` : "--config",
          batch,
          names.options,
          streamedFile,
          undefined,
          c.blockRows * c.T,
        );
        expect(code, tag).toBe(0);
        // The CLI (its own block size) and the whole path.
        const cli = join(dir, `${tag}-cli.safetensors`);
        const common = [
          "loss",
          ...c.args,
          "--batch",
          batch,
          ...names.args,
          // Unwrapped: the file names differ in length, so wrapped lines would break apart.
          ...(json ? ["--json"] : ["--wide"]),
        ];
        const viaCli = await runMain([...common, "--out", cli]);
        const whole = await runMain([...common, "--out", wholeFile, "--threads", "2"]);
        expect(whole.code, `${tag}: ${whole.stderr}`).toBe(0);
        expect(viaCli.code, tag).toBe(0);
        const bytes = readFileSync(wholeFile);
        expect(readFileSync(streamedFile).equals(bytes), `${tag} file (direct)`).toBe(true);
        expect(readFileSync(cli).equals(bytes), `${tag} file (cli)`).toBe(true);
        expect(viaCli.stdout.replaceAll(cli, "F"), tag).toBe(
          whole.stdout.replaceAll(wholeFile, "F"),
        );
        expect(viaCli.stderr, tag).toBe(whole.stderr);
        // The warning of a log-probability above 0: counted over every block, once.
        expect(whole.stderr.split("value(s) > 0").length - 1, tag).toBe(c.positiveOld ? 1 : 0);
        if (!json) {
          // The direct call's text names its source as the CLI's does for an algorithm.
          if (c.args[0] === "--algorithm")
            expect(out.stdout.replaceAll(streamedFile, "F"), tag).toBe(
              whole.stdout.replaceAll(wholeFile, "F"),
            );
        }
        expect(out.stderr, tag).toBe(whole.stderr);
      }
    }
    expect(readdirSync(dir).filter((f) => f.includes("polgrad-partial"))).toEqual([]);
  });

  test("identity: empty rows counted or dropped and a global token count give the whole path's bits", async () => {
    const dir = tmp("streamed-empty");
    mkdirSync(dir, { recursive: true });
    const c: Case = {
      label: "empty",
      args: [],
      config: getAlgorithm("grpo").loss,
      B: 9,
      T: 25,
      names: "polgrad",
      lpDtype: "F64",
      maskDtype: "BOOL",
      tokenAdvantages: false,
      emptyRow: true,
      extra: [],
      blockRows: 2,
    };
    const batch = writeCase(dir, c, 5);
    for (const [label, config, flags] of [
      [
        "count",
        '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2},"aggregation":"seq_mean_token_mean","empty_rows":"count"}',
        [],
      ],
      [
        "drop",
        '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2},"aggregation":"seq_mean_token_mean","empty_rows":"drop"}',
        [],
      ],
      [
        "drop-token-mean",
        '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2},"aggregation":"token_mean","empty_rows":"drop"}',
        [],
      ],
      [
        "global",
        '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2},"aggregation":"token_mean","empty_rows":"count"}',
        ["--global-tokens", "1000", "--dp-size", "4"],
      ],
      [
        "global-rows",
        '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2},"aggregation":"seq_mean_token_sum","empty_rows":"count"}',
        ["--global-rows", "40"],
      ],
    ] as const) {
      const a = join(dir, `${label}-streamed.safetensors`);
      const b = join(dir, `${label}-whole.safetensors`);
      const common = ["loss", "--config", config, "--batch", batch, ...flags, "--json"];
      const streamed = await runMain([...common, "--out", a]);
      const whole = await runMain([...common, "--out", b, "--threads", "2"]);
      expect(whole.code, `${label}: ${whole.stderr}`).toBe(0);
      expect(streamed.code, label).toBe(0);
      expect(readFileSync(a).equals(readFileSync(b)), label).toBe(true);
      expect(streamed.stdout.replaceAll(a, "F"), label).toBe(whole.stdout.replaceAll(b, "F"));
    }
  });

  test("rejects: anything a block cannot judge alone is declined with nothing printed or written, and the CLI gives the whole path's answer", async () => {
    const dir = tmp("streamed-decline");
    mkdirSync(dir, { recursive: true });
    const B = 6;
    const T = 10;
    const n = B * T;
    const good = () => ({
      logprobs: new Float64Array(n).fill(-1.2),
      old_logprobs: new Float64Array(n).fill(-1),
      advantages: Float64Array.from({ length: B }, (_, b) => b - 2.5),
      response_mask: new Uint8Array(n).fill(1),
    });
    const write = (label: string, t: ReturnType<typeof good>, maskDtype: Dtype = "BOOL") => {
      const path = join(dir, `${label}.safetensors`);
      writeSafetensors(path, {
        logprobs: { dtype: "F64", shape: [B, T], data: t.logprobs },
        old_logprobs: { dtype: "F64", shape: [B, T], data: t.old_logprobs },
        advantages: { dtype: "F64", shape: [B], data: t.advantages },
        response_mask: {
          dtype: maskDtype,
          shape: [B, T],
          data: maskDtype === "F64" ? Float64Array.from(t.response_mask) : t.response_mask,
        },
      });
      return path;
    };
    const last = n - 1;
    // [label, batch, config, strict]: strict adds --strict (names option strict) to both runs.
    const declined: [string, string, string, boolean?][] = [];
    {
      const t = good();
      t.logprobs[last] = 0.5; // a log-probability above 0 in the last block: strict, an error
      declined.push([
        "positive-logprob-strict",
        write("positive", t),
        '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
        true,
      ]);
    }
    {
      const t = good();
      t.logprobs[last] = Number.NaN; // a non-finite value in the last block
      declined.push([
        "nan",
        write("nan", t),
        '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
      ]);
    }
    {
      const t = good();
      const m = Float64Array.from(t.response_mask);
      m[last] = 2; // a mask value other than 0/1 in the last block
      const path = join(dir, "mask2.safetensors");
      writeSafetensors(path, {
        logprobs: { dtype: "F64", shape: [B, T], data: t.logprobs },
        old_logprobs: { dtype: "F64", shape: [B, T], data: t.old_logprobs },
        advantages: { dtype: "F64", shape: [B], data: t.advantages },
        response_mask: { dtype: "F64", shape: [B, T], data: m },
      });
      declined.push([
        "mask-2",
        path,
        '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
      ]);
    }
    {
      const t = good();
      t.response_mask.fill(0, (B - 1) * T); // an empty last row, rejected by default
      declined.push([
        "empty-row",
        write("empty", t),
        '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
      ]);
    }
    {
      const t = good();
      t.old_logprobs[last] = -800; // ratio e^798.8 under pg: the objective overflows
      declined.push([
        "overflow",
        write("overflow", t),
        '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
      ]);
    }
    // A config whose plan reads every row first: the top-entropy mask needs the entropies' quantile.
    declined.push([
      "whole-batch-config",
      write("entropy", good()),
      '{"ratio":"token","surrogate":"pg","aggregation":"token_mean","top_entropy_quantile":0.5}',
    ]);
    // Another format: a JSON batch.
    const jsonBatch = join(dir, "batch.json");
    writeFileSync(
      jsonBatch,
      JSON.stringify({
        logprobs: [[-1.2, -1]],
        old_logprobs: [[-1, -1]],
        advantages: [1],
        response_mask: [[1, 1]],
      }),
    );
    declined.push([
      "json-file",
      jsonBatch,
      '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
    ]);
    declined.push([
      "missing-file",
      join(dir, "nope.safetensors"),
      '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}',
    ]);
    const { parsePolicyLossConfig } = await import("../../src/io/configJson.js");
    for (const [label, batch, config, strict] of declined) {
      const file = join(dir, `${label}-out.safetensors`);
      const { out, io } = capturedIO();
      const code = await lossOutStreamed(
        { json: true, out: file },
        io,
        parsePolicyLossConfig(JSON.parse(config), "--config"),
        "--config",
        batch,
        strict === true ? { strict: true } : {},
        file,
        undefined,
        2 * T,
      );
      expect(code, label).toBeNull();
      expect(out, label).toEqual({ stdout: "", stderr: "" });
      expect(existsSync(file), label).toBe(false);
      // Through the CLI: exactly the whole path's answer (an error, or for the JSON file a result).
      const a = join(dir, `${label}-cli.safetensors`);
      const b = join(dir, `${label}-whole.safetensors`);
      const loss = (out: string, ...extra: string[]) =>
        runMain([
          "loss",
          "--config",
          config,
          "--batch",
          batch,
          "--out",
          out,
          ...extra,
          ...(strict === true ? ["--strict"] : []),
          "--json",
        ]);
      const cli = await loss(a);
      const whole = await loss(b, "--threads", "2");
      expect(cli.code, label).toBe(whole.code);
      expect(cli.stderr, label).toBe(whole.stderr);
      expect(cli.stdout.replaceAll(a, "F"), label).toBe(whole.stdout.replaceAll(b, "F"));
      if (whole.code === 0) expect(readFileSync(a).equals(readFileSync(b)), label).toBe(true);
      else expect(existsSync(a), label).toBe(false);
    }
    expect(readdirSync(dir).filter((f) => f.includes("polgrad-partial"))).toEqual([]);
  });
});
