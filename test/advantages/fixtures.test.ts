/**
 * Enforces docs/derivations/advantages.md#conformance: the advantage estimators reproduce polgrad
 * 0.2.0 (PyTorch, float64) on every recorded case of test/fixtures/polgrad/advantages.json
 * (grouped rewards with non-contiguous labels, singletons and zero-spread groups; ragged GAE and
 * whiten batches with 123 junk at padding). Provenance: the file's `provenance` block.
 * Tolerance: 1e-12 relative per element, |a − e| ≤ 1e-12·|e| (so a recorded 0 — padding, a
 * singleton or zero-spread group — must be reproduced exactly); only summation order differs.
 */
import { describe, expect, test } from "vitest";
import {
  broadcastToTokens,
  type GroupNormConfig,
  gae,
  grpoAdvantages,
  reinforcePPAdvantages,
  rlooAdvantages,
  whiten,
} from "../../src/advantages/index.js";
import { type FixtureNumber, loadPolgradFixture, num, rows } from "../_kit/polgradFixtures.js";

type Rows = FixtureNumber[][];
interface Case {
  name: string;
  function: string;
  args: Record<string, unknown>;
  outputs: Record<string, FixtureNumber[] | Rows>;
}
const fixture = loadPolgradFixture<{ provenance: { polgrad_commit: string }; cases: Case[] }>(
  "advantages.json",
);

function casesOf(fn: string): Case[] {
  return fixture.cases.filter((c) => c.function === fn);
}

/** Worst element-wise relative error max_i |a_i − e_i|/|e_i| (absolute where e_i = 0). */
function elemErr(
  actual: { data: Float64Array } | Float64Array,
  expected: FixtureNumber[] | Rows,
): number {
  const a = actual instanceof Float64Array ? actual : actual.data;
  const e = (expected as (FixtureNumber | FixtureNumber[])[]).flat().map(num);
  if (a.length !== e.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < e.length; i++) {
    const x = e[i] as number;
    const d = Math.abs((a[i] as number) - x);
    worst = Math.max(worst, x === 0 ? d : d / Math.abs(x));
  }
  return worst;
}

/** Replay every case of `fn`, collecting `name: errors` for the cases off by more than 1e-12. */
function replay(fn: string, run: (c: Case) => Record<string, number>): string[] {
  const cases = casesOf(fn);
  expect(cases.length).toBeGreaterThan(0);
  const failures: string[] = [];
  for (const c of cases) {
    const errs = run(c);
    if (!(Math.max(...Object.values(errs)) <= 1e-12))
      failures.push(`${c.name}: ${JSON.stringify(errs)}`);
  }
  return failures;
}

describe("grpoAdvantages", () => {
  test("golden: matches polgrad 0.2.0 on every recorded grpo_advantages case", () => {
    expect(fixture.provenance.polgrad_commit).toBe("27613d8c633627359808625213f5b058afaec29f");
    const failures = replay("grpo_advantages", (c) => {
      const a = c.args as {
        rewards: FixtureNumber[];
        group_ids: number[];
        config: GroupNormConfig;
      };
      const out = grpoAdvantages(a.rewards.map(num), a.group_ids, a.config);
      return { advantages: elemErr(out, c.outputs.advantages as FixtureNumber[]) };
    });
    expect(failures).toEqual([]);
  });
});

describe("rlooAdvantages", () => {
  test("golden: matches polgrad 0.2.0 on every recorded rloo_advantages case", () => {
    const failures = replay("rloo_advantages", (c) => {
      const a = c.args as { rewards: FixtureNumber[]; group_ids: number[] };
      const out = rlooAdvantages(a.rewards.map(num), a.group_ids);
      return { advantages: elemErr(out, c.outputs.advantages as FixtureNumber[]) };
    });
    expect(failures).toEqual([]);
  });
});

describe("reinforcePPAdvantages", () => {
  test("golden: matches polgrad 0.2.0 on every recorded reinforce_pp_advantages case", () => {
    const failures = replay("reinforce_pp_advantages", (c) => {
      const a = c.args as {
        rewards: FixtureNumber[];
        group_ids: number[] | null;
        config: { batch_norm: boolean; eps: number };
      };
      const out = reinforcePPAdvantages(a.rewards.map(num), a.group_ids, {
        batchNorm: a.config.batch_norm,
        eps: a.config.eps,
      });
      return { advantages: elemErr(out, c.outputs.advantages as FixtureNumber[]) };
    });
    expect(failures).toEqual([]);
  });
});

describe("gae", () => {
  test("golden: matches polgrad 0.2.0 on every recorded gae case", () => {
    const failures = replay("gae", (c) => {
      const a = c.args as {
        token_rewards: Rows;
        values: Rows;
        config: { gamma: number; lam: number };
        response_mask: boolean[][];
      };
      const out = gae(rows(a.token_rewards), rows(a.values), a.config, a.response_mask);
      return {
        advantages: elemErr(out.advantages, c.outputs.advantages as Rows),
        returns: elemErr(out.returns, c.outputs.returns as Rows),
      };
    });
    expect(failures).toEqual([]);
  });
});

describe("broadcastToTokens", () => {
  test("golden: matches polgrad 0.2.0 on every recorded broadcast_to_tokens case", () => {
    const failures = replay("broadcast_to_tokens", (c) => {
      const a = c.args as { per_seq: FixtureNumber[]; response_mask: boolean[][] };
      const out = broadcastToTokens(a.per_seq.map(num), a.response_mask);
      return { result: elemErr(out, c.outputs.result as Rows) };
    });
    expect(failures).toEqual([]);
  });
});

describe("whiten", () => {
  test("golden: matches polgrad 0.2.0 on every recorded whiten case", () => {
    const failures = replay("whiten", (c) => {
      const a = c.args as { x: Rows; response_mask: boolean[][]; shift_mean: boolean; eps: number };
      const out = whiten(rows(a.x), a.response_mask, { shiftMean: a.shift_mean, eps: a.eps });
      return { result: elemErr(out, c.outputs.result as Rows) };
    });
    expect(failures).toEqual([]);
  });
});
