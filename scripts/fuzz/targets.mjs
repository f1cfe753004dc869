/**
 * The fuzz targets of polgrad (docs/fuzz.md), shared by the quick seeded suite (test/fuzz/, on
 * src/ through vitest) and the long campaign (scripts/fuzz.mjs, on the built dist/). A target
 * has seed inputs, a mutator and a run; `classify` sorts each outcome into a result, a typed
 * error (a PolgradError) or anything else (another exception, a non-finite number in a result
 * computed from finite input, a broken CLI contract). Every reader of the registry
 * `TENSOR_READERS` is a target, so a reader added later is fuzzed without a change here. The
 * PRNG and the mutation strategies live in mutate.mjs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { contractViolations } from "./contract.mjs";
import { int, MAX_INPUT_BYTES, MUTATIONS, mutateBytes, pick, prng } from "./mutate.mjs";

export { MAX_INPUT_BYTES, MUTATIONS, mutateBytes, prng };

/**
 * Input `i` of target number `ti` (its index in makeTargets' list) in a campaign with `seed`: a
 * deterministic function of the three, so `--dump` and the tests can regenerate any input.
 */
export function inputOf(target, seed, ti, i) {
  const rand = prng(
    (Math.imul(seed, 0x9e3779b1) ^ Math.imul(ti + 1, 0x85ebca6b) ^ Math.imul(i + 1, 0xc2b2ae35)) >>>
      0,
  );
  const s = target.seeds[Math.floor(rand() * target.seeds.length)];
  return i < target.seeds.length ? target.seeds[i] : target.mutate(rand, s);
}

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: false });

/** Every number inside a value, with its path; typed arrays included. */
export function nonFiniteNumbers(value, path = "", out = [], depth = 0) {
  if (out.length >= 5) return out;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) out.push(`${path || "/"} = ${value}`);
  } else if (typeof value === "string") {
    // The wire form writes non-finite numbers as these strings.
    if (value === "NaN" || value === "Infinity" || value === "-Infinity")
      out.push(`${path} = "${value}"`);
  } else if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    for (let i = 0; i < value.length; i++)
      if (!Number.isFinite(Number(value[i]))) out.push(`${path}[${i}] = ${value[i]}`);
  } else if (value !== null && typeof value === "object" && depth < 64) {
    if (value instanceof Map)
      for (const [k, v] of value) nonFiniteNumbers(v, `${path}/${k}`, out, depth + 1);
    else
      for (const [k, v] of Object.entries(value))
        nonFiniteNumbers(v, `${path}/${k}`, out, depth + 1);
  }
  return out.slice(0, 5);
}

/**
 * Sort one outcome: `{ kind: "result" }`, `{ kind: "typed", code }` or `{ kind: "other", detail }`.
 * A result is "other" when `finiteCheck` and it holds a non-finite number.
 */
export function classify(api, outcome) {
  if (outcome.threw) {
    const e = outcome.error;
    if (e instanceof api.PolgradError) return { kind: "typed", code: e.code };
    return {
      kind: "other",
      detail: `${e?.name ?? typeof e}: ${String(e?.message ?? e).slice(0, 300)}`,
    };
  }
  if (outcome.violations?.length > 0)
    return { kind: "other", detail: outcome.violations.join("; ") };
  return { kind: "result" };
}

/** Run `f` and capture its outcome (never throws). */
async function capture(f) {
  try {
    const value = await f();
    return { threw: false, value };
  } catch (error) {
    return { threw: true, error };
  }
}

const SMALL_BATCH = {
  logprobs: [
    [-0.2, -1.0, -0.7],
    [-0.5, -0.4, "NaN"],
  ],
  old_logprobs: [
    [-0.5, -0.7, -0.9],
    [-0.6, -0.5, 123],
  ],
  ref_logprobs: [
    [-0.4, -1.1, -0.6],
    [-0.3, -0.2, "Infinity"],
  ],
  rollout_logprobs: [
    [-0.45, -0.75, -0.85],
    [-0.65, -0.45, 0],
  ],
  advantages: [1.5, -0.8],
  response_mask: [
    [1, 1, 1],
    [1, 1, 0],
  ],
};

