/**
 * Language-neutral conformance vectors (docs/vectors.md): seeded input batches, the reference's
 * expected losses and gradients, and a manifest that says what each file holds, so that an author
 * in any language can certify a loss implementation with nothing but their own framework; and the
 * check of their outputs, with the diagnosis of a mismatch. Pure: the caller reads and writes the
 * files (the CLI: `polgrad vectors emit|check`). Browser-safe.
 */
import { fmtValue } from "../core/message.js";
import { toRows } from "../core/tensor.js";
import { checkEps } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { parsePolicyLossConfig, policyLossConfigToJson } from "../io/configJson.js";
import type { TensorSet, TensorToWrite } from "../io/index.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import { getAlgorithm } from "../registry/registry.js";
import { caseMetrics } from "./compare.js";
import { getFrameworkModel } from "./frameworks/registry.js";
import { type CaseResult, type MismatchDiagnosis, nearestMatch } from "./nearestMatch.js";
import { checkShapes, randomBatches } from "./randomBatches.js";

/** The streams a vector case can carry, in their wire names. */
export type VectorStream =
  | "logprobs"
  | "old_logprobs"
  | "advantages"
  | "response_mask"
  | "ref_logprobs"
  | "rollout_logprobs"
  | "entropies";

/** The manifest of a vectors folder (`manifest.json`). */
export interface VectorsManifest {
  readonly format: "polgrad-vectors";
  readonly version: 1;
  readonly reference: {
    readonly kind: "algorithm" | "framework" | "config";
    /** The algorithm name or framework model id (null for an explicit config). */
    readonly name: string | null;
    /** The policy-loss config, wire form (null for a framework model). */
    readonly config: unknown;
    readonly notes: readonly string[];
  };
  readonly generator: {
    readonly function: "randomBatches";
    readonly cases: number;
    readonly shapes: readonly (readonly [number, number])[];
    readonly seed: number;
    readonly max_gap: number;
    readonly advantages: "row";
  };
  readonly inputs: {
    readonly file: string;
    /** Hex SHA-256 of the file's bytes (filled in by the writer). */
    readonly sha256: string;
    /** Tensor names are `<case>.<stream>`: float64 `[B, T]`, advantages `[B]`, response_mask BOOL `[B, T]`. */
    readonly streams: readonly VectorStream[];
  };
  readonly expected: { readonly file: string; readonly sha256: string };
  /** What the author writes: `<case>.loss` (shape [] or [1]) and `<case>.grad_logprobs` `[B, T]`, in any tensor file polgrad reads. */
  readonly outputs: { readonly names: readonly ["loss", "grad_logprobs"] };
  readonly tolerances: { readonly loss_rtol: number; readonly grad_rtol: number };
  readonly cases: readonly {
    readonly name: string;
    readonly index: number;
    readonly seed: number;
    readonly shape: readonly [number, number];
    readonly loss: number;
  }[];
}

/** Options of {@link emitVectors}. */
export interface EmitVectorsOptions {
  /** Cases (default 16). */
  readonly cases?: number;
  /** Shapes, cycled (default [[4, 8], [2, 12]]). */
  readonly shapes?: readonly (readonly [number, number])[];
  readonly seed?: number;
  /** Dr.GRPO's budget when the reference's token_sum_norm has none. */
  readonly normLen?: number;
  readonly lossRtol?: number;
  readonly gradRtol?: number;
}

/** What {@link emitVectors} returns: the manifest (sha256 fields empty) and the two files' tensors. */
export interface EmittedVectors {
  readonly manifest: VectorsManifest;
  readonly inputs: ReadonlyMap<string, TensorToWrite>;
  readonly expected: ReadonlyMap<string, TensorToWrite>;
}

const FN = "emitVectors";

type Ref =
  | { kind: "algorithm" | "config"; name: string | null; config: PolicyLossConfig; notes: string[] }
  | {
      kind: "framework";
      name: string;
      evaluate: (i: PolicyLossInputs) => {
        loss: number;
        gradLogprobs: { data: ArrayLike<number> };
      };
      needs: readonly string[];
      notes: string[];
    };

