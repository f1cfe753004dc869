/**
 * The per-step part of a run diagnosis, and its exact merge (docs/diagnostics/run.md#sharding-a-run):
 * a run too large for one machine is diagnosed in step ranges (`diagnose DIR --steps A-B
 * --summary-out part.json`), and the parts are merged (`diagnose --merge part*.json`) into the
 * report one pass gives. Every cross-step quantity is a function of the per-step records in step
 * order, the entries (for the stride and gaps) and counts that add up, so merging disjoint ranges
 * in step order reproduces the one-pass inputs exactly.
 */
import { fmtValue } from "../core/message.js";
import { ConfigError, fail } from "../errors.js";
import type { RunProblem } from "../io/runFolder.js";
import type { DetectorName } from "./diagnoseBatch.js";

/** Per-step scalars kept for the run (null where the detector was skipped). */
export interface RunStep {
  readonly step: number;
  readonly file: string;
  readonly essRatio: number | null;
  readonly mismatchGapStd: number | null;
  readonly catastrophicCount: number | null;
  /** At most 10 catastrophic positions of the step, row-major. */
  readonly catastrophicIndices: readonly (readonly [number, number])[];
  readonly entropy: number | null;
  /** Tokens whose PG_CLIP gradient the clip kills (A ≠ 0: the clamp binds, or past the dual-clip cap), of all response tokens. */
  readonly clipKilledFrac: number | null;
  /** Tokens with zero advantage (no gradient whatever the ratio), of all response tokens. */
  readonly zeroAdvFrac: number | null;
  /** The clip census' four quadrants (ClipReport's fractions of all response tokens): A > 0 with r above / below the band, A < 0 below / above it. */
  readonly clipPosHighFrac: number | null;
  readonly clipPosLowFrac: number | null;
  readonly clipNegLowFrac: number | null;
  readonly clipNegHighFrac: number | null;
  readonly lengthSlope: number | null;
  readonly lengthCiLow: number | null;
  readonly lengthCiHigh: number | null;
  /** The mean k3 KL to the reference over the response tokens (klRef.ts), null without reference log-probs; absent in summaries written before it. */
  readonly klRef?: number | null;
  /** The step's reward mean and sample std over its sequences (rewards.ts), null without `rewards`; absent in summaries written before them. */
  readonly rewardMean?: number | null;
  readonly rewardStd?: number | null;
  /** The fraction of the step's sequences cut at the length limit, null without `truncated`. */
  readonly truncationRate?: number | null;
}

/** An inclusive range of step numbers. */
export interface StepRange {
  readonly from: number;
  readonly to: number;
}

/** The kind tag of a {@link RunSteps} document. */
export const RUN_STEPS_KIND = "polgrad-run-steps";

/** The per-step settings that must agree between the parts of one run. */
export interface RunStepSettings {
  readonly clip: unknown;
  readonly aggregation: unknown;
  readonly normLen: unknown;
  readonly catastrophicGap: unknown;
  readonly names: unknown;
  readonly rename: unknown;
  readonly strict: unknown;
  readonly responseSlice: unknown;
  /** Present only when rows with no response token are dropped (`drop`). */
  readonly emptyRows?: unknown;
}