const CONFIG_SEEDS = [
  '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.28,"ratio_cap":null},"aggregation":"token_mean","norm_len":null,"is_correction":{"cap":2.0,"level":"token"},"kl":{"kind":"k3","coef":0.04,"aggregation":null,"norm_len":null}}',
  '{"ratio":"sequence","surrogate":"pg_clip","clip":{"eps_low":0.0003,"eps_high":0.0004},"aggregation":"seq_mean_token_mean"}',
  '{"ratio":"token","surrogate":"cispo","clip":{"eps_low":null,"eps_high":5},"aggregation":"token_sum_norm","norm_len":8}',
  '{"ratio":"token","surrogate":"pg","aggregation":"seq_mean_token_sum","kl":{"kind":"k1","coef":0.1}}',
  '{"ratio":"token","surrogate":"pg_clip","clip":{"eps_low":0.2,"eps_high":0.2,"ratio_cap":3},"aggregation":"seq_mean_token_mean","kl":{"kind":"low_var_kl","coef":0.001}}',
];

/** Seed JSON batches: the small batch, with [B] and [B, T] advantages and extreme finite values. */
function jsonBatchSeeds() {
  const extreme = structuredClone(SMALL_BATCH);
  extreme.logprobs[0] = [-1e-300, -1e4, -745];
  extreme.old_logprobs[0] = [-745, -1e-300, -1e4];
  extreme.advantages = [1e300, -1e-300];
  const tokens = structuredClone(SMALL_BATCH);
  tokens.advantages = [
    [0.5, -1, 2],
    [1, -0.3, "NaN"],
  ];
  return [SMALL_BATCH, extreme, tokens].map((b) => enc.encode(JSON.stringify(b)));
}

/**
 * The fuzz targets on `api` (the functions of src/ or of dist/, see test/fuzz/ and
 * scripts/fuzz.mjs). `root` is the repository root (fixtures), `scratch` a writable folder.
 */
