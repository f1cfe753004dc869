/**
 * "Which loss does my run compute?": a framework config resolved against a release, the nearest
 * registered algorithm and every difference from its paper's config, and the pitfalls
 * (docs/conformance/explain.md). Browser-safe.
 */
import { requireObject } from "../../core/validate.js";
import { ConfigError, fail } from "../../errors.js";
import {
  EXPLAIN_COMPONENTS,
  type ExplainComponent,
  type FieldSpec,
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type PolicyLossConfig,
} from "../../losses/config.js";
import { ALGORITHM_NAMES, ALGORITHMS } from "../../registry/registry.js";
import type { AlgorithmSpec } from "../../registry/spec.js";
import { TRL_ARGUMENT_KEYS } from "../releases/trlArgumentKeys.js";
import { classifyKeys, refuseUnmodelled } from "./keyClasses.js";

/** TRL's TrainingArguments and CLI dataclass fields (recorded by tools/record-releases/trlArguments.py). */
const TRL_KNOWN: ReadonlySet<string> = new Set(Object.keys(TRL_ARGUMENT_KEYS));

import { resolveOpenRlhf } from "./openrlhf.js";
import {
  type ConfigForm,
  checkEntryPoint,
  type ParsedFrameworkConfig,
  parseFrameworkConfig,
} from "./parse.js";
import { checkDeletions, checkGroupSelections, findRelease, withNamedConfig } from "./releases.js";
import type { FrameworkResolution } from "./resolution.js";
import { checkResolution } from "./resolution.js";
import { resolveTrl } from "./trl.js";
import { resolveVerl, verlLossKeysUnder } from "./verl.js";

/** One component where the resolved loss and a paper config differ. */
export interface ConfigDifference {
  /** `ratio`, `surrogate`, `surrogate_settings`, `clip`, `aggregation`, `kl`, `is_correction`, `entropy`, `masks`, `ratio_clamp` (losses/config.ts, EXPLAIN_COMPONENTS). */
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
  const found = findRelease(ref, "resolveFrameworkConfig", "ref");
  const parsed =
    typeof config === "string"
      ? parseFrameworkConfig(found.framework, config, {
          ...(options.source === undefined ? {} : { source: options.source }),
          ...(options.form === undefined ? {} : { form: options.form }),
        })
      : config;
  if (parsed.framework !== found.framework)
    throw fail(
      ConfigError,
      "resolveFrameworkConfig",
      "config",
      `a ${found.framework} config (the release is ${found.ref})`,
      `a ${parsed.framework} config`,
    );
  checkEntryPoint("resolveFrameworkConfig", parsed);
  const r = withNamedConfig(found.ref, found, parsed.configName);
  checkGroupSelections(r.ref, r, parsed.groupSelections ?? []);
  const deleted = checkDeletions(r.ref, r, parsed.deletions ?? [], verlLossKeysUnder);
  refuseUnmodelled(r.ref, r, parsed);
  const res = classifyKeys(r.ref, r, parsed, resolveFor(r, parsed, options), {
    strict: true,
    ...(r.framework === "trl" ? { known: TRL_KNOWN } : {}),
  });
  const ignored = [...res.ignored, ...deleted.map((key) => ({ key: `~${key}`, value: null }))];
  return withCommonWarnings(deleted.length === 0 ? res : { ...res, ignored });
}

/** accelerate's `--num_processes N` (or `=N`) among the launcher's words, or undefined. */
function launcherProcesses(skipped: readonly string[]): number | undefined {
  if (!skipped.includes("accelerate")) return undefined;
  for (let i = 0; i < skipped.length; i++) {
    const t = skipped[i] as string;
    const v =
      t === "--num_processes"
        ? skipped[i + 1]
        : t.startsWith("--num_processes=")
          ? t.slice(16)
          : undefined;
    if (v === undefined) continue;
    const n = Number(v);
    if (Number.isSafeInteger(n) && n >= 1) return n;
  }
  return undefined;
}

function resolveFor(
  r: ReturnType<typeof findRelease>,
  parsed: ParsedFrameworkConfig,
  options: ResolveOptions,
): FrameworkResolution {
  switch (r.framework) {
    case "trl": {
      const numProcesses = options.numProcesses ?? launcherProcesses(parsed.skipped);
      return resolveTrl(r, parsed, {
        ...(numProcesses === undefined ? {} : { numProcesses }),
        ...(options.numItemsInBatch === undefined
          ? {}
          : { numItemsInBatch: options.numItemsInBatch }),
      });
    }
    case "verl":
      return resolveVerl(r, parsed);
    case "openrlhf":
      return resolveOpenRlhf(r, parsed);
  }
}