function resolveRef(
  fn: string,
  reference: string | PolicyLossConfig,
  normLen: number | undefined,
): Ref {
  let config: PolicyLossConfig;
  let kind: "algorithm" | "config";
  let name: string | null = null;
  const notes: string[] = [];
  if (typeof reference === "string") {
    if (reference.includes("@")) {
      const m = getFrameworkModel(reference);
      return {
        kind: "framework",
        name: m.id,
        evaluate: m.evaluate,
        needs: m.needs,
        notes: [
          `reference: framework model ${m.id} (${m.pin.repo} ${m.pin.path} at ${m.pin.commit})`,
        ],
      };
    }
    // An unknown name is the registry's UnknownNameError (with its did-you-mean).
    config = getAlgorithm(reference).loss;
    kind = "algorithm";
    name = reference;
    notes.push(`reference: ALGORITHMS['${reference}'].loss`);
  } else if (typeof reference === "object" && reference !== null) {
    config = reference;
    kind = "config";
    notes.push("reference: explicit PolicyLossConfig");
  } else
    throw fail(
      ConfigError,
      fn,
      "reference",
      "an algorithm name, a framework model id or a PolicyLossConfig",
      fmtValue(reference),
    );
  if (config.aggregation === "token_sum_norm" && config.normLen == null) {
    if (normLen === undefined)
      throw fail(
        ConfigError,
        fn,
        "options.normLen",
        "given for a token_sum_norm reference without normLen (Dr.GRPO's generation budget)",
        "nothing",
      );
    config = { ...config, normLen };
    notes.push(`normLen: ${normLen} (given)`);
  }
  if (config.kl != null)
    notes.push("kl: the reference's as-loss KL term is included; the cases carry ref_logprobs");
  return { kind, name, config, notes };
}

function streamsOf(ref: Ref): VectorStream[] {
  const s: VectorStream[] = ["logprobs", "old_logprobs", "advantages", "response_mask"];
  if (ref.kind === "framework") {
    if (ref.needs.includes("refLogprobs")) s.push("ref_logprobs");
    if (ref.needs.includes("rolloutLogprobs")) s.push("rollout_logprobs");
    return s;
  }
  const c = ref.config;
  if (c.kl != null) s.push("ref_logprobs");
  if (
    c.isCorrection != null ||
    (c.rejection ?? null) !== null ||
    c.offPolicyMask?.sampling === "rollout"
  )
    s.push("rollout_logprobs");
  if (c.topEntropyQuantile != null || c.entropyBonus != null) s.push("entropies");
  return s;
}

function inputsOf(
  b: { readonly [k: string]: unknown },
  streams: readonly VectorStream[],
): PolicyLossInputs {
  const pick = <T>(k: string) => b[k] as T;
  return {
    logprobs: pick("logprobs"),
    oldLogprobs: pick("oldLogprobs"),
    advantages: pick("advantages"),
    responseMask: pick("responseMask"),
    ...(streams.includes("ref_logprobs") ? { refLogprobs: pick("refLogprobs") } : {}),
    ...(streams.includes("rollout_logprobs") ? { rolloutLogprobs: pick("rolloutLogprobs") } : {}),
    ...(streams.includes("entropies") ? { entropies: pick("entropies") } : {}),
  } as PolicyLossInputs;
}

const caseName = (i: number, n: number) =>
  `case_${String(i).padStart(Math.max(3, String(n - 1).length), "0")}`;

/**
 * Build conformance vectors for a reference: seeded inputs, the expected loss and gradient per
 * case, and the manifest.
 *
 * Formula: the cases are randomBatches(cases, shapes, {seed, maxGap: 2}) (`[B]` advantages); the
 * expected loss and ∂loss/∂logprobs of each are the reference's (policyLoss, or the framework
 * model). Input tensor `<case>.<stream>` (float64; response_mask BOOL), expected `<case>.loss` (F64
 * scalar) and `<case>.grad_logprobs` (F64 `[B, T]`).
 *
 * @param reference - An algorithm name, a framework model id or a PolicyLossConfig (KL, IS
 *   correction and entropy terms included: the cases carry the streams they read).
 * @param options - Cases (16; at most 100000 and 2^22 tokens in all), shapes ([[4, 8], [2, 12]]), seed (0), normLen, tolerances (1e-9).
 * @returns The manifest (sha256 fields empty: the writer fills them) and the two files' tensors.
 * @throws {ConfigError} E_CONFIG for a bad reference or option; {UnknownNameError} for an unknown name.
 * @derivation docs/vectors.md
 * @enforcedBy test/conformance/vectors.test.ts > vectors > conformance: emit then check: the reference's own outputs conform, a token mean for GRPO fails with its diagnosis
 * @since 0.2.0
 */
