// assertConforms from node:test (run by test/testing/nodeRunner.test.ts with `node --test`):
// the package's own `polgrad/testing` export, a framework author's loss written in plain JS with a
// closed-form gradient, and the failure a flat token mean gets against GRPO's aggregation.
import assert from "node:assert/strict";
import { test } from "node:test";
import { assertConforms } from "polgrad/testing";

/** PPO-clip ℓ = max(−A·r, −A·clip(r, 0.8, 1.2)) per token, r = exp(lp − old); `mean` "seq" or "token". */
function myLoss(mean) {
  return ({ logprobs, oldLogprobs, advantages, responseMask }) => {
    const B = logprobs.length;
    const T = logprobs[0].length;
    const grad = logprobs.map((row) => row.map(() => 0));
    const N = responseMask.flat().filter(Boolean).length;
    let loss = 0;
    for (let b = 0; b < B; b++) {
      const L = responseMask[b].filter(Boolean).length;
      const w = mean === "seq" ? 1 / (B * L) : 1 / N;
      for (let t = 0; t < T; t++) {
        if (!responseMask[b][t]) continue;
        const A = advantages[b];
        const r = Math.exp(logprobs[b][t] - oldLogprobs[b][t]);
        const c = Math.min(Math.max(r, 0.8), 1.2);
        const unclipped = -A * r;
        const clipped = -A * c;
        loss += w * Math.max(unclipped, clipped);
        // d/dlp of the larger branch: −A·r on the unclipped one (and inside the band, where both agree).
        grad[b][t] = unclipped >= clipped || c === r ? w * -A * r : 0;
      }
    }
    return { loss, gradLogprobs: grad };
  };
}

const GRPO = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
  aggregation: "seq_mean_token_mean",
};

test("a GRPO loss conforms to seq_mean_token_mean", () => {
  const report = assertConforms(myLoss("seq"), GRPO);
  assert.equal(report.conforms, true);
  assert.ok(report.maxLossRelDiff < 1e-12);
});

test("a flat token mean does not, and the error says why", () => {
  assert.throws(
    () => assertConforms(myLoss("token"), GRPO),
    (e) => {
      assert.equal(e.code, "E_VERIFY");
      assert.match(e.message, /polgrad conformance violation/);
      assert.match(
        e.message,
        /diagnosis: the implementation matches the reference with aggregation token_mean/,
      );
      return true;
    },
  );
});
