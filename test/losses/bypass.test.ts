/**
 * Enforces docs/derivations/losses.md#bypass-mode: verl's rollout-correction bypass mode is one of
 * our configs with the inputs it names. PPO-clip bypass is pg_clip with oldLogprobs := the rollout
 * logprobs. Bypass REINFORCE (verl's compute_policy_loss_bypass_mode → compute_policy_loss_reinforce)
 * is reinforce with the IS weight sg[min(exp(lp − rollout), C)] and rejection rules on lp vs rollout
 * (oldLogprobs := the current logprobs as data), aggregated over the rejected mask with the
 * pre-rejection token count (options.global.tokens = N before rejection), as verl's
 * global_batch_info has it. Checked against the formula written out here.
 */
import { describe, expect, it } from "vitest";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { policyLoss } from "../../src/losses/policyLoss.js";

describe("bypass mode", () => {
  it("golden: verl's bypass REINFORCE is reinforce × sg[min(e^(lp − rollout), 2)] over the kept tokens, divided by the pre-rejection count", () => {
    const lp = [
      [-1.0, -0.5, -2.0],
      [-0.3, -1.2, -0.9],
    ];
    const roll = [
      [-1.2, -0.5, -0.4],
      [-0.35, -1.0, -0.7],
    ];
    const mask = [
      [true, true, true],
      [true, true, false],
    ];
    const A = [1.5, -0.5];
    // The k1 token rule keeps π_rollout/π_lp in [0.5, 2]: −(lp − roll) in [ln 0.5, ln 2].
    // (0, 2): lp − roll = −1.6 → rollout/lp ratio e^1.6 > 2: rejected. Every other token is kept.
    const config: PolicyLossConfig = {
      ratio: "token",
      surrogate: "reinforce",
      clip: null,
      aggregation: "token_mean",
      normLen: null,
      isCorrection: { level: "token", cap: 2 },
      kl: null,
      emptyRows: "count",
      rejection: [{ statistic: "token", estimator: "k1", lower: 0.5, upper: 2 }],
    };
    const N = 5; // response tokens before rejection
    const out = policyLoss(
      config,
      { logprobs: lp, oldLogprobs: lp, rolloutLogprobs: roll, advantages: A, responseMask: mask },
      { global: { tokens: N } },
    );
    let loss = 0;
    const grad: number[] = [];
    for (let b = 0; b < 2; b++) {
      for (let t = 0; t < 3; t++) {
        const on = (mask[b] as boolean[])[t] && !(b === 0 && t === 2);
        const l = (lp[b] as number[])[t] as number;
        const w = Math.min(Math.exp(l - ((roll[b] as number[])[t] as number)), 2);
        const a = A[b] as number;
        loss += on ? (-a * l * w) / N : 0;
        grad.push(on ? (-a * w) / N : 0);
      }
    }
    expect(out.loss).toBeCloseTo(loss, 15);
    expect(Array.from(out.gradLogprobs.data).map((g, i) => g - (grad[i] as number))).toEqual(
      grad.map(() => expect.closeTo(0, 15)),
    );
    // Without the global count the denominator would be the 4 kept tokens: a different loss.
    const local = policyLoss(config, {
      logprobs: lp,
      oldLogprobs: lp,
      rolloutLogprobs: roll,
      advantages: A,
      responseMask: mask,
    });
    expect(local.loss).toBeCloseTo((loss * N) / 4, 14);
  });
});
