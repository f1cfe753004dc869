import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type PolicyLossResult,
  policyLoss,
  policyLossBlocks,
} from "../../src/losses/policyLoss.js";
import { FC_PARAMS } from "../_kit/index.js";
import { policyBatches as batches, expectSame, outcome } from "../_kit/policyBatches.js";

const FIELDS = {
  gradLogprobs: "grad",
  perTokenObjective: "objective",
  ratio: "ratio",
  clippedLow: "low",
  clippedHigh: "high",
} as const;

describe("policyLossBlocks", () => {
  it("identity: blocks of every size give policyLoss's bits, and null exactly where policyLoss throws or overflows", () => {
    let streamed = 0;
    let fellBack = 0;
    fc.assert(
      fc.property(
        batches,
        fc.integer({ min: 1, max: 40 }),
        ({ config, inputs, B, T }, positions) => {
          const want = outcome(() => policyLoss(config, inputs));
          // Assemble the blocks into whole arrays, checking that they tile the rows in order.
          const n = B * T;
          const whole = {
            gradLogprobs: new Float64Array(n),
            perTokenObjective: new Float64Array(n),
            ratio: new Float64Array(n),
            clippedLow: new Uint8Array(n),
            clippedHigh: new Uint8Array(n),
          };
          let next = 0;
          let scalars: ReturnType<typeof policyLossBlocks> = null;
          const got = outcome(() => {
            scalars = policyLossBlocks(config, inputs, positions, (b0, b1, out) => {
              expect(b0).toBe(next);
              expect(out.grad.length).toBe((b1 - b0) * T);
              next = b1;
              for (const [k, f] of Object.entries(FIELDS)) {
                (whole[k as keyof typeof FIELDS] as Float64Array).set(out[f], b0 * T);
              }
            });
            if (scalars === null) throw new Error("fell back");
            expect(next).toBe(B);
            const s = scalars as { loss: number; klLoss: number | null };
            const m = (data: Float64Array | Uint8Array) => ({ rows: B, cols: T, data });
            return {
              loss: s.loss,
              klLoss: s.klLoss,
              gradLogprobs: m(whole.gradLogprobs),
              perTokenObjective: m(whole.perTokenObjective),
              ratio: m(whole.ratio),
              clippedLow: m(whole.clippedLow),
              clippedHigh: m(whole.clippedHigh),
            } as PolicyLossResult;
          });
          if ("err" in got && got.err.endsWith("fell back")) {
            // A fallback only where policyLoss must judge: an error (non-finite input, overflow)
            // or a sum that overflowed before its scaled recomputation.
            fellBack++;
            if ("ok" in want && want.ok.klLoss === null) {
              // Without KL, only Σ w·objective overflowing its plain sum lets policyLoss succeed
              // where the blocks stop: a term within a few orders of float64's largest.
              let big = 0;
              for (const x of want.ok.perTokenObjective.data) big = Math.max(big, Math.abs(x));
              expect(big, "a fallback with a result has a huge term").toBeGreaterThan(1e280);
            }
            return;
          }
          streamed++;
          expectSame(got, want, `${JSON.stringify(config)} positions ${positions}`);
        },
      ),
      { ...FC_PARAMS, numRuns: FC_PARAMS.numRuns * 10 },
    );
    expect(streamed).toBeGreaterThan(50);
    expect(fellBack).toBeGreaterThan(10);
  });
});
