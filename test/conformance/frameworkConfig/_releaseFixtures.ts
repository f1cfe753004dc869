/**
 * Loading and replaying the per-release fixtures recorded from the real framework code
 * (tools/record-fixtures/trlReleases.py, verlReleases.py, openrlhfReleases.py →
 * test/fixtures/frameworks/<framework>-releases.json): each case's config, in the framework's own
 * key names, is resolved against its release and evaluated on its batch.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ConfigEntry } from "../../../src/conformance/frameworkConfig/parse.js";
import type { RecordedValue } from "../../../src/conformance/releases/types.js";
import type { PolicyLossInputs } from "../../../src/losses/policyLoss.js";
import { BUILTIN_BATCH } from "../../../src/which/builtinBatch.js";
import { type FixtureNumber, rows } from "../../_kit/polgradFixtures.js";

/** A recorded case. */
export interface ReleaseCase {
  readonly name: string;
  readonly release: string;
  readonly config: Readonly<Record<string, RecordedValue>>;
  readonly world?: {
    readonly num_processes?: number;
    readonly gradient_accumulation_steps?: number;
  };
  readonly num_items_in_batch?: number | null;
  readonly batch:
    | "builtin"
    | {
        readonly logprobs: FixtureNumber[][];
        readonly old_logprobs: FixtureNumber[][];
        readonly ref_logprobs?: FixtureNumber[][];
        readonly rollout_logprobs?: FixtureNumber[][];
        readonly advantages: FixtureNumber[] | FixtureNumber[][];
        readonly response_mask: boolean[][];
        readonly entropies?: FixtureNumber[][];
      };
  readonly loss?: FixtureNumber;
  readonly grad_logprobs?: FixtureNumber[][];
  /** Each micro-batch's rows (an explicit list of row indices, in order) and its backward loss. */
  readonly micro_batches?: readonly {
    readonly rows: readonly number[];
    readonly loss: FixtureNumber;
  }[];
  /** Upstream raised for this config (no numbers recorded): the message. */
  readonly upstream_raises?: string;
}

/** A fixture file. */
export interface ReleaseFixture {
  readonly provenance: {
    readonly tool: string;
    readonly repo: string;
    readonly releases: Readonly<
      Record<string, { readonly commit: string; readonly files: Readonly<Record<string, string>> }>
    >;
  };
  readonly cases: readonly ReleaseCase[];
}

const dir = fileURLToPath(new URL("../../fixtures/frameworks/", import.meta.url));

/** Load `<framework>-releases.json`, or null when it has not been recorded. */
export function loadReleaseFixture(framework: string): ReleaseFixture | null {
  const path = `${dir}${framework}-releases.json`;
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as ReleaseFixture;
}

/** The built-in batch as every recorder uses it: ref_logprobs := old_logprobs. */
export const BUILTIN_WITH_REF: PolicyLossInputs = {
  ...BUILTIN_BATCH,
  refLogprobs: BUILTIN_BATCH.oldLogprobs,
};

/** A case's batch as PolicyLossInputs. */
export function caseInputs(c: ReleaseCase): PolicyLossInputs {
  if (c.batch === "builtin") return BUILTIN_WITH_REF;
  const b = c.batch;
  const adv = b.advantages;
  return {
    logprobs: rows(b.logprobs),
    oldLogprobs: rows(b.old_logprobs),
    advantages: Array.isArray(adv[0]) ? rows(adv as FixtureNumber[][]) : (adv as number[]),
    responseMask: b.response_mask,
    ...(b.ref_logprobs === undefined ? {} : { refLogprobs: rows(b.ref_logprobs) }),
    ...(b.rollout_logprobs === undefined ? {} : { rolloutLogprobs: rows(b.rollout_logprobs) }),
    ...(b.entropies === undefined ? {} : { entropies: rows(b.entropies) }),
  };
}

/** A case's config as parsed entries (its keys in the framework's spelling, in recorded order). */
export function caseEntries(
  c: ReleaseCase,
  extra: Readonly<Record<string, RecordedValue>> = {},
): ConfigEntry[] {
  const all = { ...extra, ...c.config };
  return Object.entries(all).map(([key, value]) => ({ key, value, origin: "mapping" as const }));
}