export function makeTargets(api, { root, scratch }) {
  const readerSeeds = new Map();
  const jsonSeeds = jsonBatchSeeds();
  const tensors = api.tensorsFromJson(JSON.parse(dec.decode(jsonSeeds[0])), "<seed>").tensors;
  readerSeeds.set("json", jsonSeeds);
  readerSeeds.set("safetensors", [
    api.encodeSafetensors(tensors),
    api.encodeSafetensors(tensors, { note: "seed" }),
    api.encodeSafetensors(
      new Map([
        ["x", { dtype: "F16", shape: [2, 2], data: [1, 2, 3, 4] }],
        ["m", { dtype: "BOOL", shape: [2], data: [1, 0] }],
      ]),
    ),
  ]);
  // NumPy and torch files as their own writers produce them (recorded fixtures), so that the
  // npy, npz and pt readers are mutated from valid files; the other targets splice only the
  // json and safetensors seeds, as in the campaign of docs/fuzz.md.
  const allSeeds = [...readerSeeds.values()].flat();
  const fixture = (p) => new Uint8Array(readFileSync(join(root, "test/fixtures/io", p)));
  readerSeeds.set(
    "npy",
    ["npy/f4_le.npy", "npy/fortran_i4_be.npy", "npy/version3.npy", "npy/b1_na.npy"].map(fixture),
  );
  readerSeeds.set("npz", ["npy/savez.npz", "npy/savez_compressed.npz"].map(fixture));
  readerSeeds.set("pt", ["pt/batch.pt", "pt/views.pt", "pt/state_dict.pt"].map(fixture));
  const bytesTarget = (name, seeds, run, finite = false) => ({
    name,
    seeds,
    mutate: (rand, input) => mutateBytes(rand, input, allSeeds),
    size: (input) => input.length,
    async run(input) {
      const o = await capture(() => run(input));
      if (!o.threw && finite)
        o.violations = nonFiniteNumbers(o.value).map((p) => `non-finite output ${p}`);
      return classify(api, o);
    },
  });
  const readers = api.TENSOR_READERS.map((r) =>
    bytesTarget(`reader:${r.format}`, readerSeeds.get(r.format) ?? allSeeds, (b) => {
      const set = r.parse("fuzz", b, `<fuzz>${r.extensions[0] ?? ""}`);
      if (!(set.tensors instanceof Map)) throw new Error("parse returned no tensor map");
      return null;
    }),
  );
  const lossConfig = api.parsePolicyLossConfig(JSON.parse(CONFIG_SEEDS[0]), "<seed>");
  const batchJson = bytesTarget(
    "json batch (tensorsFromJson + toBatch + policyLoss)",
    jsonSeeds,
    (b) => {
      const value = api.parseJsonText("fuzz", dec.decode(b), "<fuzz>.json");
      const batch = api.toBatch(api.tensorsFromJson(value, "<fuzz>.json"));
      return api.policyLoss(lossConfig, batch);
    },
    true,
  );
  const fixedBatch = api.toBatch(api.tensorsFromJson(SMALL_BATCH, "<seed>"));
  const config = bytesTarget(
    "config json (parsePolicyLossConfig + policyLoss)",
    CONFIG_SEEDS.map((s) => enc.encode(s)),
    (b) => {
      const cfg = api.parsePolicyLossConfig(
        api.parseJsonText("fuzz", dec.decode(b), "<fuzz>"),
        "<fuzz>",
      );
      const c =
        cfg.aggregation === "token_sum_norm" && cfg.normLen == null ? { ...cfg, normLen: 3 } : cfg;
      return api.policyLoss(c, fixedBatch);
    },
    true,
  );
  const pyDir = join(root, "test/fixtures/python");
  // Plain Uint8Array copies: a Buffer's slice() is a view, so a mutation would edit the seed.
  const pySeeds = pythonFiles(pyDir).map((f) => new Uint8Array(readFileSync(f)));
  const python = bytesTarget("python source (extractDefinitions)", pySeeds, async (b) => {
    await api.extractDefinitions(dec.decode(b), { path: "<fuzz>.py" });
    return null;
  });
  const runTarget = makeRunTarget(api, scratch);
  const cli = makeCliTarget(api, { root, scratch, readerSeeds });
  // Last, so that the inputs of the targets before it (seeded by their index) stay as they were.
  const frameworkConfig = bytesTarget(
    "framework config (resolveFrameworkConfig + evaluateResolution)",
    FRAMEWORK_CONFIG_SEEDS.map((s) => enc.encode(s)),
    (b) => {
      // The first line names the release, the rest is the config text (YAML, JSON or arguments).
      const text = dec.decode(b);
      const nl = text.indexOf("\n");
      const ref = nl < 0 ? text : text.slice(0, nl);
      const res = api.resolveFrameworkConfig(ref, nl < 0 ? "" : text.slice(nl + 1));
      const r = api.evaluateResolution(res, {
        ...api.BUILTIN_BATCH,
        refLogprobs: api.BUILTIN_BATCH.oldLogprobs,
        rolloutLogprobs: api.BUILTIN_BATCH.oldLogprobs,
        entropies: api.BUILTIN_BATCH.logprobs.map((row) => row.map(() => 1.5)),
      });
      return { loss: r.loss, grad: r.gradLogprobs.data };
    },
    true,
  );
  const streamed = makeStreamedTarget(api, scratch, readerSeeds.get("safetensors"), allSeeds);
  // Last, so that the inputs of every target before them (seeded by their index) stay as they were.
  const metricLogs = makeMetricLogTargets(api, root, allSeeds);
  return [
    ...readers,
    batchJson,
    config,
    runTarget,
    python,
    cli,
    frameworkConfig,
    streamed,
    ...metricLogs,
  ];
}

/** Why a parsed metric log breaks its contract (steps strictly increasing integers, one value each). */
function metricLogViolations(logs) {
  const out = [];
  for (const log of Array.isArray(logs) ? logs : [logs]) {
    if (log.problems.length > 100 || log.problemCount < log.problems.length)
      out.push(`${log.run}: ${log.problems.length} problems listed, ${log.problemCount} counted`);
    for (let k = 0; k < log.series.length; k++) {
      const s = log.series[k];
      if (k > 0 && !(log.series[k - 1].name < s.name)) out.push(`series ${k} out of name order`);
      if (s.steps.length !== s.values.length)
        out.push(`${s.name}: steps and values differ in length`);
      for (let i = 0; i < s.steps.length; i++)
        if (!Number.isSafeInteger(s.steps[i]) || (i > 0 && !(s.steps[i] > s.steps[i - 1]))) {
          out.push(`${s.name}: step ${s.steps[i]} at ${i} is not an integer above the one before`);
          break;
        }
    }
  }
  return out.slice(0, 5);
}

