/**
 * Pairwise deviation reports (polgrad's `deviation_report` and examples/deviation_report.py,
 * docs/conformance/deviations.md#pairs): a paper configuration against a framework model on seeded
 * batches, measured now, with polgrad's notes; and the registered pairs `polgrad deviations
 * --pairs` prints: the matching group (what each framework computes exactly, in polgrad's terms)
 * and, for every registered loss deviation, its framework model against the paper's equation.
 * Browser-safe.
 */
import { fmtValue } from "../core/message.js";
import { pyExp, pyFixed } from "../core/pyFormat.js";
import { pyValue } from "../core/pyRepr.js";
import { requireObject } from "../core/validate.js";
import { ConfigError, fail } from "../errors.js";
import { policyLossConfigToJson } from "../io/configJson.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import { ALGORITHM_NAMES, ALGORITHMS } from "../registry/index.js";
import type { DrawnBatch } from "../verify/draw.js";
import { type ComparisonReport, compareLosses } from "./compare.js";
import { ppoClipConfig, wideGaps } from "./deviations.js";
import { getFrameworkModel } from "./frameworks/registry.js";

/** A deviation report: compareLosses' numbers and polgrad's notes. */
export interface DeviationReport extends ComparisonReport {
  readonly notes: readonly string[];
}

/** Options of {@link deviationReport}. */
export interface DeviationReportOptions {
  readonly cases?: number;
  readonly shapes?: readonly (readonly [number, number])[];
  readonly seed?: number;
  /** Map a drawn batch to the inputs both sides see (default: compareLosses'). */
  readonly inputs?: (batch: DrawnBatch) => PolicyLossInputs;
}

const FN = "deviationReport";

/** polgrad's `clip={config.clip}`: the ClipConfig dataclass repr, floats as Python prints them. */
function clipRepr(c: PolicyLossConfig["clip"]): string {
  return c == null
    ? "None"
    : `ClipConfig(eps_low=${pyValue(c.epsLow)}, eps_high=${pyValue(c.epsHigh)}, ratio_cap=${pyValue(c.ratioCap)})`;
}

/** The four fields polgrad's config note names; every other set field is appended after them. */
const NAMED = new Set(["ratio", "surrogate", "clip", "aggregation"]);

/**
 * polgrad's config note, `polgrad: surrogate=…, ratio=…, aggregation=…, clip=ClipConfig(…)`, then
 * every further component the config sets, each as `key=<its config JSON>` (norm_len,
 * is_correction, kl and the fields polgrad 0.2.0 does not have), then the config's source.
 */
function configNote(c: PolicyLossConfig, label: string): string {
  const set = Object.entries(policyLossConfigToJson(c))
    .filter(([k, v]) => !NAMED.has(k) && v !== null)
    .map(([k, v]) => `, ${k}=${JSON.stringify(v)}`)
    .join("");
  return `polgrad: surrogate=${c.surrogate}, ratio=${c.ratio}, aggregation=${c.aggregation}, clip=${clipRepr(c.clip)}${set} (${label})`;
}

/**
 * The note naming the streams beyond logprobs, old_logprobs, advantages and response_mask that
 * the config makes policyLoss read (the rule of policyLoss's validation), each with the component
 * that reads it; null when it reads none.
 */
function streamsNote(c: PolicyLossConfig): string | null {
  const by = (stream: string, why: (string | false)[]) => {
    const w = why.filter((x): x is string => x !== false);
    return w.length === 0 ? [] : [`${stream} (${w.join(", ")})`];
  };
  const reads = [
    ...by("ref_logprobs", [c.kl != null && "kl"]),
    ...by("rollout_logprobs", [
      c.isCorrection != null && "is_correction",
      c.rejection != null && "rejection",
      c.offPolicyMask?.sampling === "rollout" && "off_policy_mask",
    ]),
    ...by("entropies", [
      c.topEntropyQuantile != null && "top_entropy_quantile",
      c.entropyBonus != null && "entropy_bonus",
    ]),
  ];
  return reads.length === 0
    ? null
    : `inputs: the polgrad side also reads ${reads.join(" and ")}; polgrad 0.2.0's deviation_report passes only logprobs, old_logprobs, advantages and response_mask, and raises on such a config`;
}