export function emitVectors(
  reference: string | PolicyLossConfig,
  options: EmitVectorsOptions = {},
): EmittedVectors {
  const n = options.cases ?? 16;
  const shapes = checkShapes(
    FN,
    "options.shapes",
    options.shapes ?? [
      [4, 8],
      [2, 12],
    ],
  );
  // The files hold every case in memory: at most 2^22 tokens over all cases, as randomBatches.
  let tokens = 0;
  for (let k = 0; k < Math.min(n, shapes.length); k++) {
    const [B, T] = shapes[k] as readonly [number, number];
    tokens += B * T * Math.ceil((n - k) / shapes.length);
  }
  if (!Number.isSafeInteger(n) || n < 1 || n > 100_000 || tokens > 2 ** 22)
    throw fail(
      ConfigError,
      FN,
      "options.cases",
      "an integer in 1..100000 whose cases hold at most 4194304 tokens in all",
      `${fmtValue(n)} (${tokens} tokens)`,
    );
  const seed = options.seed ?? 0;
  const ref = resolveRef(FN, reference, options.normLen);
  const streams = streamsOf(ref);
  const batches = randomBatches(n, shapes, { seed, maxGap: 2 });
  const inputs = new Map<string, TensorToWrite>();
  const expected = new Map<string, TensorToWrite>();
  const cases: VectorsManifest["cases"][number][] = [];
  const f64 = (shape: readonly number[], data: ArrayLike<number>): TensorToWrite => ({
    dtype: "F64",
    shape,
    data,
  });
  for (const b of batches) {
    const name = caseName(b.index, n);
    const [B, T] = b.shape;
    const flat = (m: number[][]) => m.flat();
    const wire: Record<VectorStream, TensorToWrite> = {
      logprobs: f64([B, T], flat(b.logprobs)),
      old_logprobs: f64([B, T], flat(b.oldLogprobs)),
      advantages: f64([B], b.advantages as number[]),
      response_mask: {
        dtype: "BOOL",
        shape: [B, T],
        data: b.responseMask.flat().map((x) => (x ? 1 : 0)),
      },
      ref_logprobs: f64([B, T], flat(b.refLogprobs)),
      rollout_logprobs: f64([B, T], flat(b.rolloutLogprobs)),
      entropies: f64([B, T], flat(b.entropies)),
    };
    for (const s of streams) inputs.set(`${name}.${s}`, wire[s]);
    const i = inputsOf(b as unknown as Record<string, unknown>, streams);
    const r = ref.kind === "framework" ? ref.evaluate(i) : policyLoss(ref.config, i);
    expected.set(`${name}.loss`, f64([], [r.loss]));
    expected.set(`${name}.grad_logprobs`, f64([B, T], r.gradLogprobs.data));
    cases.push({ name, index: b.index, seed: b.seed, shape: b.shape, loss: r.loss });
  }
  const manifest: VectorsManifest = {
    format: "polgrad-vectors",
    version: 1,
    reference: {
      kind: ref.kind,
      name: ref.name,
      config: ref.kind === "framework" ? null : policyLossConfigToJson(ref.config),
      notes: ref.notes,
    },
    generator: { function: "randomBatches", cases: n, shapes, seed, max_gap: 2, advantages: "row" },
    inputs: { file: "inputs.safetensors", sha256: "", streams },
    expected: { file: "expected.safetensors", sha256: "" },
    outputs: { names: ["loss", "grad_logprobs"] },
    tolerances: {
      loss_rtol: checkEps(FN, "options.lossRtol", options.lossRtol ?? 1e-9),
      grad_rtol: checkEps(FN, "options.gradRtol", options.gradRtol ?? 1e-9),
    },
    cases,
  };
  return { manifest, inputs, expected };
}

/** The result of {@link checkVectors}. */
export interface VectorsReport {
  readonly conforms: boolean;
  readonly cases: number;
  readonly maxLossRelDiff: number;
  readonly maxGradRelDiff: number;
  readonly gradCosineMin: number;
  /** The case with the largest difference. */
  readonly worstCase: {
    readonly name: string;
    readonly seed: number;
    readonly shape: readonly [number, number];
  } | null;
  /** Output tensors the author's file lacks or has in the wrong shape, by name. */
  readonly problems: readonly string[];
  readonly tolerances: { readonly lossRtol: number; readonly gradRtol: number };
  readonly reference: VectorsManifest["reference"];
  /** When it does not conform and the reference is a config: the configuration the outputs match. */
  readonly diagnosis: MismatchDiagnosis | null;
}

