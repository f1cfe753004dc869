/**
 * Enforces docs/conformance/releases.md#eras: each framework's semantics eras are ranges over the
 * ordered list of recorded releases, each starting at a named first release, and a release is
 * placed by its position, never by its label. A synthetic release (a recorded release's facts
 * under a new version and date) inserted after the newest release, or between two recorded ones,
 * resolves exactly as the release whose era precedes it, for every framework (issue 32, item 3).
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test } from "vitest";
import {
  compareReleases,
  ERAS,
  releaseEra,
  releaseSlot,
} from "../../../src/conformance/frameworkConfig/eras.js";
import { resolveFrameworkConfig } from "../../../src/conformance/frameworkConfig/explain.js";
import type { ConfigFramework } from "../../../src/conformance/frameworkConfig/parse.js";
import { findRelease, RELEASE_FACTS } from "../../../src/conformance/frameworkConfig/releases.js";
import { evaluateResolution } from "../../../src/conformance/frameworkConfig/resolution.js";
import { _setReleaseFacts } from "../../../src/conformance/releases/store.js";
import type { RecordedRelease } from "../../../src/conformance/releases/types.js";
import { ConfigError } from "../../../src/errors.js";
import { BUILTIN_WITH_REF } from "./_releaseFixtures.js";

const FRAMEWORKS: readonly ConfigFramework[] = ["trl", "verl", "openrlhf"];

afterEach(() => {
  for (const fw of FRAMEWORKS) _setReleaseFacts(fw, undefined);
});

describe("compareReleases", () => {
  test("identity: every recorded list is in release order, tags by version and every release by date", () => {
    for (const fw of FRAMEWORKS) {
      const rs = RELEASE_FACTS[fw].releases;
      for (let i = 0; i < rs.length; i++)
        for (let j = i + 1; j < rs.length; j++) {
          const [a, b] = [rs[i] as RecordedRelease, rs[j] as RecordedRelease];
          expect(compareReleases(a, b), `${fw} ${a.label} < ${b.label}`).toBeLessThan(0);
          expect(a.date <= b.date, `${fw} ${a.label} dated before ${b.label}`).toBe(true);
        }
    }
  });

  test("golden: versions compare by number, with pre- and post-releases", () => {
    const t = (tag: string) => ({ tag, date: "2026-01-01" });
    const order = ["v0.8.9", "v0.8.9.post1", "v0.8.10", "v1.0.0rc1", "v1.0.0", "v1.10.0"];
    for (let i = 1; i < order.length; i++)
      expect(compareReleases(t(order[i - 1] as string), t(order[i] as string))).toBeLessThan(0);
    // An untagged commit goes by its date; a tie goes after the recorded release.
    const rs = RELEASE_FACTS.verl.releases;
    expect(releaseSlot(rs, { tag: null, date: "2026-08-14" })).toBe(9);
    expect(releaseSlot(rs, { tag: "v0.4.0", date: "2025-01-01" })).toBe(0);
  });
});

describe("ERAS", () => {
  test("identity: every era starts at a recorded release, in list order, and every release a resolver compares with starts an era", () => {
    for (const fw of FRAMEWORKS) {
      const labels = RELEASE_FACTS[fw].releases.map((r) => r.label);
      const at = ERAS[fw].map((e) => labels.indexOf(e.from));
      expect(at[0], fw).toBe(0);
      expect(at, fw).toEqual([...at].sort((a, b) => a - b));
      expect(new Set(at).size).toBe(at.length);
    }
    // Every `at("…")` / `atOrAfter(r, "…")` of a resolver names an era start of its framework.
    const sources: Record<ConfigFramework, string[]> = {
      trl: ["trl.ts", "trlEras.ts"],
      verl: ["verl.ts"],
      openrlhf: ["openrlhf.ts"],
    };
    for (const fw of FRAMEWORKS) {
      const text = sources[fw]
        .map((f) =>
          readFileSync(
            new URL(`../../../src/conformance/frameworkConfig/${f}`, import.meta.url),
            "utf8",
          ),
        )
        .join("\n");
      const asked = [...text.matchAll(/(?:\bat\(|atOrAfter\(r, )"([^"]+)"\)/g)].map((m) => m[1]);
      expect(asked.length, fw).toBeGreaterThan(4);
      const starts = new Set(ERAS[fw].map((e) => e.from));
      expect(
        asked.filter((l) => !starts.has(l as string)),
        fw,
      ).toEqual([]);
    }
  });
});

/** A recorded release's facts under a new label (a tag), date and commit. */
function synthetic(fw: ConfigFramework, like: string, tag: string, date: string): number {
  const facts = RELEASE_FACTS[fw];
  const src = facts.releases.find((r) => r.label === like) as RecordedRelease;
  const release: RecordedRelease = { ...src, label: tag, tag, date, commit: "0".repeat(40) };
  const slot = releaseSlot(facts.releases, release);
  const releases = [...facts.releases];
  releases.splice(slot, 0, release);
  _setReleaseFacts(fw, { ...facts, releases });
  return slot;
}

