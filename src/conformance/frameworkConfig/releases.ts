/**
 * The recorded releases of each framework and the `framework@label` references that name them
 * (`trl@v1.9.0`, `verl@1dda039b`, `openrlhf@v0.11.0`), as `polgrad frameworks` names its pins
 * (docs/conformance/releases.md). Browser-safe.
 */
import { fmtValue, mustBe, safeText } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { ConfigError, IoError, UnknownNameError } from "../../errors.js";
import { releaseFacts } from "../releases/store.js";
import type {
  RecordedKey,
  RecordedRelease,
  RecordedReleaseFacts,
  RecordedValue,
} from "../releases/types.js";
import type { ConfigFramework } from "./parse.js";

/**
 * Every framework's recorded facts, each read on its first use (src/conformance/releases/store.ts;
 * in a browser, after loadReleaseFacts).
 */
export const RELEASE_FACTS: Readonly<Record<ConfigFramework, RecordedReleaseFacts>> = Object.freeze(
  Object.defineProperties({} as Record<ConfigFramework, RecordedReleaseFacts>, {
    trl: { enumerable: true, get: () => releaseFacts("trl", "RELEASE_FACTS", "trl") },
    verl: { enumerable: true, get: () => releaseFacts("verl", "RELEASE_FACTS", "verl") },
    openrlhf: {
      enumerable: true,
      get: () => releaseFacts("openrlhf", "RELEASE_FACTS", "openrlhf"),
    },
  }),
);

/** A release found by reference. */
export interface ReleaseRef {
  readonly framework: ConfigFramework;
  readonly facts: RecordedReleaseFacts;
  readonly release: RecordedRelease;
  /** Its index in the framework's chronological list. */
  readonly index: number;
  /** `framework@label`. */
  readonly ref: string;
}

const FRAMEWORKS: readonly ConfigFramework[] = ["trl", "verl", "openrlhf"];

/** Every `framework@label` reference, chronological per framework. */
export function releaseRefs(framework?: ConfigFramework): string[] {
  const fws = framework === undefined ? FRAMEWORKS : [framework];
  return fws.flatMap((f) => RELEASE_FACTS[f].releases.map((r) => `${f}@${r.label}`));
}

/** The references of the frameworks whose facts can be had here (for did-you-mean). */
function availableRefs(): string[] {
  return FRAMEWORKS.flatMap((f) => {
    try {
      return releaseRefs(f);
    } catch (e) {
      if (e instanceof IoError) return [];
      throw e;
    }
  });
}

/**
 * Look a release up by reference: `trl@v1.9.0` (a tag), `verl@1dda039b` (an 8-hex short commit or
 * any longer prefix of a recorded commit), `openrlhf@latest` / `trl@head` (the newest recorded).
 * A tag may be given without its `v`.
 *
 * @param ref - The reference.
 * @param fn - The public function named by errors.
 * @param arg - The argument named by errors.
 * @returns The release.
 * @throws {UnknownNameError} E_UNKNOWN_NAME with the closest references when none matches.
 * @throws {IoError} E_IO when the framework's release facts cannot be read here (a browser before
 *   loadReleaseFacts).
 * @derivation docs/conformance/releases.md#references
 * @enforcedBy test/conformance/frameworkConfig/releases.test.ts > findRelease > golden: tags, short commits, head and did-you-mean
 * @since 0.2.0
 */
export function findRelease(ref: string, fn = "findRelease", arg = "framework"): ReleaseRef {
  const m = typeof ref === "string" ? /^(trl|verl|openrlhf)@(.+)$/i.exec(ref.trim()) : null;
  if (m !== null) {
    const framework = (m[1] as string).toLowerCase() as ConfigFramework;
    const want = m[2] as string;
    const facts = releaseFacts(framework, fn, arg);
    const rs = facts.releases;
    let index = -1;
    if (want === "head" || want === "latest") index = rs.length - 1;
    if (index < 0) index = rs.findIndex((r) => r.label === want || r.tag === want);
    if (index < 0) index = rs.findIndex((r) => r.tag === `v${want}`);
    if (index < 0 && /^[0-9a-f]{7,40}$/.test(want)) {
      const hits = rs.flatMap((r, i) => (r.commit.startsWith(want) ? [i] : []));
      if (hits.length === 1) index = hits[0] as number;
    }
    if (index >= 0) {
      const release = rs[index] as RecordedRelease;
      return { framework, facts, release, index, ref: `${framework}@${release.label}` };
    }
  }
  const known = availableRefs();
  const suggestions =
    typeof ref === "string" && ref.length <= 200 ? closestNames(ref, known).slice(0, 3) : [];
  throw new UnknownNameError(
    fn,
    arg,
    `${mustBe(fn, arg, "a recorded release: trl@<tag>, verl@<tag or short commit>, openrlhf@<tag or short commit> (see 'polgrad history FRAMEWORK')", fmtValue(ref))}${didYouMean(suggestions)}`,
    suggestions,
  );
}

/** The release's keys by name. */
export function keysOf(release: RecordedRelease): ReadonlyMap<string, RecordedKey> {
  return new Map(release.keys.map((k) => [k.key, k]));
}

const anyKeys = new WeakMap<
  RecordedReleaseFacts,
  WeakMap<ReadonlySet<string>, ReadonlySet<string>>
>();