/** The per-step part of a run diagnosis over a step range (JSON-able; a shard's summary file). */
export interface RunSteps {
  readonly kind: typeof RUN_STEPS_KIND;
  readonly version: 1;
  readonly dir: string;
  /** The step range collected, or null for the whole run. */
  readonly range: StepRange | null;
  /** The per-step settings as canonical JSON (compared between parts; {@link RunStepSettings}). */
  readonly settings: string;
  /**
   * Every step number in the range named by an entry, read or not, with the candidate diagnosed
   * (else the first): the stride and gaps come from their union.
   */
  readonly entries: readonly { readonly step: number; readonly name: string }[];
  /** The diagnosed steps, in step order. */
  readonly steps: readonly RunStep[];
  /**
   * Problems of the entries themselves: candidates not read because an earlier one of their step
   * was diagnosed, unusable step numbers.
   */
  readonly entryProblems: readonly RunProblem[];
  /**
   * Candidates that could not be read or diagnosed, with the reason (an empty step folder, a
   * directory named like a file, a symlink loop, a file the reader rejects), in candidate order.
   */
  readonly unreadable: readonly RunProblem[];
  readonly skipped: readonly {
    readonly detector: DetectorName;
    readonly reason: string;
    readonly steps: number;
  }[];
  readonly names: {
    readonly maps: readonly {
      readonly map: string;
      readonly detected: boolean;
      readonly steps: number;
    }[];
    readonly ignored: readonly { readonly name: string; readonly steps: number }[];
    readonly notes: readonly string[];
  };
  readonly mismatchOverflowSteps: readonly number[];
  /** Entries of the folder that are no step (for messages). */
  readonly others: { readonly names: readonly string[]; readonly count: number };
}

/** The per-step settings of diagnose options, as compared between parts. @internal */
export function stepSettings(o: {
  readonly clip?: unknown;
  readonly aggregation?: unknown;
  readonly normLen?: unknown;
  readonly catastrophicGap?: unknown;
  readonly names?: unknown;
  readonly rename?: unknown;
  readonly strict?: unknown;
  readonly responseSlice?: unknown;
  readonly emptyRows?: unknown;
}): string {
  const settings: RunStepSettings = {
    clip: o.clip ?? null,
    aggregation: o.aggregation ?? null,
    normLen: o.normLen ?? null,
    catastrophicGap: o.catastrophicGap ?? null,
    names: o.names ?? null,
    rename: o.rename ?? null,
    strict: o.strict ?? false,
    responseSlice: o.responseSlice ?? null,
    // Only when set: parts written before the option existed keep their settings string.
    ...(o.emptyRows === undefined || o.emptyRows === "reject" ? {} : { emptyRows: o.emptyRows }),
  };
  return JSON.stringify(settings);
}

/** Validate `options.steps`: undefined, or integers from ≤ to. @internal */
export function checkRange(fn: string, steps: unknown): StepRange | null {
  if (steps === undefined || steps === null) return null;
  const r = steps as { from?: unknown; to?: unknown };
  if (
    typeof steps !== "object" ||
    !Number.isSafeInteger(r.from) ||
    !Number.isSafeInteger(r.to) ||
    (r.from as number) < 0 ||
    (r.to as number) < (r.from as number)
  ) {
    throw fail(
      ConfigError,
      fn,
      "steps",
      "{from, to} with integers 0 <= from <= to",
      fmtValue(steps),
    );
  }
  return { from: r.from as number, to: r.to as number };
}

/** Validate `options.essAlarm` (default 0.5). @internal */
export function checkEssAlarm(fn: string, essAlarm: unknown): number {
  const v = essAlarm ?? 0.5;
  if (typeof v !== "number" || !(v >= 0 && v <= 1)) {
    throw fail(ConfigError, fn, "essAlarm", "in [0, 1]", fmtValue(v));
  }
  return v;
}

function isRunSteps(x: unknown): x is RunSteps {
  const r = x as RunSteps;
  return (
    typeof x === "object" &&
    x !== null &&
    r.kind === RUN_STEPS_KIND &&
    r.version === 1 &&
    Array.isArray(r.entries) &&
    Array.isArray(r.steps) &&
    Array.isArray(r.entryProblems) &&
    Array.isArray(r.unreadable) &&
    Array.isArray(r.skipped) &&
    typeof r.settings === "string" &&
    typeof r.names === "object" &&
    r.names !== null &&
    Array.isArray(r.mismatchOverflowSteps)
  );
}

