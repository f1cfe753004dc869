/**
 * The metric-name maps against the recording (src/diagnostics/data/metric-names.json): every mapped
 * name is logged by some recorded release, every other recorded name is listed as unmapped with a
 * category, per-release availability, auto-detection, no guessing, and the doc's tables.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  METRIC_FRAMEWORKS,
  type MetricFramework,
  metricNames,
  releaseLogs,
} from "../../../src/diagnostics/logs/metricNames.js";
import { mapMetricNames, NAME_MAPS } from "../../../src/diagnostics/logs/nameMaps.js";
import { LOG_QUANTITIES } from "../../../src/diagnostics/logs/quantities.js";
import { UnknownNameError } from "../../../src/errors.js";
import { UNMAPPED } from "./unmappedNames.js";

const DOC = new URL("../../../docs/diagnostics/metric-names.md", import.meta.url);

/** The releases (labels) of a framework that log `name`. */
function releasesLogging(f: MetricFramework, name: string): string[] {
  return metricNames(f)
    .releases.filter((r) => releaseLogs(f, r.label, name))
    .map((r) => r.label);
}

/** All non-pattern names a framework records at some release (and the shared Trainer names). */
function recordedNames(f: MetricFramework): Set<string> {
  const rec = metricNames(f);
  const out = new Set(rec.shared);
  for (const r of rec.releases) for (const n of r.exact) out.add(n);
  return out;
}

/** A release range as the doc writes it: `first–last (n of N)`, or the list when not contiguous. */
function rangeText(f: MetricFramework, name: string): string {
  const all = metricNames(f).releases.map((r) => r.label);
  const at = releasesLogging(f, name);
  const i0 = all.indexOf(at[0] as string);
  const contiguous = at.every((l, k) => all[i0 + k] === l);
  const span = at.length === 1 ? (at[0] as string) : `${at[0]}–${at[at.length - 1]}`;
  return `${contiguous ? span : at.join(", ")} (${at.length} of ${all.length})`;
}

/** The doc's table for a framework's map. */
function mapTable(f: MetricFramework): string {
  const rows = NAME_MAPS[f].map((e) => {
    const all = metricNames(f).releases.map((r) => r.label);
    const holds =
      e.from !== undefined || e.until !== undefined
        ? `Mapped only at ${e.from ?? all[0]}–${e.until ?? all[all.length - 1]}.`
        : "";
    const second = e.secondTo !== undefined ? `Second to \`${e.secondTo}\`.` : "";
    const reason =
      e.reason === undefined ? "" : `${e.reason[0]?.toUpperCase()}${e.reason.slice(1)}.`;
    const why = [reason, holds, second].filter((x) => x !== "").join(" ");
    return `| \`${e.name}\` | ${e.quantity} | ${rangeText(f, e.name)} | ${why} |`;
  });
  return ["| Name | Quantity | Recorded at | Why |", "| --- | --- | --- | --- |", ...rows].join(
    "\n",
  );
}