function paperOf(paper: string | PolicyLossConfig): { config: PolicyLossConfig; label: string } {
  if (typeof paper === "string") {
    if (!(ALGORITHM_NAMES as readonly string[]).includes(paper))
      throw fail(
        ConfigError,
        FN,
        "paper",
        `an algorithm name (${ALGORITHM_NAMES.join(", ")}) or a PolicyLossConfig`,
        fmtValue(paper),
      );
    return {
      config: (ALGORITHMS as Record<string, { loss: PolicyLossConfig }>)[paper]
        ?.loss as PolicyLossConfig,
      label: `ALGORITHMS['${paper}'].loss`,
    };
  }
  if (typeof paper !== "object" || paper === null)
    throw fail(
      ConfigError,
      FN,
      "paper",
      "an algorithm name or a PolicyLossConfig",
      fmtValue(paper),
    );
  return { config: paper, label: "explicit PolicyLossConfig" };
}

/**
 * Compare a paper configuration (polgrad's loss) with a framework model on seeded batches.
 *
 * Formula: compareLosses(policyLoss(config, ·), model.evaluate, options): per case loss_rel =
 * |a − b| / max(|a|, |b|, 1e-12), grad_rel = ‖g_a − g_b‖₂ / max(‖g_a‖₂, ‖g_b‖₂, 1e-12), the
 * cosine; max, max, min over cases; the ratio range of the losses.
 *
 * @param paper - An algorithm name or a PolicyLossConfig. KL and IS-correction configs run (the
 *   batches carry ref and rollout logprobs) where polgrad 0.2.0 raises; the notes name them.
 * @param model - A framework model id (`verl@1dda039b:vanilla:token-mean`).
 * @param options - Cases (default 64, polgrad's), shapes (default [[4, 8]]), seed, input mapping.
 * @returns The report with polgrad's notes: the config line naming every component the config
 *   sets, the extra streams it reads (when it reads any), the framework, the model's provenance.
 * @throws {ConfigError} E_CONFIG for a bad paper argument; {UnknownNameError} for an unknown model.
 * @derivation docs/conformance/deviations.md#pairs
 * @enforcedBy test/conformance/deviationPairs.test.ts > deviationReport > golden: verl token-mean equals pg_clip with ratio_cap 3 and the pair's notes name both sides
 * @enforcedBy test/conformance/deviationPairs.test.ts > deviationReport > golden: a KL config, where polgrad 0.2.0 raises, equals TRL's beta 0.04 model and its notes name the KL term and the reference stream
 * @enforcedBy test/conformance/deviationPairs.test.ts > deviationReport > identity: the notes name every component each registered algorithm's loss sets, and the streams it reads
 * @since 0.2.0
 */
export function deviationReport(
  paper: string | PolicyLossConfig,
  model: string,
  options: DeviationReportOptions = {},
): DeviationReport {
  const p = paperOf(paper);
  const m = getFrameworkModel(model);
  const c = p.config;
  const streams = streamsNote(c);
  const r = compareLosses((i) => policyLoss(c, i), m.evaluate, {
    cases: options.cases ?? 64,
    shapes: options.shapes ?? [[4, 8]],
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.inputs === undefined ? {} : { inputs: options.inputs }),
  });
  return {
    ...r,
    notes: [
      configNote(c, p.label),
      ...(streams === null ? [] : [streams]),
      `framework: ${m.id}`,
      `${m.framework} model of ${m.pin.repo} ${m.pin.path} at ${m.pin.commit.slice(0, 12)}: a polgrad model replayed against fixtures recorded from that code, not vendored code`,
    ],
  };
}

