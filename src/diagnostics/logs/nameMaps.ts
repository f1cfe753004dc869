/**
 * Which logged metric name of each framework carries which log quantity
 * (docs/diagnostics/metric-names.md): a table written by hand from the frameworks' source at the
 * recorded releases (src/diagnostics/data/metric-names.json), our judgement and not a recording.
 * `mapMetricNames` maps a run's names with it and never guesses: a name no table lists is
 * unmapped. Browser-safe once the recording is loaded.
 */
import { oneOf } from "../../core/names.js";
import { METRIC_FRAMEWORKS, type MetricFramework, metricNames } from "./metricNames.js";
import type { LogQuantity } from "./quantities.js";

/** One metric name of a framework and the quantity it carries. */
export interface NameMapEntry {
  /** The name as the framework writes it (before any logger prefix). */
  readonly name: string;
  readonly quantity: LogQuantity;
  /** Why, where it is not obvious. */
  readonly reason?: string;
  /** The first recorded release where the name carries the quantity (earlier ones log something else under it). */
  readonly from?: string;
  /** The last recorded release where it does. */
  readonly until?: string;
  /** A name carrying the same quantity that wins when the log has both. */
  readonly secondTo?: string;
}

/** TRL's GRPOTrainer (`self._metrics`) and transformers' Trainer (`grad_norm`). */
const TRL: readonly NameMapEntry[] = [
  { name: "entropy", quantity: "entropy" },
  { name: "clip_ratio/low_mean", quantity: "clip_low" },
  { name: "clip_ratio/high_mean", quantity: "clip_high" },
  { name: "clip_ratio/region_mean", quantity: "clip_total" },
  {
    name: "clip_ratio",
    quantity: "clip_total",
    reason:
      "fraction of tokens where the clipped term is taken (v0.16: per_token_loss1 < per_token_loss2; later the Liger loss path)",
    secondTo: "clip_ratio/region_mean",
  },
  {
    name: "kl",
    quantity: "kl_ref",
    reason: "the β-term KL to the reference model (logged when beta ≠ 0)",
  },
  { name: "completions/mean_length", quantity: "response_length" },
  { name: "completion_length", quantity: "response_length", reason: "its name before v0.17.0" },
  {
    name: "completions/clipped_ratio",
    quantity: "truncation_rate",
    reason: "fraction of completions without EOS (cut at max_completion_length)",
  },
  { name: "sampling/sampling_logp_difference/mean", quantity: "logp_diff_mean" },
  { name: "sampling/sampling_logp_difference/max", quantity: "logp_diff_max" },
  { name: "sampling/importance_sampling_ratio/mean", quantity: "is_ratio_mean" },
  { name: "sampling/importance_sampling_ratio/max", quantity: "is_ratio_max" },
  { name: "sampling/importance_sampling_ratio/min", quantity: "is_ratio_min" },
  { name: "reward", quantity: "reward_mean" },
  {
    name: "reward_std",
    quantity: "reward_std",
    reason:
      "std of the step's rewards from v0.27.0; before, the mean of the per-group stds (v0.22–v0.26: per scale_rewards)",
    from: "v0.27.0",
  },
  { name: "frac_reward_zero_std", quantity: "zero_std_frac" },
  { name: "grad_norm", quantity: "grad_norm", reason: "added by transformers' Trainer.log" },
];