/**
 * The metric-log parsers (docs/diagnostics/logs.md), seeded with the recorded fixtures of
 * test/fixtures/logs/: each input ends in a MetricLog that keeps its contract (series sorted by
 * name, steps strictly increasing integers, one value each; NaN and ±∞ are values as logged) or a
 * typed error. TensorBoard event files are mutated and spliced with one another; the text logs
 * with every seed.
 */
function makeMetricLogTargets(api, root, allSeeds) {
  const fixture = (p) => new Uint8Array(readFileSync(join(root, "test/fixtures/logs", p)));
  const eventFiles = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.startsWith("events.out.tfevents."))
        eventFiles.push(new Uint8Array(readFileSync(p)));
    }
  };
  walk(join(root, "test/fixtures/logs/tensorboard"));
  const chart = "wandb/wandb_export_2026-01-02T03_04_05.678+00_00.csv";
  const seeds = {
    jsonl: ["jsonl/gsm8k_grpo.jsonl"].map(fixture),
    trainerState: [
      "trainer_state/out/checkpoint-2/trainer_state.json",
      "trainer_state/out/checkpoint-10/trainer_state.json",
    ].map(fixture),
    wandb: [chart, "wandb/history.csv", "wandb/history.jsonl", "wandb/history.json"].map(fixture),
  };
  const all = [...seeds.jsonl, ...seeds.trainerState, ...seeds.wandb];
  const target = (name, targetSeeds, parse, pool = [...all, ...allSeeds]) => ({
    name,
    seeds: targetSeeds,
    mutate: (rand, input) => mutateBytes(rand, input, pool),
    size: (input) => input.length,
    async run(input) {
      const o = await capture(() => parse(input));
      if (!o.threw && o.value !== null) o.violations = metricLogViolations(o.value);
      return classify(api, o);
    },
  });
  return [
    target("metric log jsonl (parseJsonlLog)", seeds.jsonl, (b) =>
      api.parseJsonlLog(b, "<fuzz>.jsonl"),
    ),
    target("metric log trainer_state (parseTrainerState)", seeds.trainerState, (b) =>
      api.parseTrainerState(b, "<fuzz>/trainer_state.json"),
    ),
    target("metric log wandb (parseWandbExport)", seeds.wandb, (b) =>
      api.parseWandbExport(b, "<fuzz>.csv"),
    ),
    target(
      "metric log tensorboard (parseTensorboardEvents)",
      eventFiles,
      (b) => api.parseTensorboardEvents(b, "<fuzz>"),
      eventFiles,
    ),
    target("metric log detection (detectMetricLogFormat)", [...all, ...eventFiles], (b) => {
      api.detectMetricLogFormat("<fuzz>", b);
      return null;
    }),
  ];
}

/**
 * `loss --out` streamed against the whole path (docs/performance.md#loss---out-streamed): a
 * mutated safetensors batch is evaluated by lossOutStreamed one row per block and by the CLI with
 * `--threads 2` (the batch read whole); the streamed path must either decline, printing and
 * writing nothing, or give the whole path's file and document byte for byte. Appended last.
 */
/** A safetensors file with a few body bytes changed (its header, hence its layout, kept). */
function mutateBody(rand, input) {
  const out = Uint8Array.from(input);
  if (out.length < 8) return out;
  const n = Number(new DataView(out.buffer).getBigUint64(0, true));
  const at = 8 + n;
  if (!(at < out.length)) return out;
  for (let k = 1 + int(rand, 4); k > 0; k--) {
    const i = at + int(rand, out.length - at);
    // Small changes (a low mantissa byte), large ones (an exponent byte) and whole values.
    out[i] = rand() < 0.3 ? out[i] ^ 1 : int(rand, 256);
  }
  return out;
}