/** What a config resolves to at a release, its own name taken out; or the ConfigError's key. */
function view(fw: ConfigFramework, label: string, config: string): string {
  let res: ReturnType<typeof resolveFrameworkConfig>;
  try {
    res = resolveFrameworkConfig(`${fw}@${label}`, config);
  } catch (e) {
    if (e instanceof ConfigError) return `ConfigError ${e.arg}`;
    throw e;
  }
  const loss = evaluateResolution(res, BUILTIN_WITH_REF).loss;
  return JSON.stringify({ ...res, ref: null, release: null, loss }).replaceAll(label, "<label>");
}

const CASES: readonly {
  fw: ConfigFramework;
  like: string;
  tag: string;
  date: string;
  /** The recorded release it lands after, and the era it falls in. */
  after: string;
  era: string;
  config: string;
}[] = [
  {
    fw: "trl",
    like: "f2cd5771",
    tag: "v9.0.0",
    date: "2099-01-01",
    after: "f2cd5771",
    era: "T",
    config: "",
  },
  {
    fw: "trl",
    like: "v0.21.0",
    tag: "v0.21.1",
    date: "2025-08-10",
    after: "v0.21.0",
    era: "G",
    config: "",
  },
  // verl's G era (token-sum, dro) was chosen by the labels v0.9.0 and 1dda039b before.
  {
    fw: "verl",
    like: "1dda039b",
    tag: "v9.0.0",
    date: "2099-01-01",
    after: "1dda039b",
    era: "G (engine, token-sum, dro)",
    config: "actor_rollout_ref.actor.loss_agg_mode=token-sum",
  },
  {
    fw: "verl",
    like: "v0.9.0",
    tag: "v0.9.1",
    date: "2026-08-18",
    after: "v0.9.0",
    era: "G (engine, token-sum, dro)",
    config:
      "actor_rollout_ref.actor.policy_loss.loss_mode=dro actor_rollout_ref.actor.policy_loss.dro_beta=0.1",
  },
  {
    fw: "verl",
    like: "v0.8.0",
    tag: "v0.8.1",
    date: "2026-06-20",
    after: "v0.8.0",
    era: "F (engine)",
    config: "actor_rollout_ref.actor.loss_agg_mode=token-sum",
  },
  {
    fw: "openrlhf",
    like: "v0.11.0",
    tag: "v0.12.0",
    date: "2099-01-01",
    after: "v0.11.0",
    era: "window-normalised micro-batches",
    config: "",
  },
  {
    fw: "openrlhf",
    like: "v0.10.3",
    tag: "v0.10.3.post1",
    date: "2026-05-10",
    after: "v0.10.3",
    era: "log-ratio clamped to ±20",
    config: "--train.micro_batch_size 2",
  },
];

describe("releaseEra", () => {
  test("conformance: a synthetic release after the newest and one between two recorded releases resolve in the era that precedes them, for every framework", () => {
    for (const c of CASES) {
      const name = `${c.fw}@${c.tag}`;
      const before = RELEASE_FACTS[c.fw].releases.map((r) => r.label);
      const slot = synthetic(c.fw, c.like, c.tag, c.date);
      expect(before[slot - 1], name).toBe(c.after);
      const r = findRelease(name);
      expect(r.index, name).toBe(slot);
      expect(releaseEra(r).name, name).toBe(c.era);
      expect(releaseEra(findRelease(`${c.fw}@${c.after}`)).name, name).toBe(c.era);
      // Resolved exactly as the release it was cloned from, the defaults and one more config.
      for (const config of ["", c.config]) {
        const got = view(c.fw, c.tag, config);
        expect(got.startsWith("ConfigError"), `${name} ${config}: ${got.slice(0, 80)}`).toBe(
          c.era.startsWith("F") && config !== "",
        );
        expect(got, `${name} ${config}`).toBe(view(c.fw, c.like, config));
      }
      _setReleaseFacts(c.fw, undefined);
    }
  });

  test("golden: verl's G era accepts token-sum and dro, the F era before it does not", () => {
    synthetic("verl", "v0.9.0", "v0.9.1", "2026-08-18");
    expect(view("verl", "v0.9.1", "actor_rollout_ref.actor.loss_agg_mode=token-sum")).not.toMatch(
      /^ConfigError/,
    );
    _setReleaseFacts("verl", undefined);
    synthetic("verl", "v0.8.0", "v0.8.1", "2026-06-20");
    expect(view("verl", "v0.8.1", "actor_rollout_ref.actor.loss_agg_mode=token-sum")).toBe(
      "ConfigError actor_rollout_ref.actor.loss_agg_mode",
    );
  });
});