/** verl's actor, trainer, rollout-correction metrics. */
const VERL: readonly NameMapEntry[] = [
  {
    name: "actor/entropy",
    quantity: "entropy",
    reason:
      "until v0.6.1 the trainer's entropy of the old-log-prob pass; from v0.7.0 also the actor's update (same name)",
  },
  {
    name: "actor/pg_clipfrac",
    quantity: "clip_total",
    reason:
      "fraction of tokens where the clipped surrogate is taken, either side (pg_losses2 > pg_losses1)",
  },
  {
    name: "actor/ppo_kl",
    quantity: "kl_old",
    reason: "masked mean of log π_old − log π_θ (k1) over the update's tokens",
  },
  {
    name: "actor/kl_loss",
    quantity: "kl_ref",
    reason:
      "the KL value to the reference only until v0.5.0; from v0.6.0 scaled by the micro-batch loss factor, summed over micro-batches (v0.7) or aggregated per the loss mode (engine)",
    until: "v0.5.0",
  },
  {
    name: "actor/reward_kl_penalty",
    quantity: "kl_ref",
    reason:
      "KL to the reference applied in the reward (use_kl_in_reward); exclusive with the KL loss in practice",
    secondTo: "actor/kl_loss",
  },
  { name: "actor/grad_norm", quantity: "grad_norm" },
  { name: "response_length/mean", quantity: "response_length" },
  {
    name: "response_length/clip_ratio",
    quantity: "truncation_rate",
    reason: "fraction of responses whose length equals the maximum",
  },
  {
    name: "critic/score/mean",
    quantity: "reward_mean",
    reason: "the sequence score before any in-reward KL penalty (critic/rewards/mean is after it)",
  },
  {
    name: "rollout_corr/rollout_is_mean",
    quantity: "is_ratio_mean",
    reason: "token-masked mean of the applied (truncated) IS weights π_old/π_rollout",
  },
  {
    name: "rollout_corr/rollout_is_max",
    quantity: "is_ratio_max",
    reason: "from the raw (untruncated) log-ratio, safety-clamped",
  },
  {
    name: "rollout_corr/rollout_is_min",
    quantity: "is_ratio_min",
    reason: "from the raw (untruncated) log-ratio",
  },
];

/** OpenRLHF's PPO status dict (ppo_actor, experience maker, trainer). */
const OPENRLHF: readonly NameMapEntry[] = [
  {
    name: "entropy_loss",
    quantity: "entropy",
    reason:
      "the masked mean token entropy itself (the loss subtracts coef × it); logged when an entropy coef is set",
  },
  {
    name: "ppo_clip_ratio",
    quantity: "clip_total",
    reason: "fraction of tokens where surr2 < surr1 (the clipped term taken)",
  },
  { name: "ppo_kl", quantity: "kl_old", reason: "masked mean of −log ratio π_θ/π_old" },
  {
    name: "kl",
    quantity: "kl_ref",
    reason: "approximate KL of the actor to the initial (reference) model",
  },
  { name: "rollout/response_length_mean", quantity: "response_length" },
  {
    name: "response_length",
    quantity: "response_length",
    reason: "its name until v0.9.7",
    secondTo: "rollout/response_length_mean",
  },
  { name: "rollout/truncated_rate", quantity: "truncation_rate" },
  {
    name: "response_clip_ratio",
    quantity: "truncation_rate",
    reason: "per-sample 1 when the response reached the generation limit, averaged",
    secondTo: "rollout/truncated_rate",
  },
  {
    name: "rollout/reward_mean",
    quantity: "reward_mean",
    reason: "computed before dynamic batch splitting",
  },
  {
    name: "reward",
    quantity: "reward_mean",
    reason: "mean over the training batch's samples",
    secondTo: "rollout/reward_mean",
  },
  { name: "rollout/reward_std", quantity: "reward_std" },
  { name: "actor_grad_norm", quantity: "grad_norm" },
];

/** Each framework's name → quantity table. */
export const NAME_MAPS: Readonly<Record<MetricFramework, readonly NameMapEntry[]>> = {
  trl: TRL,
  verl: VERL,
  openrlhf: OPENRLHF,
};

/**
 * The prefixes a framework's loggers add to every name, as recorded: transformers' `rewrite_logs`
 * (TensorBoard, W&B, … callbacks) writes TRL's train-mode names as `train/<name>`; OpenRLHF's
 * wandb/TensorBoard loggers write `train/<name>`. verl logs names as they are.
 */