/**
 * The report as polgrad prints it: `conformance over {n} seeded cases: max loss rel diff {:.3e},
 * max grad rel diff {:.3e}, min grad cosine {:.9f}, worst-case seed {seed}`, then one line per note.
 *
 * @param r - The report.
 * @returns The text (no trailing newline).
 * @derivation docs/conformance/deviations.md#pairs
 * @enforcedBy test/conformance/deviationPairs.test.ts > deviationReport > golden: verl token-mean equals pg_clip with ratio_cap 3 and the pair's notes name both sides
 * @since 0.2.0
 */
export function deviationReportSummary(r: DeviationReport): string {
  requireObject("deviationReportSummary", "r", r, "a DeviationReport (deviationReport)", [
    "cases",
    "notes",
  ]);
  return [
    `conformance over ${r.cases} seeded cases: max loss rel diff ${pyExp(r.maxLossRelDiff, 3)}, max grad rel diff ${pyExp(r.maxGradRelDiff, 3)}, min grad cosine ${pyFixed(r.gradCosineMin, 9)}, worst-case seed ${r.worstCaseSeed}`,
    ...r.notes,
  ].join("\n");
}

/** One registered pair: a paper configuration against a framework model, and what it shows. */
export interface DeviationPair {
  readonly title: string;
  /** `match`: the model equals the configuration (within 1e-12 / 1e-11); `deviate`: it does not. */
  readonly expected: "match" | "deviate";
  /** The registered deviation it demonstrates (DEVIATIONS id), or null for the matching group. */
  readonly deviation: string | null;
  readonly paper: PolicyLossConfig;
  readonly model: string;
  readonly options?: DeviationReportOptions;
  /** What the numbers say, one line. */
  readonly reading: string;
}

const ppo = ppoClipConfig;

const SHAPES: readonly (readonly [number, number])[] = [
  [4, 8],
  [3, 6],
];

/**
 * The pairs `polgrad deviations --pairs` measures: the matching group, then each registered loss
 * deviation's framework model against the paper configuration (advantage and PAPO deviations are
 * not loss pairs; `polgrad deviations` measures them).
 *
 * @derivation docs/conformance/deviations.md#pairs
 * @enforcedBy test/conformance/deviationPairs.test.ts > DEVIATION_PAIRS > conformance: every matching pair matches to 1e-12 and every deviating pair deviates, measured now
 * @since 0.2.0
 */