/**
 * The warnings every framework's resolution gets: a lower clip width ≥ 1 (`clip-low-never-binds`:
 * the bound 1 − ε ≤ 0 is below every ratio, so there is no lower clip; named by the setting that
 * holds the value).
 */
function withCommonWarnings(res: FrameworkResolution): FrameworkResolution {
  const epsLow = res.plan.config.clip?.epsLow ?? null;
  if (epsLow === null || epsLow < 1) return res;
  const holder = res.settings.find(
    (s) => s.value === epsLow || (Array.isArray(s.value) && s.value[0] === epsLow),
  );
  const name = holder === undefined ? "the lower clip width" : holder.key;
  return {
    ...res,
    warnings: [
      ...res.warnings,
      {
        code: "clip-low-never-binds",
        message: `${name} = ${epsLow} puts the lower clip bound at 1 − ${epsLow} = ${1 - epsLow} ≤ 0, below every ratio: there is no lower clip (computed as upstream computes the clamp)`,
      },
    ],
  };
}

/**
 * A config's components, each in words, from the field table (losses/config.ts): every
 * field's words joined into its component (`head`: the first, the others in parentheses;
 * `list`: comma-separated, or `none`). `paper`: only the fields a paper's config defines.
 */
function components(
  c: PolicyLossConfig,
  paper: boolean,
): Record<ExplainComponent, { text: string; weight: number }> {
  const words = new Map<ExplainComponent, string[]>();
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const e = (POLICY_LOSS_FIELDS[k] as FieldSpec<unknown>).explain;
    if (paper && e.paper === false) continue;
    const w = e.words(c[k], c);
    const list = words.get(e.component) ?? [];
    if (w !== null) list.push(w);
    words.set(e.component, list);
  }
  const out = {} as Record<ExplainComponent, { text: string; weight: number }>;
  for (const [name, { weight, join }] of Object.entries(EXPLAIN_COMPONENTS) as [
    ExplainComponent,
    (typeof EXPLAIN_COMPONENTS)[ExplainComponent],
  ][]) {
    const [head, ...rest] = words.get(name) ?? [];
    const text =
      head === undefined
        ? "none"
        : join === "list"
          ? [head, ...rest].join(", ")
          : `${head}${rest.length === 0 ? "" : ` (${rest.join(", ")})`}`;
    out[name] = { text, weight };
  }
  return out;
}

/** The differing components of two configs, and the weighted distance. */
function compareComponents(
  a: PolicyLossConfig,
  b: PolicyLossConfig,
  paper: boolean,
): { distance: number; differences: ConfigDifference[] } {
  const x = components(a, paper);
  const y = components(b, paper);
  const differences: ConfigDifference[] = [];
  let distance = 0;
  for (const k of Object.keys(x) as ExplainComponent[]) {
    if (x[k].text !== y[k].text) {
      differences.push({ component: k, run: x[k].text, paper: y[k].text });
      distance += x[k].weight;
    }
  }
  return { distance, differences };
}

/**
 * Compare two run configs, component by component, over every field of the config (those a
 * paper's config leaves undefined too, such as the rule for rows without a response token).
 *
 * Formula: distance = Σ over differing components of its weight (ratio and surrogate 3,
 * aggregation 2, the rest 1).
 *
 * @param a - One config (its words are `run`).
 * @param b - The other (its words are `paper`).
 * @returns The distance and the differences.
 * @derivation docs/conformance/explain.md#nearest-algorithm
 * @enforcedBy test/conformance/frameworkConfig/explainFields.test.ts > compareConfigs > property: two configs that differ in any single field differ in a component
 * @since 0.3.0
 */
export function compareConfigs(
  a: PolicyLossConfig,
  b: PolicyLossConfig,
): { distance: number; differences: ConfigDifference[] } {
  for (const [arg, x] of [
    ["a", a],
    ["b", b],
  ] as const)
    requireObject("compareConfigs", arg, x, "a PolicyLossConfig", [
      "ratio",
      "surrogate",
      "aggregation",
    ]);
  return compareComponents(a, b, false);
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
  return compareComponents(config, spec.loss, true);
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