export const LOGGER_PREFIXES: Readonly<Record<MetricFramework, readonly string[]>> = {
  trl: ["train/"],
  verl: [],
  openrlhf: ["train/"],
};

/** What `mapMetricNames` found. */
export interface NameMapResult {
  /** The framework whose table was used; null when "auto" could not decide. */
  readonly framework: MetricFramework | null;
  /** How the framework was chosen (given, or the coverage counts of "auto"). */
  readonly why: string;
  /** For "auto": the frameworks tied best (empty when given or decided). */
  readonly candidates: readonly MetricFramework[];
  /** Each quantity found and the log name (as given) carrying it. */
  readonly mapped: Partial<Record<LogQuantity, string>>;
  /** Quantities two or more of the log's names carry with no rule between them. */
  readonly ambiguous: readonly {
    readonly quantity: LogQuantity;
    readonly names: readonly string[];
  }[];
  /** Mapped names the given release does not log (left out of `mapped`). */
  readonly absent: readonly { readonly name: string; readonly quantity: LogQuantity }[];
  /** Known names not used: outside the releases where they carry the quantity, or second to another name. */
  readonly setAside: readonly {
    readonly name: string;
    readonly quantity: LogQuantity;
    readonly why: string;
  }[];
  /** The log's names no table entry matches, in the order given. */
  readonly unmapped: readonly string[];
}

/** The log name's framework name: itself, or without one recorded logger prefix. */
function baseNames(framework: MetricFramework, name: string): string[] {
  const out = [name];
  for (const p of LOGGER_PREFIXES[framework])
    if (name.startsWith(p) && name.length > p.length) out.push(name.slice(p.length));
  return out;
}

/** How many of `names` a framework records at some release (exactly, or under a recorded prefix). */
function coverage(framework: MetricFramework, names: readonly string[]): number {
  const rec = metricNames(framework);
  const all = new Set<string>(rec.shared);
  for (const r of rec.releases) for (const n of r.exact) all.add(n);
  return names.filter((n) => baseNames(framework, n).some((b) => all.has(b))).length;
}

/**
 * Map a run's logged metric names to log quantities with a framework's table. Exact names first,
 * then a name under a logger prefix the framework is recorded to add (`train/entropy` for TRL
 * under TensorBoard). Nothing is guessed: a name no entry lists is `unmapped`; two names for one
 * quantity are `ambiguous` unless the table ranks them (`secondTo`). With `release`, a mapped name
 * that release does not log is `absent`, and a name whose meaning differs there is set aside;
 * without it, names whose meaning depends on the release are set aside.
 *
 * @param framework - `trl`, `verl`, `openrlhf`, or `auto`: the framework whose recorded names
 *   cover most of `names` (a tie gives framework null and the candidates).
 * @param names - The run's metric names as logged.
 * @param release - A recorded release label of the framework (not with `auto`).
 * @returns What maps, what is ambiguous, absent, set aside or unmapped, and the framework used.
 * @throws {UnknownNameError} E_UNKNOWN_NAME for an unknown framework or release.
 */