function makeStreamedTarget(api, scratch, safetensorsSeeds, allSeeds) {
  const dir = join(scratch, "streamed");
  mkdirSync(dir, { recursive: true });
  const algorithms = ["dapo", "gspo", "cispo", "dr_grpo"];
  const u = (b, t, f) =>
    Array.from({ length: b }, (_, i) => Array.from({ length: t }, (_, j) => f(i, j)));
  const larger = api.encodeSafetensors(
    new Map([
      [
        "logprobs",
        {
          dtype: "F32",
          shape: [5, 4],
          data: u(5, 4, (i, j) => -0.5 - 0.1 * ((i * 4 + j) % 7)).flat(),
        },
      ],
      [
        "old_logprobs",
        {
          dtype: "F64",
          shape: [5, 4],
          data: u(5, 4, (i, j) => -0.6 - 0.05 * ((i + j) % 5)).flat(),
        },
      ],
      ["advantages", { dtype: "F64", shape: [5], data: [0.5, -1, 2, 0, -0.25] }],
      [
        "response_mask",
        { dtype: "BOOL", shape: [5, 4], data: u(5, 4, (i, j) => (j <= i % 4 ? 1 : 0)).flat() },
      ],
    ]),
  );
  let n = 0;
  return {
    name: "loss --out streamed (lossOutStreamed against the whole path)",
    seeds: [...safetensorsSeeds, larger],
    // Half the inputs keep the header and change values in the body (the header's mutations
    // end almost all in a typed error before any row is read).
    mutate: (rand, input) =>
      rand() < 0.5 ? mutateBody(rand, input) : mutateBytes(rand, input, allSeeds),
    size: (input) => input.length,
    async run(input) {
      const k = n++;
      const batch = join(dir, `b${k}.safetensors`);
      const a = join(dir, `a${k}.safetensors`);
      const b = join(dir, `w${k}.safetensors`);
      writeFileSync(batch, input);
      const algorithm = algorithms[input.length % algorithms.length];
      try {
        const args = [
          "--algorithm",
          algorithm,
          ...(algorithm === "dr_grpo" ? ["--norm-len", "8"] : []),
        ];
        let config;
        let whole;
        try {
          const spec = api.getAlgorithm(algorithm);
          config = algorithm === "dr_grpo" ? { ...spec.loss, normLen: 8 } : spec.loss;
          whole = await api.runCli([
            "loss",
            ...args,
            "--batch",
            batch,
            "--out",
            b,
            "--threads",
            "2",
            "--json",
          ]);
        } catch (error) {
          return classify(api, { threw: true, error });
        }
        const printed = { stdout: "", stderr: "" };
        const io = { stdout: (t) => (printed.stdout += t), stderr: (t) => (printed.stderr += t) };
        const o = await capture(() =>
          api.lossOutStreamed(
            { json: true, out: a },
            io,
            config,
            `algorithm ${algorithm}`,
            batch,
            {},
            a,
            undefined,
            1,
          ),
        );
        if (o.threw) return classify(api, o);
        const bad = [];
        if (o.value === null) {
          if (printed.stdout !== "" || printed.stderr !== "") bad.push("declined but printed");
          if (existsSync(a)) bad.push("declined but wrote the file");
        } else {
          if (whole.code !== 0)
            bad.push(
              `streamed a result where the whole path exits ${whole.code}: ${whole.stderr.slice(0, 200)}`,
            );
          else {
            if (!readFileSync(a).equals(readFileSync(b))) bad.push("the files differ");
            if (printed.stdout.replaceAll(a, "F") !== whole.stdout.replaceAll(b, "F"))
              bad.push("the documents differ");
            if (printed.stderr !== whole.stderr) bad.push("the notices differ");
          }
        }
        if (bad.length > 0) return { kind: "other", detail: bad.join("; ") };
        if (whole.code === 2)
          return { kind: "typed", code: /E_[A-Z_]+/.exec(whole.stderr)?.[0] ?? "E_?" };
        return { kind: "result" };
      } finally {
        for (const f of [batch, a, b]) rmSync(f, { force: true });
      }
    },
  };
}

