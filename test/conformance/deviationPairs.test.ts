/**
 * deviationReport and the registered pairs of `polgrad deviations --pairs`
 * (docs/conformance/deviations.md#pairs), measured now.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  DEVIATION_PAIRS,
  deviationReport,
  deviationReportSummary,
  measureDeviationPairs,
} from "../../src/conformance/deviationPairs.js";
import { DEVIATIONS } from "../../src/conformance/deviations.js";
import { POLGRAD_VENDORED } from "../../src/conformance/frameworks/polgradVendored.js";
import { ConfigError, UnknownNameError } from "../../src/errors.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { ALGORITHM_NAMES, ALGORITHMS } from "../../src/registry/index.js";
import type { DrawnBatch } from "../../src/verify/draw.js";

/** Every stream of a drawn batch, entropies included (compareLosses' default leaves them out). */
const allStreams = (d: DrawnBatch) => ({
  logprobs: d.logprobs,
  oldLogprobs: d.oldLogprobs,
  advantages: d.advantages,
  responseMask: d.responseMask,
  refLogprobs: d.refLogprobs,
  rolloutLogprobs: d.rolloutLogprobs,
  entropies: d.entropies,
});

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

describe("deviationReport", () => {
  test("golden: verl token-mean equals pg_clip with ratio_cap 3 and the pair's notes name both sides", () => {
    const r = deviationReport(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 },
        aggregation: "token_mean",
      },
      "verl@1dda039b:vanilla:token-mean",
      { cases: 16 },
    );
    expect(r.cases).toBe(16);
    expect(r.maxLossRelDiff).toBeLessThanOrEqual(1e-12);
    expect(r.maxGradRelDiff).toBeLessThanOrEqual(1e-11);
    expect(r.notes).toEqual([
      // polgrad's note, `clip={config.clip}`: the dataclass repr prints the float 3.0.
      "polgrad: surrogate=pg_clip, ratio=token, aggregation=token_mean, clip=ClipConfig(eps_low=0.2, eps_high=0.2, ratio_cap=3.0) (explicit PolicyLossConfig)",
      "framework: verl@1dda039b:vanilla:token-mean",
      expect.stringMatching(
        /^verl model of verl-project\/verl verl\/trainer\/ppo\/core_algos\.py at 1dda039b9c63: a polgrad model replayed against fixtures/,
      ),
    ]);
    const text = deviationReportSummary(r).split("\n");
    expect(text[0]).toMatch(
      /^conformance over 16 seeded cases: max loss rel diff \d\.\d{3}e[-+]\d+, max grad rel diff \d\.\d{3}e[-+]\d+, min grad cosine \d\.\d{9}, worst-case seed \d+$/,
    );
    expect(text.slice(1)).toEqual(r.notes);
  });

  test("golden: Dr.GRPO's norm_len 16 against verl's padded width 8 is the factor T/norm_len = 1/2 exactly", () => {
    const r = deviationReport(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 },
        aggregation: "token_sum_norm",
        normLen: 16,
      },
      "verl@1dda039b:vanilla:seq-mean-token-sum-norm",
      { cases: 8, shapes: [[4, 8]] },
    );
    // polgrad divides by B·16, verl by B·8: loss_a / loss_b = 8/16 on every case.
    expect(r.lossRatioRange[0]).toBeCloseTo(0.5, 14);
    expect(r.lossRatioRange[1]).toBeCloseTo(0.5, 14);
    expect(r.gradCosineMin).toBeCloseTo(1, 12);
  });

  test("golden: a KL config, where polgrad 0.2.0 raises, equals TRL's beta 0.04 model and its notes name the KL term and the reference stream", () => {
    // polgrad's deviation_report calls policy_loss without ref_logprobs, so a config with kl
    // raises ("config.kl is set but ref_logprobs is None"). Here the batches carry ref_logprobs:
    // TRL's dapo loss with β = 0.04 adds k3 = e^(ref − lp) − (ref − lp) − 1 to each token's
    // clipped term before its token mean, which is pg_clip token_mean plus 0.04·k3 token_mean.
    const r = deviationReport(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { epsLow: 0.2, epsHigh: 0.2 },
        aggregation: "token_mean",
        kl: { kind: "k3", coef: 0.04 },
      },
      "trl@f2cd5771:dapo:token:beta-0.04",
      { cases: 16 },
    );
    expect(r.maxLossRelDiff).toBeLessThanOrEqual(1e-12);
    expect(r.maxGradRelDiff).toBeLessThanOrEqual(1e-11);
    expect(r.notes.slice(0, 3)).toEqual([
      'polgrad: surrogate=pg_clip, ratio=token, aggregation=token_mean, clip=ClipConfig(eps_low=0.2, eps_high=0.2, ratio_cap=None), kl={"kind":"k3","coef":0.04,"aggregation":null,"norm_len":null} (explicit PolicyLossConfig)',
      "inputs: the polgrad side also reads ref_logprobs (kl); polgrad 0.2.0's deviation_report passes only logprobs, old_logprobs, advantages and response_mask, and raises on such a config",
      "framework: trl@f2cd5771:dapo:token:beta-0.04",
    ]);
  });

  test("golden: grpo_tis names its TIS correction, its KL term and both streams they read", () => {
    const r = deviationReport("grpo_tis", "trl@f2cd5771:grpo:token", { cases: 2 });
    expect(r.notes[0]).toBe(
      'polgrad: surrogate=pg_clip, ratio=token, aggregation=seq_mean_token_mean, clip=ClipConfig(eps_low=0.2, eps_high=0.2, ratio_cap=None), is_correction={"cap":10,"level":"token"}, kl={"kind":"k3","coef":0.04,"aggregation":null,"norm_len":null} (ALGORITHMS[\'grpo_tis\'].loss)',
    );
    expect(r.notes[1]).toMatch(
      /^inputs: the polgrad side also reads ref_logprobs \(kl\) and rollout_logprobs \(is_correction\);/,
    );
    // A config polgrad 0.2.0 accepts reads no further stream and gets no inputs note.
    const plain = deviationReport("dapo", "trl@f2cd5771:dapo:token", { cases: 1 });
    expect(plain.notes.map((n) => n.split(":")[0])).toEqual([
      "polgrad",
      "framework",
      "trl model of huggingface/trl trl/trainer/grpo_trainer.py at f2cd57710ae3",
    ]);
  });

  test("identity: the notes name every component each registered algorithm's loss sets, and the streams it reads", () => {
    for (const name of ALGORITHM_NAMES) {
      const loss: PolicyLossConfig = ALGORITHMS[name].loss;
      const config =
        loss.aggregation === "token_sum_norm" && loss.normLen == null
          ? { ...loss, normLen: 8 }
          : loss;
      const r = deviationReport(config, "trl@f2cd5771:grpo:token", {
        cases: 1,
        shapes: [[2, 4]],
        inputs: allStreams,
      });
      const line = r.notes[0] as string;
      for (const [k, v] of Object.entries(config)) {
        if (v === null || v === undefined || (k === "emptyRows" && v === "reject")) continue;
        expect([name, line]).toEqual([name, expect.stringContaining(`${snake(k)}=`)]);
      }
      const reads =
        config.kl != null ||
        config.isCorrection != null ||
        config.rejection != null ||
        config.offPolicyMask?.sampling === "rollout" ||
        config.topEntropyQuantile != null ||
        config.entropyBonus != null;
      expect([name, r.notes[1]?.startsWith("inputs: ")]).toEqual([name, reads]);
    }
  });

  test("identity: docs/porting.md maps polgrad's VENDORED keys as POLGRAD_VENDORED does, and deviationReport against each pg_clip key's id matches its polgrad configuration to 1e-12", () => {
    const page = readFileSync(new URL("../../docs/porting.md", import.meta.url), "utf8");
    const rows = [
      ...page.matchAll(
        /^\| `VENDORED\[\("(\w+)", "(\w+)"\)\]` \| `getFrameworkModel\("([^"]+)"\)`/gm,
      ),
    ].map((m) => [`${m[1]}/${m[2]}`, m[3]]);
    expect(Object.fromEntries(rows)).toEqual(POLGRAD_VENDORED);
    expect(rows).toHaveLength(11);
    // polgrad's VENDORED wrappers clip at 0.2/0.2; verl always dual-clips at c = 3; under the
    // float64 mask polgrad's wrappers pass, verl's and OpenRLHF's sequence means divide each row by
    // L_b + 1e-8 (rowEpsilon); dr_grpo and verl's sum-norm divide by the padded width T = 8.
    const pg = (
      aggregation: PolicyLossConfig["aggregation"],
      o: { cap?: number; normLen?: number; rowEpsilon?: number } = {},
    ): PolicyLossConfig => ({
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: o.cap ?? null },
      aggregation,
      normLen: o.normLen ?? null,
      rowEpsilon: o.rowEpsilon ?? null,
    });
    const configs: Record<string, PolicyLossConfig> = {
      "verl/pg_clip_token_mean": pg("token_mean", { cap: 3 }),
      "verl/pg_clip_seq_mean_token_mean": pg("seq_mean_token_mean", { cap: 3, rowEpsilon: 1e-8 }),
      "verl/pg_clip_seq_mean_token_sum": pg("seq_mean_token_sum", { cap: 3 }),
      "verl/pg_clip_seq_mean_token_sum_norm": pg("token_sum_norm", { cap: 3, normLen: 8 }),
      "openrlhf/pg_clip_token_mean": pg("token_mean"),
      "openrlhf/pg_clip_seq_mean_token_mean": pg("seq_mean_token_mean", { rowEpsilon: 1e-8 }),
      "trl/grpo": pg("seq_mean_token_mean"),
      "trl/bnpo": pg("token_mean"),
      "trl/dr_grpo": pg("token_sum_norm", { normLen: 8 }),
    };
    for (const [key, config] of Object.entries(configs)) {
      const id = POLGRAD_VENDORED[key] as string;
      const r = deviationReport(config, id, { cases: 16, shapes: [[4, 8]] });
      expect([key, r.maxLossRelDiff <= 1e-12, r.maxGradRelDiff <= 1e-11]).toEqual([
        key,
        true,
        true,
      ]);
      expect(r.notes).toContain(`framework: ${id}`);
    }
  });

  test("reject: an unknown algorithm name or model id", () => {
    expect(() => deviationReport("gropo", "verl@1dda039b:vanilla:token-mean")).toThrow(ConfigError);
    expect(() => deviationReport("grpo", "verl@1dda039b:vanila:token-mean")).toThrow(
      UnknownNameError,
    );
  });
});

describe("DEVIATION_PAIRS", () => {
  test("conformance: every matching pair matches to 1e-12 and every deviating pair deviates, measured now", () => {
    const measured = measureDeviationPairs();
    expect(measured.filter((p) => !p.holds).map((p) => p.title)).toEqual([]);
    expect(measured.filter((p) => p.expected === "match").length).toBeGreaterThanOrEqual(4);
  });

  test("identity: every pair names a registered deviation or none, and every loss deviation with a framework model has a pair", () => {
    const ids = new Set(DEVIATIONS.map((d) => d.id));
    for (const p of DEVIATION_PAIRS)
      if (p.deviation !== null) expect(ids.has(p.deviation)).toBe(true);
    const paired = new Set(DEVIATION_PAIRS.map((p) => p.deviation));
    for (const id of [
      "verl-sum-norm-padded-width",
      "verl-dual-clip-always-on",
      "verl-gspo-token-form",
      "verl-gspo-ignores-aggregation",
      "trl-cispo-absolute-cap",
    ])
      expect(paired.has(id)).toBe(true);
  });
});