describe("name maps against the recording", () => {
  test.each(METRIC_FRAMEWORKS)(
    "identity: every name %s's map lists is logged by some recorded release",
    (f) => {
      const recorded = recordedNames(f);
      const missing = NAME_MAPS[f].map((e) => e.name).filter((n) => !recorded.has(n));
      expect(missing).toEqual([]);
    },
  );

  test.each(METRIC_FRAMEWORKS)(
    "identity: %s's map names each name once, with known quantities, release bounds and ranks",
    (f) => {
      const names = NAME_MAPS[f].map((e) => e.name);
      expect(new Set(names).size).toBe(names.length);
      const labels = metricNames(f).releases.map((r) => r.label);
      for (const e of NAME_MAPS[f]) {
        expect(LOG_QUANTITIES).toContain(e.quantity);
        if (e.from !== undefined) expect(labels).toContain(e.from);
        if (e.until !== undefined) expect(labels).toContain(e.until);
        if (e.secondTo !== undefined)
          expect(NAME_MAPS[f].find((o) => o.name === e.secondTo)?.quantity).toBe(e.quantity);
      }
    },
  );

  test.each(METRIC_FRAMEWORKS)(
    "identity: every recorded name of %s is mapped or listed as unmapped, never both",
    (f) => {
      const mapped = new Set(NAME_MAPS[f].map((e) => e.name));
      const recorded = recordedNames(f);
      const unlisted = [...recorded].filter((n) => !mapped.has(n) && !UNMAPPED[f].has(n)).sort();
      expect(unlisted).toEqual([]);
      const both = [...UNMAPPED[f].keys()].filter((n) => mapped.has(n));
      expect(both).toEqual([]);
      const stale = [...UNMAPPED[f].keys()].filter((n) => !recorded.has(n));
      expect(stale).toEqual([]);
    },
  );

  test("identity: the recording has every release of the release facts, each with files hashed", () => {
    for (const f of METRIC_FRAMEWORKS) {
      const facts = JSON.parse(
        readFileSync(
          new URL(`../../../src/conformance/releases/data/${f}.json`, import.meta.url),
          "utf8",
        ),
      ) as { releases: { label: string; commit: string }[] };
      const rec = metricNames(f);
      expect(rec.releases.map((r) => [r.label, r.commit])).toEqual(
        facts.releases.map((r) => [r.label, r.commit]),
      );
      for (const r of rec.releases) {
        expect(r.files.length).toBeGreaterThan(0);
        for (const file of r.files) expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
        for (const n of r.names) expect(n.line).toBeGreaterThan(0);
      }
    }
  });
});