/** Framework configs in the forms users hold them, one per framework and form, behind their release. */
const FRAMEWORK_CONFIG_SEEDS = [
  "trl@v1.9.0\nloss_type: dapo\nepsilon_high: 0.28\nbeta: 0.04\nnum_iterations: 2\ngradient_accumulation_steps: 2\n",
  "trl@v0.19.0\n--loss_type bnpo --epsilon 0.1 --num_iterations 2 --steps_per_generation 2",
  'trl@f2cd5771\n{"loss_type": "cispo", "use_vllm": true, "vllm_importance_sampling_correction": true, "top_entropy_quantile": 0.5}',
  "verl@1dda039b\nactor_rollout_ref.actor.loss_agg_mode=seq-mean-token-sum-norm actor_rollout_ref.actor.use_kl_loss=true actor_rollout_ref.actor.kl_loss_type=k3+ algorithm.rollout_correction.rollout_is=token",
  "verl@v0.7.1\nactor_rollout_ref:\n  actor:\n    ppo_micro_batch_size_per_gpu: 2\n    policy_loss:\n      loss_mode: gspo\n",
  "openrlhf@v0.11.0\n--actor.eps_clip_low_high 0.2 0.28 --actor.dual_clip 3 --algo.kl.use_loss --algo.kl.init_coef 0.01 --algo.kl.estimator k3 --train.micro_batch_size 2",
  "openrlhf@v0.9.4\n--micro_train_batch_size 2 --enable_vllm_is_correction --vllm_is_truncated_threshold 0.5 5.0 --vllm_is_correction_type seq-mask-tis",
];

function pythonFiles(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) pythonFiles(p, out);
    else if (p.endsWith(".py")) out.push(p);
  }
  return out;
}

