/**
 * Enforces that policyLoss with `config.rejection` takes out exactly the response tokens that
 * verl's real compute_rollout_rejection_mask (verl/trainer/ppo/rollout_corr_helper.py, rollout_rs)
 * rejects, as recorded by tools/record-fixtures/verlRejection.py
 * (test/fixtures/frameworks/verl-rejection.json) at the verl pins of frameworks.py: token_k1/k2/k3,
 * seq_sum_k1/k3, seq_mean_k1/k3, seq_max_k2, a chained token_k1,seq_max_k3 and a single-value k1
 * threshold. There is no public function returning the rejected mask, so each case runs policyLoss
 * (token ratio, pg, no clip, token_mean, empty_rows count, the variant's recorded rules) with
 * advantages 1: a kept response token has ∂L/∂lp = −r/N ≠ 0, a rejected token or padding exactly 0,
 * so the kept mask is where gradLogprobs is non-zero. It must equal the recorded
 * modified_response_mask exactly. Also checks the provenance names the pins, that every variant
 * has 4 cases, and that each case both rejected and kept a response token.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { parsePolicyLossConfig } from "../../../src/io/configJson.js";
import { policyLoss } from "../../../src/losses/policyLoss.js";

type Rows = number[][];

interface RuleJson {
  readonly statistic: string;
  readonly estimator: string;
  readonly lower: number | null;
  readonly upper: number;
  readonly log_clamp: number | null;
}

interface RejectionCase {
  readonly seed: number;
  readonly shape: readonly [number, number];
  readonly inputs: {
    readonly logprobs: Rows;
    readonly old_logprobs: Rows;
    readonly rollout_logprobs: Rows;
    readonly response_mask: boolean[][];
  };
  readonly outputs: { readonly modified_response_mask: Rows };
  readonly tokens_rejected: number;
}

interface RejectionVariant {
  readonly framework: "verl";
  readonly pin: string;
  readonly commit: string;
  readonly name: string;
  readonly rollout_rs: string;
  readonly rollout_rs_threshold: string;
  readonly config_rejection: readonly RuleJson[];
  readonly cases: readonly RejectionCase[];
}

interface RejectionFixture {
  readonly provenance: {
    readonly tool: string;
    readonly pins: readonly {
      readonly label: string;
      readonly commit: string;
      readonly files: readonly { readonly path: string; readonly sha256: string }[];
      readonly variants: readonly string[];
    }[];
  };
  readonly variants: readonly RejectionVariant[];
}

const FIXTURE = JSON.parse(
  readFileSync(
    fileURLToPath(new URL("../../fixtures/frameworks/verl-rejection.json", import.meta.url)),
    "utf8",
  ),
) as RejectionFixture;

const PINS = [
  ["74a718a4", "74a718a492092312f1004fe25369975137388849"],
  ["1dda039b", "1dda039b9c6311889a9c9a26040677e1254814f9"],
] as const;

const VARIANTS = [
  "token_k1@0.5_2.0",
  "token_k2@0.5",
  "token_k3@0.4",
  "seq_sum_k1@0.5_2.0",
  "seq_mean_k1@0.9_1.1",
  "seq_mean_k3@0.05",
  "seq_max_k2@1.0",
  "seq_sum_k3@2.0",
  "token_k1,seq_max_k3@0.3_3.0,1.0",
  "token_k1@2.0",
  "token_k1@0.5_1.2",
  "seq_mean_k1@0.6_1.05",
];

const label = (v: RejectionVariant): string => `verl@${v.pin} ${v.name}`;

/** The kept mask policyLoss leaves: 1 where gradLogprobs is non-zero (pg, A = 1, token_mean). */
function keptMask(v: RejectionVariant, c: RejectionCase): Rows {
  const config = parsePolicyLossConfig(
    {
      ratio: "token",
      surrogate: "pg",
      clip: null,
      aggregation: "token_mean",
      norm_len: null,
      is_correction: null,
      kl: null,
      empty_rows: "count",
      rejection: v.config_rejection,
    },
    `verl-rejection.json ${label(v)}`,
  );
  const [B, T] = c.shape;
  const r = policyLoss(config, {
    logprobs: c.inputs.logprobs,
    oldLogprobs: c.inputs.old_logprobs,
    rolloutLogprobs: c.inputs.rollout_logprobs,
    advantages: new Array<number>(B).fill(1),
    responseMask: c.inputs.response_mask,
  });
  const g = r.gradLogprobs;
  expect([g.rows, g.cols]).toEqual([B, T]);
  return Array.from({ length: B }, (_, b) =>
    Array.from({ length: T }, (_, t) => ((g.data[b * T + t] as number) !== 0 ? 1 : 0)),
  );
}

describe("verl rejection-sampling fixtures", () => {
  test("identity: the provenance names both verl pins, each with the twelve variants", () => {
    expect(FIXTURE.provenance.tool).toBe("tools/record-fixtures/verlRejection.py");
    expect(FIXTURE.provenance.pins.map((p) => [p.label, p.commit])).toEqual(
      PINS.map((p) => [...p]),
    );
    for (const p of FIXTURE.provenance.pins) {
      expect(p.files.map((f) => f.path)).toContain("verl/trainer/ppo/rollout_corr_helper.py");
      for (const f of p.files) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect([...p.variants]).toEqual(VARIANTS);
      const mine = FIXTURE.variants.filter((v) => v.pin === p.label);
      expect(mine.map((v) => v.name)).toEqual(VARIANTS);
      for (const v of mine) expect(v.commit).toBe(p.commit);
    }
    expect(FIXTURE.variants.length).toBe(PINS.length * VARIANTS.length);
  });

  test("identity: every variant has 4 cases, each rejecting and keeping response tokens", () => {
    const bad: string[] = [];
    for (const v of FIXTURE.variants) {
      if (v.cases.length !== 4) bad.push(`${label(v)}: ${v.cases.length} cases`);
      let rejected = 0;
      let kept = 0;
      for (const c of v.cases) {
        let caseRejected = 0;
        c.inputs.response_mask.forEach((row, b) =>
          row.forEach((on, t) => {
            const out = (c.outputs.modified_response_mask[b] as number[])[t];
            if (!on && out !== 0) bad.push(`${label(v)} seed ${c.seed}: padding [${b}, ${t}] kept`);
            if (on && out === 0) caseRejected++;
            if (on && out === 1) kept++;
          }),
        );
        if (caseRejected !== c.tokens_rejected)
          bad.push(
            `${label(v)} seed ${c.seed}: ${caseRejected} rejected, recorded ${c.tokens_rejected}`,
          );
        rejected += caseRejected;
      }
      if (rejected === 0) bad.push(`${label(v)}: no response token rejected`);
      if (kept === 0) bad.push(`${label(v)}: no response token kept`);
    }
    expect(bad).toEqual([]);
  });

  test.each(FIXTURE.variants.map((v) => [label(v), v] as const))(
    "conformance: policyLoss rejection keeps exactly verl's modified_response_mask for %s",
    (_name, v) => {
      const bad: string[] = [];
      for (const c of v.cases) {
        const mine = keptMask(v, c);
        const theirs = c.outputs.modified_response_mask;
        const diff: string[] = [];
        theirs.forEach((row, b) =>
          row.forEach((x, t) => {
            if ((mine[b] as number[])[t] !== x)
              diff.push(`[${b}, ${t}] ours ${(mine[b] as number[])[t]} verl ${x}`);
          }),
        );
        if (diff.length > 0) bad.push(`seed ${c.seed}: ${diff.join(", ")}`);
      }
      expect(bad).toEqual([]);
    },
  );
});