/** The keys of `among` that some release of `facts` defines (computed once per facts and set). */
export function anyReleaseKeys(
  facts: RecordedReleaseFacts,
  among: ReadonlySet<string>,
): ReadonlySet<string> {
  let byAmong = anyKeys.get(facts);
  if (byAmong === undefined) {
    byAmong = new WeakMap();
    anyKeys.set(facts, byAmong);
  }
  let out = byAmong.get(among);
  if (out === undefined) {
    out = new Set(
      facts.releases.flatMap((r) => r.keys.map((k) => k.key)).filter((k) => among.has(k)),
    );
    byAmong.set(among, out);
  }
  return out;
}

/** The release fields every resolution carries: its reference, the release's identity, the repository. */
export function releaseHeader(r: ReleaseRef): {
  readonly ref: string;
  readonly release: Pick<RecordedRelease, "label" | "tag" | "commit" | "date">;
  readonly repo: string;
} {
  const { label, tag, commit, date } = r.release;
  return { ref: r.ref, release: { label, tag, commit, date }, repo: r.facts.repo };
}

/**
 * The release as a run that names a config sees it (verl `--config-name ppo_megatron_trainer`):
 * its keys with that config's recorded defaults. The default config (`ppo_trainer`, or no name)
 * is the release itself; a name the release does not ship is refused, listing the names it ships.
 *
 * @param fn - The public function named by errors.
 * @param name - The config name, or undefined for the default.
 * @throws {ConfigError} E_CONFIG naming `--config-name` and the configs the release ships.
 */
export function withNamedConfig(fn: string, r: ReleaseRef, name: string | undefined): ReleaseRef {
  const configs = r.release.configs ?? [];
  if (name === undefined || name === configs[0]?.name) return r;
  const named = configs.find((c) => c.name === name);
  if (named === undefined)
    throw new ConfigError(
      fn,
      "--config-name",
      `${fn}: --config-name ${fmtValue(name)} is not a config verl.trainer.main_ppo ships at ${r.ref} (verl/trainer/config has ${configs.map((c) => c.name).join(", ") || "no recorded configs"}), so polgrad cannot say which loss this run computes${didYouMean(
        closestNames(
          name,
          configs.map((c) => c.name),
        ),
      )}`,
    );
  const own = new Map(named.values.map((v) => [v.key, v.default]));
  const keys = r.release.keys.map((k) =>
    own.has(k.key) ? { ...k, default: own.get(k.key) as RecordedValue } : k,
  );
  return { ...r, release: { ...r.release, keys } };
}

/**
 * Check a run's config-group selections (verl `group@package=option`) against the release's
 * recorded groups: the default option is the release as it is; another option the release ships
 * selects another config (another engine's actor, …), which polgrad does not resolve, so it is
 * refused naming it; an option or group the release does not ship is refused with the ones it does.
 *
 * @param fn - The public function named by errors.
 * @throws {ConfigError} E_CONFIG naming the override.
 */
export function checkGroupSelections(
  fn: string,
  r: ReleaseRef,
  selections: readonly { group: string; package: string; option: string; token: string }[],
): void {
  const groups = r.release.groups ?? [];
  for (const s of selections) {
    const g = groups.find((x) => x.group === s.group && x.package === s.package);
    const why = (rule: string) =>
      new ConfigError(fn, s.token, `${fn}: ${fmtValue(s.token)} ${rule}`);
    if (g === undefined)
      throw why(
        `selects a config group ppo_trainer does not compose at ${s.package} at ${r.ref} (it composes ${groups.map((x) => `${x.group}@${x.package}`).join(", ") || "no recorded group"}), so polgrad cannot say which loss this run computes`,
      );
    if (s.option === g.default) continue;
    if (!g.options.includes(s.option))
      throw why(
        `selects option ${fmtValue(s.option)} of config group ${g.group}, which verl/trainer/config/${g.group} does not ship at ${r.ref} (it ships ${g.options.join(", ")})${didYouMean(closestNames(s.option, g.options))}`,
      );
    throw why(
      `selects option ${fmtValue(s.option)} of config group ${g.group} at ${g.package} instead of the default ${fmtValue(g.default)}; polgrad resolves the default options only (the FSDP actor's configs), so it cannot say which loss this run computes at ${r.ref}`,
    );
  }
}

/**
 * Check a run's deletions (verl `~key`): a key or subtree the release does not hold is refused as
 * Hydra refuses it; deleting one the loss reads is refused naming it (the code would then read its
 * own fallback, which polgrad does not model); the others are returned, to be listed as ignored.
 *
 * @param lossKeysUnder - The loss-relevant keys under a dotted key.
 * @throws {ConfigError} E_CONFIG naming the deletion.
 */
export function checkDeletions(
  fn: string,
  r: ReleaseRef,
  deletions: readonly string[],
  lossKeysUnder: (key: string) => readonly string[],
): string[] {
  const keys = r.release.keys.map((k) => k.key);
  for (const d of deletions) {
    const token = `~${d}`;
    if (!keys.some((k) => k === d || k.startsWith(`${d}.`)))
      throw new ConfigError(
        fn,
        token,
        `${fn}: ${fmtValue(token)} deletes ${safeText(d)}, which is not a key of ${r.ref} (Hydra refuses it)${didYouMean(closestNames(d, keys))}`,
      );
    const read = lossKeysUnder(d).filter((k) => keys.includes(k));
    if (read.length > 0)
      throw new ConfigError(
        fn,
        token,
        `${fn}: ${fmtValue(token)} deletes ${read.slice(0, 3).join(", ")}${read.length > 3 ? ", …" : ""}, which the loss reads; verl's code then falls back to its own default, which polgrad does not model, so it cannot say which loss this run computes at ${r.ref}`,
      );
  }
  return [...deletions];
}