/**
 * Merge the per-step parts of one run into the part of their union.
 *
 * Formula: parts ordered by their first entry's step; entries, steps, unreadable steps and
 * overflow steps concatenated (so in step order); counts keyed by detector and reason, by map and
 * by tensor name added up, each key in order of first appearance (as one pass meets them); notes
 * united in that order; entry problems concatenated, those without a step once.
 *
 * @param fn - The public function named in errors.
 * @param parts - Parts of one run over disjoint step ranges.
 * @returns The union's part.
 * @throws {ConfigError} E_CONFIG for no parts, a part that is no RunSteps, parts whose step
 *   ranges interleave or share a step, or parts collected with other per-step settings.
 * @internal
 */
export function mergeRunSteps(fn: string, parts: readonly RunSteps[]): RunSteps {
  if (!Array.isArray(parts) || parts.length === 0) {
    throw fail(ConfigError, fn, "parts", "at least one RunSteps", fmtValue(parts));
  }
  // An index loop: a hole is a part that is no RunSteps (forEach would skip it, and walk 1e9 holes).
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (!isRunSteps(p)) {
      throw fail(
        ConfigError,
        fn,
        `parts[${i}]`,
        "a RunSteps (collectRunSteps, or a --summary-out file)",
        fmtValue(p),
      );
    }
  }
  if (parts.length === 1) return parts[0] as RunSteps;
  const first = (p: RunSteps) => p.entries[0]?.step ?? Number.POSITIVE_INFINITY;
  const ordered = [...parts].sort((a, b) => first(a) - first(b));
  const settings = (ordered[0] as RunSteps).settings;
  let last = Number.NEGATIVE_INFINITY;
  for (const [i, p] of ordered.entries()) {
    if (p.settings !== settings) {
      throw fail(
        ConfigError,
        fn,
        "parts",
        "collected with the same per-step settings",
        `part ${i} with ${p.settings} against ${settings}`,
      );
    }
    const lo = first(p);
    if (p.entries.length > 0 && lo <= last) {
      throw fail(
        ConfigError,
        fn,
        "parts",
        "over disjoint step ranges",
        `step ${lo} in two parts (or ranges that interleave)`,
      );
    }
    if (p.entries.length > 0) last = (p.entries[p.entries.length - 1] as { step: number }).step;
  }
  const skipped = new Map<string, { detector: DetectorName; reason: string; steps: number }>();
  const maps = new Map<string, { map: string; detected: boolean; steps: number }>();
  const ignored = new Map<string, number>();
  const notes = new Set<string>();
  const stepless = new Set<string>();
  const entryProblems: RunProblem[] = [];
  for (const p of ordered) {
    for (const s of p.skipped) {
      const key = `${s.detector}\u0000${s.reason}`;
      const e = skipped.get(key) ?? { detector: s.detector, reason: s.reason, steps: 0 };
      e.steps += s.steps;
      skipped.set(key, e);
    }
    for (const m of p.names.maps) {
      const key = `${m.map}\u0000${m.detected}`;
      const e = maps.get(key) ?? { map: m.map, detected: m.detected, steps: 0 };
      e.steps += m.steps;
      maps.set(key, e);
    }
    for (const g of p.names.ignored) ignored.set(g.name, (ignored.get(g.name) ?? 0) + g.steps);
    for (const n of p.names.notes) notes.add(n);
    for (const e of p.entryProblems) {
      if (e.step === null) {
        const key = `${e.file}\u0000${e.message}`;
        if (stepless.has(key)) continue;
        stepless.add(key);
      }
      entryProblems.push(e);
    }
  }
  const head = ordered[0] as RunSteps;
  return {
    kind: RUN_STEPS_KIND,
    version: 1,
    dir: head.dir,
    range: null,
    settings: head.settings,
    entries: ordered.flatMap((p) => p.entries),
    steps: ordered.flatMap((p) => p.steps),
    entryProblems,
    unreadable: ordered.flatMap((p) => p.unreadable),
    skipped: [...skipped.values()],
    names: {
      maps: [...maps.values()],
      ignored: [...ignored].map(([name, steps]) => ({ name, steps })),
      notes: [...notes],
    },
    mismatchOverflowSteps: ordered.flatMap((p) => p.mismatchOverflowSteps),
    others: head.others,
  };
}
