/**
 * The semantics eras of each framework: ranges over the ordered list of recorded releases, each
 * starting at a named first release and running to the next era's start, the last one open-ended
 * (docs/conformance/releases.md#eras). A release is placed by its position in the list, never by
 * its label, so a newly recorded release falls in the newest era that starts at or before it.
 * Browser-safe.
 */
import type { RecordedRelease } from "../releases/types.js";
import type { ConfigFramework } from "./parse.js";
import type { ReleaseRef } from "./releases.js";

/** An era: its name and the label of its first recorded release. */
export interface Era {
  readonly name: string;
  readonly from: string;
}

const letters = (starts: readonly string[]): readonly Era[] =>
  starts.map((from, i) => ({ name: String.fromCharCode(65 + i), from }));

/**
 * Every framework's eras, oldest first. A resolver asks whether a release is at or after an era's
 * start (`atOrAfter`), and only era starts may be asked.
 */
export const ERAS: Readonly<Record<ConfigFramework, readonly Era[]>> = {
  // The letters of docs/conformance/explain.md#trl.
  trl: letters([
    "v0.14.0",
    "v0.15.0",
    "v0.16.0",
    "v0.17.0",
    "v0.18.0",
    "v0.19.0",
    "v0.20.0",
    "v0.22.0",
    "v0.22.2",
    "v0.23.0",
    "v0.26.0",
    "v0.27.0",
    "v0.27.1",
    "v0.28.0",
    "v1.0.0",
    "v1.6.0",
    "v1.7.0",
    "v1.8.0",
    "v1.9.0",
    "f2cd5771",
  ]),
  verl: [
    { name: "old actor", from: "v0.4.1" },
    { name: "old actor, gpg", from: "v0.5.0" },
    { name: "old actor, gspo and geo_mean, on-policy shortcut", from: "v0.6.0" },
    { name: "old actor, empty rows dropped", from: "v0.6.1" },
    { name: "old actor, sapo and cispo", from: "v0.7.0" },
    { name: "old actor, dppo, rollout correction", from: "v0.7.1" },
    { name: "F (engine)", from: "v0.8.0" },
    { name: "G (engine, token-sum, dro)", from: "v0.9.0" },
  ],
  openrlhf: [
    { name: "micro-batch means", from: "v0.8.4" },
    { name: "KL clamped to ±10", from: "v0.8.6" },
    { name: "GSPO sample mean", from: "v0.8.9" },
    { name: "IS correction for ppo only", from: "v0.8.10" },
    { name: "IS bounds [low, high]", from: "v0.9.1" },
    { name: "seq-mask-tis", from: "v0.9.4" },
    { name: "an empty micro-batch raises", from: "v0.9.8" },
    { name: "log-ratio clamped to ±20", from: "v0.10.3" },
    { name: "window-normalised micro-batches", from: "v0.10.4" },
  ],
};

/** The position in `r`'s release list of the era that starts at `label`. */
export function eraStart(r: ReleaseRef, label: string): number {
  if (!ERAS[r.framework].some((e) => e.from === label))
    throw new Error(`internal: ${label} does not start a ${r.framework} era`);
  const i = r.facts.releases.findIndex((x) => x.label === label);
  if (i < 0) throw new Error(`internal: no recorded ${r.framework} release ${label}`);
  return i;
}

/**
 * Whether release `r` is at or after the start of the era that begins at `label`: its position in
 * the ordered release list, never its label.
 */
export function atOrAfter(r: ReleaseRef, label: string): boolean {
  return r.index >= eraStart(r, label);
}

/**
 * The era a release falls in: the last era whose first release is at or before it in the ordered
 * list (a release before every start falls in the first era).
 *
 * @param r - A release (findRelease).
 * @returns Its era.
 * @derivation docs/conformance/releases.md#eras
 * @enforcedBy test/conformance/frameworkConfig/eras.test.ts > releaseEra > conformance: a synthetic release after the newest and one between two recorded releases resolve in the era that precedes them, for every framework
 * @since 0.2.0
 */
export function releaseEra(r: ReleaseRef): Era {
  const eras = ERAS[r.framework];
  let out = eras[0] as Era;
  for (const e of eras) if (eraStart(r, e.from) <= r.index) out = e;
  return out;
}

/** A tag's version as numbers: `v0.8.9.post1` → [0, 8, 9, 0, 1]; `1.0.0rc1` → [1, 0, 0, -1, 1]. */
function versionKey(tag: string): number[] | null {
  const m = /^v?(\d+(?:\.\d+)*)(?:\.?(rc|a|b|post)(\d+))?$/.exec(tag);
  if (m === null) return null;
  const nums = (m[1] as string).split(".").map(Number);
  while (nums.length < 3) nums.push(0);
  const kind = m[2];
  const rank =
    kind === undefined ? 0 : kind === "post" ? 1 : kind === "rc" ? -1 : kind === "b" ? -2 : -3;
  return [...nums, rank, kind === undefined ? 0 : Number(m[3])];
}

/**
 * The order of releases the eras range over: two tags by version, otherwise by commit date
 * (a negative number when `a` comes first, 0 when the two cannot be told apart).
 *
 * @param a - A release.
 * @param b - Another release of the same framework.
 * @returns Negative, zero or positive.
 * @derivation docs/conformance/releases.md#eras
 * @enforcedBy test/conformance/frameworkConfig/eras.test.ts > compareReleases > identity: every recorded list is in release order, tags by version and every release by date
 * @since 0.2.0
 */
export function compareReleases(
  a: Pick<RecordedRelease, "tag" | "date">,
  b: Pick<RecordedRelease, "tag" | "date">,
): number {
  const va = a.tag === null ? null : versionKey(a.tag);
  const vb = b.tag === null ? null : versionKey(b.tag);
  if (va !== null && vb !== null) {
    for (let i = 0; i < Math.max(va.length, vb.length); i++) {
      const d = (va[i] ?? 0) - (vb[i] ?? 0);
      if (d !== 0) return d;
    }
  }
  return a.date < b.date ? -1 : a.date > b.date ? 1 : 0;
}

/**
 * Where a release goes in an ordered list: before the first release that sorts after it, so that
 * a release the order cannot tell from a recorded one goes after it.
 *
 * @param releases - A recorded list, in release order.
 * @param release - The release to place.
 * @returns Its index once inserted.
 */
export function releaseSlot(
  releases: readonly Pick<RecordedRelease, "tag" | "date">[],
  release: Pick<RecordedRelease, "tag" | "date">,
): number {
  const i = releases.findIndex((x) => compareReleases(release, x) < 0);
  return i < 0 ? releases.length : i;
}
