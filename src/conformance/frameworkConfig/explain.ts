/**
 * "Which loss does my run compute?": a framework config resolved against a release, the nearest
 * registered algorithm and every difference from its paper's config, and the pitfalls
 * (docs/conformance/explain.md). Browser-safe.
 */
import { mustBe } from "../../core/message.js";
import { requireObject } from "../../core/validate.js";
import { ConfigError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import { ALGORITHM_NAMES, ALGORITHMS } from "../../registry/registry.js";
import type { AlgorithmSpec } from "../../registry/spec.js";
import { resolveOpenRlhf } from "./openrlhf.js";
import { type ConfigForm, type ParsedFrameworkConfig, parseFrameworkConfig } from "./parse.js";
import { findRelease } from "./releases.js";
import type { FrameworkResolution } from "./resolution.js";
import { checkResolution } from "./resolution.js";
import { resolveTrl } from "./trl.js";
import { resolveVerl } from "./verl.js";

/** One component where the resolved loss and a paper config differ. */
export interface ConfigDifference {
  /** `ratio`, `surrogate`, `clip`, `aggregation`, `kl`, `is_correction`, `entropy`, `masks`, `ratio_clamp`. */
  readonly component: string;
  /** The resolved config's value, in words. */
  readonly run: string;
  /** The paper config's value, in words. */
  readonly paper: string;
}

/** The nearest registered algorithm. */
export interface NearestAlgorithm {
  readonly name: string;
  readonly title: string;
  readonly arxiv: string | null;
  /** The weighted count of differing components (0: the paper's loss exactly). */
  readonly distance: number;
  readonly differences: readonly ConfigDifference[];
}

/** A resolution with its nearest algorithms. */
export interface Explanation {
  readonly resolution: FrameworkResolution;
  /** The nearest registered algorithm (ties: registry order). */
  readonly nearest: NearestAlgorithm;
  /** The next two, for context. */
  readonly runnersUp: readonly { readonly name: string; readonly distance: number }[];
}

/** The options of {@link resolveFrameworkConfig}. */
export interface ResolveOptions {
  /** Where the text came from (named by errors). */
  readonly source?: string;
  /** Force the config form (default: detected). */
  readonly form?: ConfigForm;
  /** accelerate / launcher processes (TRL `num_processes`; default 1). */
  readonly numProcesses?: number;
  /** TRL's num_items_in_batch (default: numProcesses × the batch's tokens). */
  readonly numItemsInBatch?: number;
}

/**
 * Resolve a framework config against a recorded release.
 *
 * @param ref - `trl@v1.9.0`, `verl@1dda039b`, `openrlhf@v0.11.0` (see findRelease).
 * @param config - The config text (YAML, JSON or arguments) or already parsed entries.
 * @param options - Source name, form, world sizes.
 * @returns The resolution: settings with their sources, the loss plan, the algebra, warnings.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown release.
 * @throws {ConfigError} E_CONFIG for an unknown loss key (did-you-mean) or a bad value.
 * @throws {IoError} E_IO when the framework's release facts cannot be read here (a browser before
 *   loadReleaseFacts; docs/browser.md#framework-configs).
 * @derivation docs/conformance/explain.md
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: TRL v1.9.0's default is dapo with an on-policy ratio
 * @since 0.2.0
 */
export function resolveFrameworkConfig(
  ref: string,
  config: string | ParsedFrameworkConfig = "",
  options: ResolveOptions = {},
): FrameworkResolution {
  const r = findRelease(ref, "resolveFrameworkConfig", "ref");
  const parsed =
    typeof config === "string"
      ? parseFrameworkConfig(r.framework, config, {
          ...(options.source === undefined ? {} : { source: options.source }),
          ...(options.form === undefined ? {} : { form: options.form }),
        })
      : config;
  if (parsed.framework !== r.framework)
    throw new ConfigError(
      "resolveFrameworkConfig",
      "config",
      mustBe(
        "resolveFrameworkConfig",
        "config",
        `a ${r.framework} config (the release is ${r.ref})`,
        `a ${parsed.framework} config`,
      ),
    );
  switch (r.framework) {
    case "trl":
      return resolveTrl(r, parsed, {
        ...(options.numProcesses === undefined ? {} : { numProcesses: options.numProcesses }),
        ...(options.numItemsInBatch === undefined
          ? {}
          : { numItemsInBatch: options.numItemsInBatch }),
      });
    case "verl":
      return resolveVerl(r, parsed);
    case "openrlhf":
      return resolveOpenRlhf(r, parsed);
  }
}

const num = (x: number | null | undefined): string =>
  x === null || x === undefined ? "none" : String(x);

/** The components of a config, each in words, for comparison. */
function components(c: PolicyLossConfig): Record<string, { text: string; weight: number }> {
  const clip = c.clip;
  const kl = c.kl ?? null;
  const is = c.isCorrection ?? null;
  const ent = [
    c.topEntropyQuantile == null ? null : `top-entropy mask ρ = ${c.topEntropyQuantile}`,
    c.entropyBonus == null ? null : `entropy bonus ${c.entropyBonus.coef}`,
  ].filter((x) => x !== null);
  const masks = [
    c.offPolicyMask == null ? null : `off-policy mask ${c.offPolicyMask.threshold}`,
    c.rejection == null || c.rejection.length === 0
      ? null
      : `${c.rejection.length} rejection rule(s)`,
  ].filter((x) => x !== null);
  const params =
    c.surrogate === "cispo"
      ? ` (cap ${c.cispo?.cap ?? "5"})`
      : c.surrogate === "sapo"
        ? ` (τ+ ${c.sapo?.tauPos ?? 1}, τ− ${c.sapo?.tauNeg ?? 1.05})`
        : "";
  return {
    ratio: { text: c.ratio, weight: 3 },
    surrogate: { text: `${c.surrogate}${params}`, weight: 3 },
    clip: {
      text:
        clip === null
          ? "none"
          : `ε_low ${num(clip.epsLow)}, ε_high ${num(clip.epsHigh)}${clip.ratioCap == null ? "" : `, dual clip ${clip.ratioCap}`}`,
      weight: 1,
    },
    aggregation: {
      text: `${c.aggregation}${c.aggregation === "token_sum_norm" ? ` (norm_len ${num(c.normLen)})` : ""}`,
      weight: 2,
    },
    kl: {
      text:
        kl === null
          ? "none"
          : `${kl.kind} × ${kl.coef} in the loss${kl.weight == null ? "" : `, weighted by ${kl.weight}`}${kl.clamp == null ? "" : ", clamped"}`,
      weight: 1,
    },
    is_correction: {
      text: is === null ? "none" : `${is.level} ${is.mode ?? "truncate"}, cap ${num(is.cap)}`,
      weight: 1,
    },
    entropy: { text: ent.length === 0 ? "none" : ent.join(", "), weight: 1 },
    masks: { text: masks.length === 0 ? "none" : masks.join(", "), weight: 1 },
    ratio_clamp: {
      text:
        c.ratioClamp == null
          ? "none"
          : `${c.ratioClamp.level} [${num(c.ratioClamp.lower)}, ${num(c.ratioClamp.upper)}]`,
      weight: 1,
    },
  };
}

/**
 * Compare a config with a registered algorithm's loss, component by component.
 *
 * Formula: distance = Σ over differing components of its weight (ratio and surrogate 3,
 * aggregation 2, the rest 1).
 *
 * @param config - The resolved per-micro-batch config.
 * @param spec - A registered algorithm.
 * @returns The distance and the differences.
 * @derivation docs/conformance/explain.md#nearest-algorithm
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: TRL v1.9.0's default is dapo with an on-policy ratio
 * @since 0.2.0
 */
export function compareWithAlgorithm(
  config: PolicyLossConfig,
  spec: AlgorithmSpec,
): { distance: number; differences: ConfigDifference[] } {
  requireObject("compareWithAlgorithm", "config", config, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  requireObject("compareWithAlgorithm", "spec", spec, "an AlgorithmSpec", ["loss"]);
  requireObject("compareWithAlgorithm", "spec.loss", spec.loss, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  const a = components(config);
  const b = components(spec.loss);
  const differences: ConfigDifference[] = [];
  let distance = 0;
  for (const k of Object.keys(a)) {
    const x = a[k] as { text: string; weight: number };
    const y = b[k] as { text: string; weight: number };
    if (x.text !== y.text) {
      differences.push({ component: k, run: x.text, paper: y.text });
      distance += x.weight;
    }
  }
  return { distance, differences };
}

/**
 * Explain a framework config: resolve it, then find the nearest registered algorithm.
 *
 * @param ref - The release reference.
 * @param config - The config text or parsed entries.
 * @param options - As {@link resolveFrameworkConfig}.
 * @returns The explanation.
 * @derivation docs/conformance/explain.md
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: TRL v1.9.0's default is dapo with an on-policy ratio
 * @since 0.2.0
 */
export function explainFrameworkConfig(
  ref: string,
  config: string | ParsedFrameworkConfig = "",
  options: ResolveOptions = {},
): Explanation {
  return explainResolution(resolveFrameworkConfig(ref, config, options));
}

/**
 * The explanation of a resolution: the nearest registered algorithm (PAPO entries excluded; ties
 * in registry order) with every difference, and the next two.
 *
 * @param resolution - A resolution (resolveFrameworkConfig).
 * @returns The explanation.
 * @derivation docs/conformance/explain.md#nearest-algorithm
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: TRL v1.9.0's default is dapo with an on-policy ratio
 * @since 0.2.0
 */
export function explainResolution(resolution: FrameworkResolution): Explanation {
  checkResolution("explainResolution", "resolution", resolution);
  const ranked = ALGORITHM_NAMES.map((name) => {
    const spec = ALGORITHMS[name];
    return { spec, ...compareWithAlgorithm(resolution.plan.config, spec) };
  })
    .filter((x) => x.spec.papo === undefined)
    .sort((x, y) => x.distance - y.distance);
  const best = ranked[0] as (typeof ranked)[number];
  // A run fact, not a config difference: the ratio the paper defines is exactly 1 here.
  const onPolicy: ConfigDifference[] = resolution.plan.onPolicy
    ? [
        {
          component: "old_logprobs",
          run: "not computed: the ratio is exactly 1 (on-policy)",
          paper: `the ${best.spec.loss.ratio} ratio of the sampling policy's logprobs`,
        },
      ]
    : [];
  return {
    resolution,
    nearest: {
      name: best.spec.name,
      title: best.spec.citation.title,
      arxiv: best.spec.citation.arxiv,
      distance: best.distance,
      differences: [...onPolicy, ...best.differences],
    },
    runnersUp: ranked.slice(1, 3).map((x) => ({ name: x.spec.name, distance: x.distance })),
  };
}