export function mapMetricNames(
  framework: MetricFramework | "auto",
  names: readonly string[],
  release?: string,
): NameMapResult {
  const given = oneOf("mapMetricNames", "framework", framework, [...METRIC_FRAMEWORKS, "auto"]);
  let fw: MetricFramework;
  let why: string;
  if (given === "auto") {
    const counts = METRIC_FRAMEWORKS.map((f) => ({ f, n: coverage(f, names) }));
    const best = Math.max(...counts.map((c) => c.n));
    const top = counts.filter((c) => c.n === best).map((c) => c.f);
    const tally = counts.map((c) => `${c.f} ${c.n}/${names.length}`).join(", ");
    if (best === 0 || top.length > 1) {
      return {
        framework: null,
        why: `auto: no single framework records the most names (${tally})`,
        candidates: best === 0 ? [] : top,
        mapped: {},
        ambiguous: [],
        absent: [],
        setAside: [],
        unmapped: [...names],
      };
    }
    fw = top[0] as MetricFramework;
    why = `auto: ${fw} records the most of the log's names (${tally})`;
  } else {
    fw = given;
    why = `given: ${fw}`;
  }
  const rec = metricNames(fw);
  const labels = rec.releases.map((r) => r.label);
  const at =
    release === undefined
      ? -1
      : labels.indexOf(oneOf("mapMetricNames", "release", release, labels));
  const byName = new Map(NAME_MAPS[fw].map((e) => [e.name, e]));
  const hits: { log: string; entry: NameMapEntry }[] = [];
  const unmapped: string[] = [];
  for (const log of names) {
    const entry = baseNames(fw, log)
      .map((b) => byName.get(b))
      .find((e) => e !== undefined);
    if (entry === undefined) unmapped.push(log);
    else hits.push({ log, entry });
  }
  const absent: { name: string; quantity: LogQuantity }[] = [];
  const setAside: { name: string; quantity: LogQuantity; why: string }[] = [];
  const byQuantity = new Map<LogQuantity, string[]>();
  const used = new Set<string>();
  // Ranked names last, so that "second to" looks at the names actually used.
  const ordered = [
    ...hits.filter((h) => h.entry.secondTo === undefined),
    ...hits.filter((h) => h.entry.secondTo !== undefined),
  ];
  for (const { log, entry } of ordered) {
    const q = entry.quantity;
    if (
      at >= 0 &&
      !rec.shared.has(entry.name) &&
      !(rec.releases[at]?.exact.has(entry.name) ?? false)
    ) {
      absent.push({ name: log, quantity: q });
      continue;
    }
    const lo = entry.from === undefined ? 0 : labels.indexOf(entry.from);
    const hi = entry.until === undefined ? labels.length - 1 : labels.indexOf(entry.until);
    if ((entry.from !== undefined || entry.until !== undefined) && (at < 0 || at < lo || at > hi)) {
      const range = `${entry.from ?? labels[0]}..${entry.until ?? labels[labels.length - 1]}`;
      setAside.push({
        name: log,
        quantity: q,
        why:
          at < 0
            ? `carries ${q} only at releases ${range}; give the release`
            : `carries ${q} only at releases ${range}, not ${release}`,
      });
      continue;
    }
    if (entry.secondTo !== undefined && used.has(entry.secondTo)) {
      setAside.push({ name: log, quantity: q, why: `second to ${entry.secondTo}, also logged` });
      continue;
    }
    used.add(entry.name);
    byQuantity.set(q, [...(byQuantity.get(q) ?? []), log]);
  }
  const mapped: Partial<Record<LogQuantity, string>> = {};
  const ambiguous: { quantity: LogQuantity; names: string[] }[] = [];
  for (const [q, logs] of byQuantity) {
    if (logs.length === 1) mapped[q] = logs[0] as string;
    else ambiguous.push({ quantity: q, names: logs });
  }
  return { framework: fw, why, candidates: [], mapped, ambiguous, absent, setAside, unmapped };
}

/**
 * Whether some framework's table maps `name` (exactly or under a recorded logger prefix): the
 * names whose points a follower keeps (the others cannot reach a detector). @internal
 */
export function isMappedName(name: string): boolean {
  return METRIC_FRAMEWORKS.some((fw) => {
    const names = MAPPED_NAMES[fw];
    return baseNames(fw, name).some((b) => names.has(b));
  });
}

const MAPPED_NAMES: Readonly<Record<MetricFramework, ReadonlySet<string>>> = {
  trl: new Set(NAME_MAPS.trl.map((e) => e.name)),
  verl: new Set(NAME_MAPS.verl.map((e) => e.name)),
  openrlhf: new Set(NAME_MAPS.openrlhf.map((e) => e.name)),
};