/** Run folders: a small demo run with one or two step files mutated, then diagnoseRun. */
function makeRunTarget(api, scratch) {
  const base = join(scratch, "run-seed");
  rmSync(base, { recursive: true, force: true });
  api.writeDemoRun(base, { steps: 6, batchSize: 3, width: 5, seed: 1 });
  const files = readdirSync(base)
    .sort()
    .map((name) => ({ name, bytes: new Uint8Array(readFileSync(join(base, name))) }));
  const corpus = files.map((f) => f.bytes);
  let n = 0;
  return {
    name: "run folder (diagnoseRun)",
    seeds: [files],
    size: (input) => input.reduce((s, f) => s + f.bytes.length, 0),
    mutate(rand, input) {
      const out = input.map((f) => ({ ...f }));
      for (let k = 1 + int(rand, 2); k > 0; k--) {
        const i = int(rand, out.length);
        const r = rand();
        if (r < 0.7) out[i] = { ...out[i], bytes: mutateBytes(rand, out[i].bytes, corpus) };
        else if (r < 0.8) out.splice(i, 1);
        else if (r < 0.9)
          out.push({
            name: pick(rand, [
              "step_3.json",
              "step_000002.safetensors",
              "step_x.json",
              "step_99999999999999999999.json",
            ]),
            bytes: pick(rand, corpus),
          });
        else out[i] = { ...out[i], name: out[i].name.replace(/\.safetensors$/, ".json") };
      }
      return out.length > 0 ? out : input;
    },
    async run(input) {
      const dir = join(scratch, `run-${process.pid}-${n++}`);
      mkdirSync(dir, { recursive: true });
      try {
        for (const f of input) writeFileSync(join(dir, f.name), f.bytes);
        const o = await capture(() => api.diagnoseRun(dir, { nPerm: 99 }));
        if (!o.threw) o.violations = nonFiniteNumbers(o.value).map((p) => `non-finite output ${p}`);
        return classify(api, o);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** CLI argv: random commands, options and values; checks the CLI contract of docs/cli.md. */
function makeCliTarget(api, { root, scratch, readerSeeds }) {
  const batch = join(scratch, "cli-batch.json");
  writeFileSync(batch, readerSeeds.get("json")[0]);
  const st = join(scratch, "cli-batch.safetensors");
  writeFileSync(st, readerSeeds.get("safetensors")[0]);
  const cfg = join(scratch, "cli-config.json");
  writeFileSync(cfg, CONFIG_SEEDS[0]);
  const run = join(scratch, "run-seed");
  const values = {
    path: [
      batch,
      st,
      run,
      join(scratch, "nope.json"),
      "",
      "x\nerror[E_FORGED]: y",
      join(root, "package.json"),
      scratch,
      "/dev/null",
      `${"a".repeat(5000)}.json`,
    ],
    int: [
      "0",
      "1",
      "2",
      "3",
      "-1",
      "",
      "abc",
      "1.5",
      "1e3",
      "1e309",
      "9007199254740993",
      "1000000000",
      "99999999999999999999999",
    ],
    name: [
      "grpo",
      "dr_grpo",
      "papo_g",
      "gspo",
      "nope",
      "",
      "grpo\u001b[2J",
      "x".repeat(100_000),
      "verl@1dda039b:seq-mean-token-mean",
      "trl@v0.29.1",
      "trl",
    ],
    config: [
      CONFIG_SEEDS[0],
      CONFIG_SEEDS[2],
      `@${cfg}`,
      "{",
      '{"ratio":"token","ratio":"token"}',
      "[".repeat(60_000),
      "@",
      `@${run}`,
      "null",
    ],
    replay: ["1:2x3", "1:1000000x1000000", "x", "1:0x3", "99999999999999999999:2x2"],
    clip: ["0.2,0.28", "0.2,0.2,3", ",", "a,b", "1e309,1", "-1,2", "0.2"],
    precision: ["fp64", "bf16", "fp8", ""],
    other: ["official", "trl", "token_mean", "token_sum_norm", "token_meen", "--json", "-", "--"],
  };
  const kindOf = (opt) =>
    ({
      batch: "path",
      checkout: "path",
      config: "config",
      algorithm: "name",
      framework: "name",
      pin: "name",
      replay: "replay",
      clip: "clip",
      precision: "precision",
      "papo-form": "other",
      agg: "other",
    })[opt] ?? "int";
  // playground serves until stopped (a valid command line never returns): its arguments are
  // checked by test/cli/playground.test.ts, not drawn here.
  const commands = api.COMMANDS.filter((c) => c.name !== "playground");
  const positionalsFor = (rand, cmd) => {
    if (cmd.name === "describe") return [pick(rand, values.name)];
    if (cmd.name === "diagnose") return [pick(rand, values.path)];
    if (cmd.name === "demo-run") return [join(scratch, `demo-${int(rand, 4)}`)];
    if (cmd.name === "contract")
      return pick(rand, [
        ["check"],
        ["reduce", "dual_clip_to_pg_clip"],
        ["reduce", "nope"],
        [],
        ["nope"],
      ]);
    return rand() < 0.1 ? ["stray"] : [];
  };
  const draw = (rand) => {
    const cmd =
      rand() < 0.05
        ? { name: pick(rand, ["nope", "", "x".repeat(1000), "--json"]), options: {} }
        : pick(rand, commands);
    const argv = [cmd.name, ...positionalsFor(rand, cmd)];
    const opts = Object.entries(cmd.options);
    for (let k = int(rand, 5); k > 0 && opts.length > 0; k--) {
      const [name, o] = pick(rand, opts);
      argv.push(rand() < 0.05 ? `--${name}x` : `--${name}`);
      if (o.type === "string" && rand() < 0.95) argv.push(pick(rand, values[kindOf(name)]));
    }
    // Keep demo runs and verification small: these budgets are legitimate work, not hangs.
    if (cmd.name === "demo-run") argv.push("--steps", "4", "--batch-size", "3");
    if (cmd.name === "verify" && !argv.includes("--cases")) argv.push("--cases", "1");
    if (rand() < 0.5) argv.push("--json");
    return argv;
  };
  const seedRand = prng(7);
  return {
    name: "cli argv (main)",
    seeds: Array.from({ length: 32 }, () => draw(seedRand)),
    size: (argv) => argv.reduce((s, a) => s + a.length, 0),
    mutate: (rand) => draw(rand),
    async run(argv) {
      const o = await capture(() => api.runCli(argv));
      if (!o.threw) {
        const r = o.value;
        const violations = [
          ...contractViolations({ args: argv, ...r }),
          ...(r.code !== 2 && argv.includes("--json")
            ? nonFiniteNumbers(safeParse(r.stdout)).map((p) => `non-finite output ${p}`)
            : []),
        ];
        if (violations.length > 0) return { kind: "other", detail: violations.join("; ") };
        // Exit 2 is a typed error (its code from the error line or document), 0 and 1 a result.
        if (r.code === 2) return { kind: "typed", code: /E_[A-Z_]+/.exec(r.stderr)?.[0] ?? "E_?" };
        return { kind: "result" };
      }
      return classify(api, o);
    },
  };
}

function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