const CFN = "checkVectors";

function tensorOf(
  fn: string,
  set: TensorSet,
  name: string,
  shape: readonly number[],
): Float64Array {
  const t = set.tensors.get(name);
  if (t === undefined) throw fail(ConfigError, fn, name, `present in ${set.path}`, "absent");
  const n = shape.reduce((a, b) => a * b, 1);
  const ok = t.data.length === n && (t.shape.length === shape.length || n === 1);
  if (!ok)
    throw fail(
      ConfigError,
      fn,
      name,
      `of shape [${shape.join(", ")}]`,
      `shape [${t.shape.join(", ")}] in ${set.path}`,
    );
  return Float64Array.from(t.data);
}

const STREAMS: readonly VectorStream[] = [
  "logprobs",
  "old_logprobs",
  "advantages",
  "response_mask",
  "ref_logprobs",
  "rollout_logprobs",
  "entropies",
];

/** The parts of a manifest checkVectors reads, each checked before use (a hand-edited manifest). */
function checkManifest(m: VectorsManifest): void {
  const bad = (arg: string, rule: string, got: unknown) =>
    fail(ConfigError, CFN, arg, rule, fmtValue(got));
  const streams = m.inputs?.streams as unknown;
  if (!Array.isArray(streams) || streams.some((x) => !STREAMS.includes(x as VectorStream)))
    throw bad("manifest.inputs.streams", `a list of ${STREAMS.join(", ")}`, streams);
  for (const need of ["logprobs", "old_logprobs", "advantages", "response_mask"] as const)
    if (!streams.includes(need))
      throw bad("manifest.inputs.streams", `a list holding ${need}`, streams);
  const ref = m.reference as unknown;
  if (ref === null || typeof ref !== "object")
    throw bad("manifest.reference", "an object { kind, name, config, notes }", ref);
  const cases = m.cases as unknown;
  if (!Array.isArray(cases) || cases.length === 0 || cases.length > 1_000_000)
    throw bad("manifest.cases", "a non-empty list of cases (at most 1000000)", cases);
  cases.forEach((c: VectorsManifest["cases"][number], i) => {
    const at = `manifest.cases[${i}]`;
    if (
      c === null ||
      typeof c !== "object" ||
      typeof c.name !== "string" ||
      !/^[\w.-]{1,64}$/.test(c.name)
    )
      throw bad(`${at}.name`, "a case name of letters, digits, _ . - (at most 64)", c?.name);
    const sh = c.shape as unknown;
    if (
      !Array.isArray(sh) ||
      sh.length !== 2 ||
      !sh.every((x) => Number.isSafeInteger(x) && x >= 1 && x <= 1 << 20) ||
      (sh[0] as number) * (sh[1] as number) > 1 << 26
    )
      throw bad(`${at}.shape`, "[B, T] with 1 <= B, T <= 1048576 and B·T <= 67108864", sh);
  });
}

/**
 * Check an author's outputs against a vectors folder.
 *
 * Formula: per case, loss_rel = |a − e| / max(|a|, |e|, 1e-12), grad_rel = ‖g_a − g_e‖₂ /
 * max(‖g_a‖₂, ‖g_e‖₂, 1e-12) against the expected values, the cosine as compareLosses; it conforms
 * iff every output is present with its shape, max loss_rel ≤ loss_rtol and max grad_rel ≤ grad_rtol.
 * A config reference that fails gets nearestMatch's diagnosis on the same inputs.
 *
 * @param manifest - The parsed manifest.json.
 * @param inputs - inputs.safetensors' tensors.
 * @param expected - expected.safetensors' tensors.
 * @param outputs - The author's `<case>.loss` and `<case>.grad_logprobs` (any format polgrad reads).
 * @returns The report.
 * @throws {ConfigError} E_CONFIG for a manifest that is not polgrad-vectors version 1, or inputs
 *   or expected tensors missing or misshapen (the folder is damaged).
 * @derivation docs/vectors.md
 * @enforcedBy test/conformance/vectors.test.ts > vectors > conformance: emit then check: the reference's own outputs conform, a token mean for GRPO fails with its diagnosis
 * @since 0.2.0
 */