export const DEVIATION_PAIRS: readonly DeviationPair[] = Object.freeze([
  {
    title: "verl token-mean = pg_clip token_mean with ratio_cap 3",
    expected: "match",
    deviation: null,
    paper: ppo("token_mean", { cap: 3 }),
    model: "verl@1dda039b:vanilla:token-mean",
    options: { shapes: SHAPES },
    reading: "verl's vanilla loss is PPO's clip objective, dual-clipped at c = 3, as a token mean",
  },
  {
    title: "OpenRLHF ppo token = pg_clip token_mean",
    expected: "match",
    deviation: null,
    paper: ppo("token_mean"),
    model: "openrlhf@3c3be623:ppo:token",
    options: { shapes: SHAPES },
    reading: "OpenRLHF's default policy loss is PPO's clip objective as a token mean",
  },
  {
    title: "TRL grpo = pg_clip seq_mean_token_mean",
    expected: "match",
    deviation: null,
    paper: ppo("seq_mean_token_mean"),
    model: "trl@f2cd5771:grpo:token",
    options: { shapes: SHAPES },
    reading: "TRL's grpo loss type is GRPO's sequence mean of token means",
  },
  {
    title: "TRL bnpo = pg_clip token_mean",
    expected: "match",
    deviation: null,
    paper: ppo("token_mean"),
    model: "trl@f2cd5771:bnpo:token",
    options: { shapes: SHAPES },
    reading: "TRL's bnpo loss type is a token mean over the micro-batch",
  },
  {
    title: "verl seq-mean-token-sum-norm (T = 8) vs Dr.GRPO with norm_len 16",
    expected: "deviate",
    deviation: "verl-sum-norm-padded-width",
    paper: ppo("token_sum_norm", { cap: 3, normLen: 16 }),
    model: "verl@1dda039b:vanilla:seq-mean-token-sum-norm",
    options: { shapes: [[4, 8]] },
    reading: "a pure rescaling: polgrad/verl = T/norm_len = 0.5 on every case, gradient cosine 1",
  },
  {
    title: "verl token-mean vs PPO eq. 7 without a dual clip (ratios past 3)",
    expected: "deviate",
    deviation: "verl-dual-clip-always-on",
    paper: ppo("token_mean"),
    model: "verl@1dda039b:vanilla:token-mean",
    options: { cases: 16, inputs: wideGaps(1.6) },
    reading: "for A < 0 and r > 3 verl's loss is −3A with no gradient; PPO keeps −r·A",
  },
  {
    title: "verl gspo vs GSPO eq. 7 (the sequence ratio)",
    expected: "deviate",
    deviation: "verl-gspo-token-form",
    paper: ppo("seq_mean_token_mean", { ratio: "sequence" }),
    model: "verl@1dda039b:gspo",
    options: { cases: 16, shapes: SHAPES },
    reading: "values agree, gradients do not: verl uses the GSPO-token form (eq. 14)",
  },
  {
    title: "verl gspo configured token-mean vs GSPO-token with token_mean",
    expected: "deviate",
    deviation: "verl-gspo-ignores-aggregation",
    paper: ppo("token_mean", { ratio: "sequence_token" }),
    model: "verl@1dda039b:gspo",
    options: { cases: 16, shapes: SHAPES },
    reading: "verl's GSPO aggregates seq-mean-token-mean whatever loss_agg_mode says",
  },
  {
    title: "TRL cispo vs CISPO with eps_high 5 (cap 1 + 5)",
    expected: "deviate",
    deviation: "trl-cispo-absolute-cap",
    paper: {
      ratio: "token",
      surrogate: "cispo",
      clip: { epsLow: null, epsHigh: 5 },
      aggregation: "token_mean",
    },
    model: "trl@f2cd5771:cispo:token",
    options: { cases: 16, inputs: wideGaps(1.7) },
    reading: "TRL caps the weight at epsilon_high itself (5), the paper at 1 + ε_high (6)",
  },
  {
    title: "TRL dr_grpo vs pg_clip seq_mean_token_mean",
    expected: "deviate",
    deviation: null,
    paper: ppo("seq_mean_token_mean"),
    model: "trl@f2cd5771:dr_grpo:token",
    options: { shapes: SHAPES },
    reading: "an aggregation mismatch, for contrast: Dr.GRPO sums tokens over a fixed budget",
  },
]);

/** A pair measured now. */
export interface MeasuredPair extends DeviationPair {
  readonly report: DeviationReport;
  /** Whether the measurement shows what `expected` says (match: loss ≤ 1e-12, grad ≤ 1e-11, cosine ≥ 1 − 1e-12). */
  readonly holds: boolean;
}

/**
 * Measure every registered pair now.
 *
 * @returns Each pair with its report and whether it shows what it is registered to show.
 * @derivation docs/conformance/deviations.md#pairs
 * @enforcedBy test/conformance/deviationPairs.test.ts > DEVIATION_PAIRS > conformance: every matching pair matches to 1e-12 and every deviating pair deviates, measured now
 * @since 0.2.0
 */
export function measureDeviationPairs(): MeasuredPair[] {
  return DEVIATION_PAIRS.map((p) => {
    const report = deviationReport(p.paper, p.model, p.options ?? {});
    const matches =
      report.maxLossRelDiff <= 1e-12 &&
      report.maxGradRelDiff <= 1e-11 &&
      report.gradCosineMin >= 1 - 1e-12;
    return { ...p, report, holds: p.expected === "match" ? matches : !matches };
  });
}
