/**
 * Recorded facts about framework releases: for each release, the config keys it defines with
 * their default values, and the upstream files they were read from, with provenance. Facts only:
 * key names, literal defaults, choices and hashes, never upstream code
 * (docs/conformance/releases.md).
 */

/** A JSON value as recorded: a literal default, or an unevaluated expression. */
export type RecordedValue =
  | null
  | boolean
  | number
  | string
  | readonly RecordedValue[]
  | { readonly [key: string]: RecordedValue };

/** One upstream file a release's facts were read from. */
export interface RecordedFile {
  /** Path inside the repository, e.g. `trl/trainer/grpo_config.py`. */
  readonly path: string;
  /** SHA-256 of the file's bytes at the release's commit (`git show <commit>:<path> | sha256sum`). */
  readonly sha256: string;
}

/** One config key a release defines. */
export interface RecordedKey {
  /**
   * The key in the framework's own spelling: TRL a `GRPOConfig` field name (`epsilon_high`);
   * verl a dotted Hydra path (`actor_rollout_ref.actor.clip_ratio_low`); OpenRLHF a flag with its
   * dashes (`--eps_clip_low_high`, `--actor.eps_clip_low_high`).
   */
  readonly key: string;
  /**
   * The default: a JSON literal when the source gives one (Python `None` → null), otherwise
   * `{ "expr": "<source text of the default>" }` (e.g. a `default_factory`, an interpolation).
   */
  readonly default: RecordedValue;
  /** The declared type as written upstream (annotation, argparse `type=`, or the YAML value's type). */
  readonly type: string | null;
  /** Allowed values where upstream declares them (argparse `choices`, a `Literal[...]`), else null. */
  readonly choices: readonly RecordedValue[] | null;
  /** Where the key is declared: file path and 1-based line. */
  readonly at: { readonly path: string; readonly line: number };
}

/** One release (a tag, or a commit read at a date). */
export interface RecordedRelease {
  /** `v1.9.0` for a tag; the 8-hex short commit for an untagged commit. */
  readonly label: string;
  /** The tag name, or null for an untagged commit. */
  readonly tag: string | null;
  /** Full 40-hex commit. */
  readonly commit: string;
  /** Commit date, `YYYY-MM-DD` (committer date). */
  readonly date: string;
  /** Every file read for this release, with its hash. */
  readonly files: readonly RecordedFile[];
  /** Every config key defined at this release, in source order. */
  readonly keys: readonly RecordedKey[];
  /**
   * The configs a run can name (verl's `--config-name`, in main_ppo's config folder), where the
   * recorder gives them: each with the index in `files` it is read from and the keys whose default
   * differs from `keys`' (docs/conformance/releases.md#named-configs).
   */
  readonly configs?: readonly RecordedNamedConfig[];
  /**
   * The config groups the default config composes at a package (verl's `group@package: option`
   * in ppo_trainer.yaml's defaults list), where the recorder gives them
   * (docs/conformance/releases.md#named-configs).
   */
  readonly groups?: readonly RecordedConfigGroup[];
}

/** A config group of the default config: its package, its default option and the options shipped. */
export interface RecordedConfigGroup {
  readonly group: string;
  readonly package: string;
  readonly default: string;
  readonly options: readonly string[];
}

/** A config a run names (verl `--config-name ppo_megatron_trainer`): its file and its own defaults. */
export interface RecordedNamedConfig {
  readonly name: string;
  /** The index in the release's `files` of the file it is read from. */
  readonly file: number;
  /** The keys whose default in this config differs from the release's `keys`, in file order. */
  readonly values: readonly { readonly key: string; readonly default: RecordedValue }[];
}

/**
 * What the per-release view holds, recorded by the recorder beside the compact data: the number
 * of releases and of (release, key) rows, and the SHA-256 of `JSON.stringify(releases)`.
 */
export interface ExpandedProvenance {
  readonly releases: number;
  readonly keyRows: number;
  readonly sha256: string;
}

/** A framework's recorded release facts: every release with all its keys (the expanded view). */
export interface RecordedReleaseFacts {
  readonly framework: "trl" | "verl" | "openrlhf";
  /** `owner/name` on GitHub. */
  readonly repo: string;
  /** The recorder and the exact command that wrote the data. */
  readonly recordedBy: { readonly tool: string; readonly command: string };
  /** What this view must be: counts and hash, as the recorder wrote them. */
  readonly expanded: ExpandedProvenance;
  /** Releases in release order, oldest first (docs/conformance/releases.md#eras). */
  readonly releases: readonly RecordedRelease[];
}

/** The tag of the compact file format. */
export const COMPACT_FORMAT = "polgrad-release-facts/1";

/** A key's value over a run of consecutive releases, `from` … `to` inclusive (labels). */
export interface CompactKeyRun {
  readonly from: string;
  readonly to: string;
  readonly default: RecordedValue;
  readonly type: string | null;
  readonly choices: readonly RecordedValue[] | null;
}

/** One release in the compact format: its identity, files and where its keys are. */
export interface CompactRelease {
  readonly label: string;
  readonly tag: string | null;
  readonly commit: string;
  readonly date: string;
  readonly files: readonly RecordedFile[];
  /** The index in `files` of the file every key is declared in, or one index per key. */
  readonly keyFile: number | readonly number[];
  /** The release's keys in source order: `[first, count]` ranges of key-table indices. */
  readonly keyRanges: readonly (readonly [number, number])[];
  /** Each key's declaration line, in the same order. */
  readonly keyLines: readonly number[];
  /** The named configs, as in the expanded view (verl only). */
  readonly configs?: readonly RecordedNamedConfig[];
  /** The config groups, as in the expanded view (verl only). */
  readonly groups?: readonly RecordedConfigGroup[];
}

/**
 * A framework's facts as its recorder writes them (`src/conformance/releases/data/<fw>.json`):
 * each key once, its value once per run of releases where it holds (tools/record-releases/compact.py).
 */
export interface CompactReleaseFacts {
  readonly format: typeof COMPACT_FORMAT;
  readonly notice: string;
  readonly framework: RecordedReleaseFacts["framework"];
  readonly repo: string;
  readonly recordedBy: RecordedReleaseFacts["recordedBy"];
  readonly expanded: ExpandedProvenance;
  readonly releases: readonly CompactRelease[];
  /** The key table. */
  readonly keys: readonly { readonly key: string; readonly runs: readonly CompactKeyRun[] }[];
}