export function checkVectors(
  manifest: VectorsManifest,
  inputs: TensorSet,
  expected: TensorSet,
  outputs: TensorSet,
): VectorsReport {
  if (
    manifest === null ||
    typeof manifest !== "object" ||
    manifest.format !== "polgrad-vectors" ||
    manifest.version !== 1
  )
    throw fail(
      ConfigError,
      CFN,
      "manifest",
      'a polgrad-vectors manifest of version 1 ({"format": "polgrad-vectors", "version": 1, …})',
      fmtValue(manifest),
    );
  checkManifest(manifest);
  const lossRtol = checkEps(CFN, "manifest.tolerances.loss_rtol", manifest.tolerances?.loss_rtol);
  const gradRtol = checkEps(CFN, "manifest.tolerances.grad_rtol", manifest.tolerances?.grad_rtol);
  const streams = manifest.inputs.streams;
  const problems: string[] = [];
  const theirs: CaseResult[] = [];
  const cases: { batch: { shape: readonly [number, number] }; inputs: PolicyLossInputs }[] = [];
  let maxLoss = 0;
  let maxGrad = 0;
  let minCos = 1;
  let worst = -1;
  let worstCase: VectorsReport["worstCase"] = null;
  for (const c of manifest.cases) {
    const [B, T] = c.shape;
    const rows = (x: Float64Array) => toRows({ rows: B, cols: T, data: x });
    const get = (s: VectorStream) => {
      const shape = s === "advantages" ? [B] : [B, T];
      return tensorOf(CFN, inputs, `${c.name}.${s}`, shape);
    };
    const mask = get("response_mask");
    const inp = {
      logprobs: rows(get("logprobs")),
      oldLogprobs: rows(get("old_logprobs")),
      advantages: Array.from(get("advantages")),
      responseMask: rows(mask).map((r) => r.map((x) => x !== 0)),
      ...(streams.includes("ref_logprobs") ? { refLogprobs: rows(get("ref_logprobs")) } : {}),
      ...(streams.includes("rollout_logprobs")
        ? { rolloutLogprobs: rows(get("rollout_logprobs")) }
        : {}),
      ...(streams.includes("entropies") ? { entropies: rows(get("entropies")) } : {}),
    };
    const eLoss = tensorOf(CFN, expected, `${c.name}.loss`, [])[0] as number;
    const eGrad = tensorOf(CFN, expected, `${c.name}.grad_logprobs`, [B, T]);
    let aLoss: number;
    let aGrad: Float64Array;
    try {
      aLoss = tensorOf(CFN, outputs, `${c.name}.loss`, [])[0] as number;
      aGrad = tensorOf(CFN, outputs, `${c.name}.grad_logprobs`, [B, T]);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(e.message.replace(/^checkVectors: /, ""));
      continue;
    }
    theirs.push({ loss: aLoss, grad: aGrad });
    cases.push({ batch: { shape: c.shape }, inputs: inp });
    const { lossRel, gradRel, cos } = caseMetrics(eLoss, eGrad, aLoss, aGrad);
    const lr = Number.isNaN(lossRel) ? Number.POSITIVE_INFINITY : lossRel;
    const gr = Number.isNaN(gradRel) ? Number.POSITIVE_INFINITY : gradRel;
    maxLoss = Math.max(maxLoss, lr);
    maxGrad = Math.max(maxGrad, gr);
    minCos = Math.min(minCos, Number.isNaN(cos) ? 0 : cos);
    if (Math.max(lr, gr) > worst) {
      worst = Math.max(lr, gr);
      worstCase = { name: c.name, seed: c.seed, shape: c.shape };
    }
  }
  const conforms = problems.length === 0 && maxLoss <= lossRtol && maxGrad <= gradRtol;
  let diagnosis: MismatchDiagnosis | null = null;
  if (!conforms && problems.length === 0 && manifest.reference.config !== null) {
    const config = parsePolicyLossConfig(manifest.reference.config, "manifest.reference.config");
    diagnosis = nearestMatch(theirs, cases, config, {
      lossRtol,
      gradRtol,
      withKl: streams.includes("ref_logprobs"),
    });
  }
  return {
    conforms,
    cases: manifest.cases.length,
    maxLossRelDiff: maxLoss,
    maxGradRelDiff: maxGrad,
    gradCosineMin: minCos,
    worstCase,
    problems,
    tolerances: { lossRtol, gradRtol },
    reference: manifest.reference,
    diagnosis,
  };
}
