/**
 * A config key's default per recorded release, with what the default means in the loss where the
 * release is resolved (`polgrad history trl --key loss_type`; docs/conformance/explain.md#history).
 * Every row comes from the recorded facts (src/conformance/releases/data/), never from a table
 * typed by hand. Browser-safe.
 */
import { fmtValue, mustBe } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { requireString } from "../../core/validate.js";
import { ConfigError, fail } from "../../errors.js";
import type { RecordedValue } from "../releases/types.js";
import { resolveFrameworkConfig } from "./explain.js";
import type { ConfigFramework } from "./parse.js";
import { RELEASE_FACTS } from "./releases.js";

/** One release's row. */
export interface KeyHistoryRow {
  readonly label: string;
  readonly tag: string | null;
  readonly commit: string;
  readonly date: string;
  /** Whether the release defines the key. */
  readonly defined: boolean;
  readonly default: RecordedValue;
  /** Where it is declared at this release. */
  readonly at: { readonly path: string; readonly line: number } | null;
  /** The sha256 of that file at the release. */
  readonly sha256: string | null;
  /** What the default config computes for this key's components, where polgrad resolves the release; else null. */
  readonly semantics: string | null;
  /** Whether the default or its semantics differ from the previous release's. */
  readonly changed: boolean;
}

/** A key's history. */
export interface KeyHistory {
  readonly framework: ConfigFramework;
  readonly repo: string;
  readonly key: string;
  readonly recordedBy: string;
  readonly files: readonly string[];
  readonly rows: readonly KeyHistoryRow[];
}

/** The algebra components whose text shows a key's meaning. */
const COMPONENTS: Readonly<Record<string, readonly string[]>> = {
  loss_type: ["surrogate", "aggregation"],
  "actor_rollout_ref.actor.loss_agg_mode": ["aggregation"],
  "actor_rollout_ref.actor.policy_loss.loss_mode": ["surrogate"],
  importance_sampling_level: ["ratio"],
  beta: ["kl"],
};

/**
 * The default of `key` at every recorded release of `framework`.
 *
 * @param framework - `trl`, `verl` or `openrlhf`.
 * @param key - A config key in the framework's spelling.
 * @returns One row per release, chronological.
 * @throws {ConfigError} E_CONFIG when no release defines the key (with did-you-mean).
 * @derivation docs/conformance/explain.md#history
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > keyHistory > golden: TRL's loss_type appears at v0.16 and its default changes to dapo
 * @since 0.2.0
 */
export function keyHistory(framework: ConfigFramework, key: string): KeyHistory {
  requireString("keyHistory", "framework", framework);
  requireString("keyHistory", "key", key);
  const fn = "keyHistory";
  const facts = Object.hasOwn(RELEASE_FACTS, framework) ? RELEASE_FACTS[framework] : undefined;
  if (facts === undefined)
    throw fail(ConfigError, fn, "framework", "trl, verl or openrlhf", fmtValue(framework));
  const all = [...new Set(facts.releases.flatMap((r) => r.keys.map((k) => k.key)))];
  if (!all.includes(key))
    throw new ConfigError(
      fn,
      "key",
      `${mustBe(fn, "key", `a key some recorded ${framework} release defines`, fmtValue(key))}${didYouMean(closestNames(key, all).slice(0, 3))}`,
    );
  const rows: KeyHistoryRow[] = [];
  let prev: { d: string; s: string | null } | null = null;
  for (const r of facts.releases) {
    const k = r.keys.find((x) => x.key === key);
    const semantics = semanticsAt(framework, r.label, key);
    const d = k === undefined ? "(absent)" : JSON.stringify(k.default);
    const changed = prev !== null && (prev.d !== d || prev.s !== semantics);
    prev = { d, s: semantics };
    const file = k === undefined ? undefined : r.files.find((f) => f.path === k.at.path);
    rows.push({
      label: r.label,
      tag: r.tag,
      commit: r.commit,
      date: r.date,
      defined: k !== undefined,
      default: k === undefined ? null : k.default,
      at: k === undefined ? null : k.at,
      sha256: file === undefined ? null : file.sha256,
      semantics,
      changed,
    });
  }
  return {
    framework,
    repo: facts.repo,
    key,
    recordedBy: facts.recordedBy.tool,
    files: [...new Set(facts.releases.flatMap((r) => r.files.map((f) => f.path)))],
    rows,
  };
}

function semanticsAt(framework: ConfigFramework, label: string, key: string): string | null {
  const comps = COMPONENTS[key];
  if (comps === undefined) return null;
  try {
    const res = resolveFrameworkConfig(`${framework}@${label}`);
    const texts = res.algebra.filter((a) => comps.includes(a.component)).map((a) => a.text);
    return texts.length === 0 ? null : texts.join("; ");
  } catch (e) {
    // A release whose default config polgrad does not resolve: the recorded default only.
    if (e instanceof ConfigError) return null;
    throw e;
  }
}