describe("mapMetricNames", () => {
  test("golden: TRL names at v1.9.0 map to their quantities, the Trainer's grad_norm included", () => {
    const r = mapMetricNames(
      "trl",
      [
        "entropy",
        "clip_ratio/low_mean",
        "kl",
        "sampling/importance_sampling_ratio/mean",
        "grad_norm",
        "loss",
      ],
      "v1.9.0",
    );
    expect(r.framework).toBe("trl");
    expect(r.mapped).toEqual({
      entropy: "entropy",
      clip_low: "clip_ratio/low_mean",
      kl_ref: "kl",
      is_ratio_mean: "sampling/importance_sampling_ratio/mean",
      grad_norm: "grad_norm",
    });
    expect(r.unmapped).toEqual(["loss"]);
  });

  test("golden: a name under a recorded logger prefix maps (TRL train/, OpenRLHF train/); verl takes none", () => {
    expect(mapMetricNames("trl", ["train/entropy", "eval_entropy"]).mapped).toEqual({
      entropy: "train/entropy",
    });
    expect(mapMetricNames("trl", ["train/entropy", "eval_entropy"]).unmapped).toEqual([
      "eval_entropy",
    ]);
    expect(mapMetricNames("openrlhf", ["train/ppo_kl"]).mapped).toEqual({ kl_old: "train/ppo_kl" });
    expect(mapMetricNames("verl", ["train/actor/entropy"]).unmapped).toEqual([
      "train/actor/entropy",
    ]);
  });

  test("golden: a mapped name the given release does not log is absent (TRL entropy before v0.20.0)", () => {
    const r = mapMetricNames("trl", ["entropy", "reward"], "v0.19.1");
    expect(r.absent).toEqual([{ name: "entropy", quantity: "entropy" }]);
    expect(r.mapped).toEqual({ reward_mean: "reward" });
    expect(releasesLogging("trl", "entropy")[0]).toBe("v0.20.0");
  });

  test("golden: a name whose meaning depends on the release is set aside without one or outside its range", () => {
    expect(mapMetricNames("trl", ["reward_std"]).setAside[0]?.why).toMatch(/give the release/);
    expect(mapMetricNames("trl", ["reward_std"], "v0.26.2").setAside[0]?.why).toMatch(
      /not v0.26.2/,
    );
    expect(mapMetricNames("trl", ["reward_std"], "v0.27.0").mapped).toEqual({
      reward_std: "reward_std",
    });
    expect(mapMetricNames("verl", ["actor/kl_loss"], "v0.4.1").mapped).toEqual({
      kl_ref: "actor/kl_loss",
    });
    expect(mapMetricNames("verl", ["actor/kl_loss"], "v0.9.0").mapped).toEqual({});
    // actor/kl_loss set aside at v0.9.0, so the name ranked below it is used.
    expect(
      mapMetricNames("verl", ["actor/kl_loss", "actor/reward_kl_penalty"], "v0.9.0").mapped,
    ).toEqual({
      kl_ref: "actor/reward_kl_penalty",
    });
  });

  test("golden: secondTo ranks two names for one quantity; an unranked pair is ambiguous", () => {
    const r = mapMetricNames("openrlhf", ["reward", "rollout/reward_mean"], "v0.11.0");
    expect(r.mapped).toEqual({ reward_mean: "rollout/reward_mean" });
    expect(r.setAside).toEqual([
      {
        name: "reward",
        quantity: "reward_mean",
        why: "second to rollout/reward_mean, also logged",
      },
    ]);
    const a = mapMetricNames("trl", ["entropy", "train/entropy"]);
    expect(a.ambiguous).toEqual([{ quantity: "entropy", names: ["entropy", "train/entropy"] }]);
    expect(a.mapped).toEqual({});
  });

  test("no guess: unknown names stay unmapped, close spellings included", () => {
    const r = mapMetricNames("verl", [
      "actor/entropy_mean",
      "Actor/entropy",
      "entropy",
      "actor/pg_clipfrac",
    ]);
    expect(r.mapped).toEqual({ clip_total: "actor/pg_clipfrac" });
    expect(r.unmapped).toEqual(["actor/entropy_mean", "Actor/entropy", "entropy"]);
    expect(mapMetricNames("trl", ["rewards/accuracy/mean"]).unmapped).toEqual([
      "rewards/accuracy/mean",
    ]);
  });

  test.each(METRIC_FRAMEWORKS)(
    "golden: auto picks %s for each recorded release's own names",
    (f) => {
      for (const r of metricNames(f).releases) {
        const res = mapMetricNames("auto", [...r.exact]);
        expect(res.framework, `${f} ${r.label}`).toBe(f);
        expect(res.why).toMatch(new RegExp(`^auto: ${f} records the most`));
      }
    },
  );

  test("golden: the doc's example: TensorBoard names of a TRL run", () => {
    const r = mapMetricNames("auto", [
      "train/entropy",
      "train/kl",
      "train/clip_ratio/low_mean",
      "train/loss",
    ]);
    expect(r.framework).toBe("trl");
    expect(r.mapped).toEqual({
      entropy: "train/entropy",
      kl_ref: "train/kl",
      clip_low: "train/clip_ratio/low_mean",
    });
    expect(r.unmapped).toEqual(["train/loss"]);
  });

  test("no guess: auto on a tie returns null with the candidates; on no known name, no candidate", () => {
    const tie = mapMetricNames("auto", ["kl", "reward"]);
    expect(tie.framework).toBeNull();
    expect(tie.candidates).toEqual(["trl", "openrlhf"]);
    expect(tie.mapped).toEqual({});
    expect(tie.unmapped).toEqual(["kl", "reward"]);
    const none = mapMetricNames("auto", ["foo", "bar/baz"]);
    expect(none.framework).toBeNull();
    expect(none.candidates).toEqual([]);
  });

  test("error: an unknown framework or release raises E_UNKNOWN_NAME", () => {
    expect(() => mapMetricNames("deepspeed" as MetricFramework, [])).toThrow(UnknownNameError);
    expect(() => mapMetricNames("trl", [], "v9.9.9")).toThrow(UnknownNameError);
  });
});

describe("docs/diagnostics/metric-names.md", () => {
  test.each(METRIC_FRAMEWORKS)(
    "identity: the doc carries %s's map table as generated from the map and the recording",
    (f) => {
      const doc = readFileSync(DOC, "utf8");
      if (!doc.includes(mapTable(f))) console.log(`${f}:\n${mapTable(f)}`);
      expect(doc).toContain(mapTable(f));
    },
  );
});
