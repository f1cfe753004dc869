/**
 * Enforces the bitwise identities of the polgrad claim table that concern the closed-form losses
 * (docs/derivations/reference.md#identities). Bitwise means Object.is per element of every output,
 * so −0 vs +0 and NaN are told apart; "exactly 0" means === 0 (the sign of a zero is not claimed).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { klLoss, policyLoss, reverseKlGradSurrogate } from "../../src/index.js";
import type { ClipConfig, PolicyLossConfig } from "../../src/losses/config.js";
import { policyLossRef } from "../../src/verify/reference/index.js";
import {
  AGGREGATIONS,
  buildConfig,
  expectBitwise,
  expectClose,
  FC_PARAMS,
  KL_VARIANTS,
  type LogprobBatch,
  logprobBatches,
  policyInputs,
  RATIO_SURROGATE_PAIRS,
  RATIOS,
  SURROGATES,
  TIS_VARIANTS,
  variantLabel,
} from "../_kit/index.js";

const RUNS = { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 2)) };
const variant = (name: string) =>
  SURROGATES.find((s) => s.name === name) as (typeof SURROGATES)[number];
const widthOf = (batch: LogprobBatch): number => batch.responseMask[0].length;
const advAt = (batch: LogprobBatch, b: number, t: number): number =>
  Array.isArray(batch.advantages[b])
    ? (batch.advantages[b] as number[])[t]
    : (batch.advantages[b] as number);

describe("policyLoss", () => {
  it("identity: on-policy pg_clip, dual-clip pg_clip, pg and reinforce gradients are bitwise equal under every aggregation", () => {
    // old = lp ⇒ r = e^0 = 1 inside the band; min/max ties split ½/½ over branches of equal slope.
    // Bitwise includes the sign of zero: where A = ±0 (or w·A underflows) torch's autograd gives the
    // same signed zero, (−w·A)·r, for all four surrogates.
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(logprobBatches(), (b) => {
          const batch = {
            ...b,
            oldLogprobs: b.logprobs.map((row, i) =>
              row.map((x, t) => (b.responseMask[i][t] ? x : b.junk)),
            ),
          };
          const grads = ["pg_clip", "pg_clip+cap3", "pg", "reinforce"].map((name) => {
            const config = buildConfig("token", variant(name), aggregation, widthOf(batch));
            return policyLoss(config, policyInputs(config, batch)).gradLogprobs;
          });
          for (const g of grads.slice(1))
            expectBitwise(g, grads[0], `${aggregation}: gradLogprobs`);
        }),
        RUNS,
      );
    }
  });

  it("identity: gspo-token loss, objective and ratio equal gspo-sequence bitwise", () => {
    // sg[s]·(r/sg[r]) = s·1 exactly for finite non-zero r.
    for (const v of SURROGATES.filter((s) => s.surrogate !== "reinforce")) {
      for (const aggregation of AGGREGATIONS) {
        for (const isCorrection of TIS_VARIANTS) {
          for (const kl of KL_VARIANTS) {
            const label = `${v.name} × ${aggregation} × ${variantLabel(isCorrection, kl)}`;
            fc.assert(
              fc.property(logprobBatches(), (batch) => {
                const [seq, tok] = (["sequence", "sequence_token"] as const).map((r) => {
                  const config = buildConfig(r, v, aggregation, widthOf(batch), {
                    isCorrection,
                    kl,
                  });
                  const out = policyLoss(config, policyInputs(config, batch));
                  return {
                    loss: out.loss,
                    perTokenObjective: out.perTokenObjective,
                    ratio: out.ratio,
                    klLoss: out.klLoss,
                  };
                });
                expectBitwise(tok, seq, label);
              }),
              { ...RUNS, numRuns: Math.max(1, Math.ceil(RUNS.numRuns / 5)) },
            );
          }
        }
      }
    }
  });

  it("gradient: gspo-token gradient is token-local, ∂L/∂lp_{i,t} = −w_{i,t}·A_{i,t}·s_i", () => {
    // Token-locality, precisely: the gradient at (i, t) is −w·A·s_i (to a few ulps), and changing
    // the advantage of one token (i, u) leaves the gradient at every other position bitwise
    // unchanged — whereas for gspo-sequence it moves every token of row i (row-coupled).
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(logprobBatches({ seqAdvantages: false }), fc.nat(), (batch, pick) => {
          const T = widthOf(batch);
          const run = (ratio: "sequence" | "sequence_token", b: LogprobBatch) => {
            const config = buildConfig(ratio, variant("pg"), aggregation, T);
            return policyLoss(config, policyInputs(config, b));
          };
          const base = run("sequence_token", batch);
          const w = weights(batch.responseMask, aggregation, T + 1);
          const expected = batch.responseMask.map((row, i) =>
            row.map((on, t) =>
              on ? -w[i][t] * advAt(batch, i, t) * base.ratio.data[i * T + t] : 0,
            ),
          );
          expectClose(base.gradLogprobs, expected, {
            rtol: 4e-16 * 4,
            atol: 1e-300,
            what: "gspo-token gradient",
          });
          const positions = batch.responseMask.flatMap((row, i) =>
            row.flatMap((on, t) => (on ? [[i, t] as const] : [])),
          );
          const [i, u] = positions[pick % positions.length];
          const advantages = (batch.advantages as number[][]).map((row, r) =>
            row.map((a, t) => (r === i && t === u ? a + 1 : a)),
          );
          const moved = run("sequence_token", { ...batch, advantages });
          for (let k = 0; k < base.gradLogprobs.data.length; k++) {
            if (k === i * T + u) continue;
            expect(
              Object.is(moved.gradLogprobs.data[k], base.gradLogprobs.data[k]),
              `gspo-token grad at ${k}`,
            ).toBe(true);
          }
          const L = batch.responseMask[i].filter(Boolean).length;
          if (L >= 2) {
            const seqBase = run("sequence", batch).gradLogprobs.data;
            const seqMoved = run("sequence", { ...batch, advantages }).gradLogprobs.data;
            const other = batch.responseMask[i].findIndex((on, t) => on && t !== u);
            expect(seqMoved[i * T + other], "gspo-sequence is row-coupled").not.toBe(
              seqBase[i * T + other],
            );
          }
        }),
        RUNS,
      );
    }
  });

  it("identity: cispo equals reinforce on pre-scaled advantages sg[ŵ]·A bitwise (loss, objective, gradient)", () => {
    for (const ratio of RATIOS) {
      for (const v of [variant("cispo-one-sided"), variant("cispo-two-sided")]) {
        for (const aggregation of AGGREGATIONS) {
          for (const isCorrection of TIS_VARIANTS) {
            for (const kl of KL_VARIANTS) {
              const label = `${ratio} × ${v.name} × ${aggregation} × ${variantLabel(isCorrection, kl)}`;
              fc.assert(
                fc.property(logprobBatches(), (batch) => {
                  const T = widthOf(batch);
                  const cispo = buildConfig(ratio, v, aggregation, T, { isCorrection, kl });
                  const got = policyLoss(cispo, policyInputs(cispo, batch));
                  const clip = v.clip as ClipConfig;
                  const hi = 1 + (clip.epsHigh as number);
                  const wHat = (r: number) =>
                    clip.epsLow == null
                      ? Math.min(r, hi)
                      : Math.min(Math.max(r, 1 - clip.epsLow), hi);
                  const scaled = batch.responseMask.map((row, i) =>
                    row.map((on, t) =>
                      on ? wHat(got.ratio.data[i * T + t]) * advAt(batch, i, t) : batch.junk,
                    ),
                  );
                  const reinforce = buildConfig("token", variant("reinforce"), aggregation, T, {
                    isCorrection,
                    kl,
                  });
                  const want = policyLoss(
                    reinforce,
                    policyInputs(reinforce, { ...batch, advantages: scaled }),
                  );
                  const pick = (o: typeof got) => ({
                    loss: o.loss,
                    perTokenObjective: o.perTokenObjective,
                    gradLogprobs: o.gradLogprobs,
                  });
                  expectBitwise(pick(got), pick(want), label);
                }),
                { ...RUNS, numRuns: Math.max(1, Math.ceil(RUNS.numRuns / 5)) },
              );
            }
          }
        }
      }
    }
  });

  it("identity: [B] advantages give bitwise the same result as their explicit [B, T] broadcast", () => {
    for (const [ratio, v] of RATIO_SURROGATE_PAIRS) {
      for (const aggregation of AGGREGATIONS) {
        fc.assert(
          fc.property(
            logprobBatches({ seqAdvantages: true }),
            fc.constantFrom(...TIS_VARIANTS),
            fc.constantFrom(...KL_VARIANTS),
            (batch, isCorrection, kl) => {
              const config = buildConfig(ratio, v, aggregation, widthOf(batch), {
                isCorrection,
                kl,
              });
              const vec = batch.advantages as number[];
              const full = batch.responseMask.map((row, i) => row.map(() => vec[i]));
              const a = policyLoss(config, policyInputs(config, batch));
              const b = policyLoss(config, policyInputs(config, { ...batch, advantages: full }));
              expectBitwise(
                a,
                b,
                `${ratio} × ${v.name} × ${aggregation} × ${variantLabel(isCorrection, kl)}`,
              );
            },
          ),
          RUNS,
        );
      }
    }
  });

  it("identity: tis with rollout = old and cap ≥ 1 is a bitwise no-op", () => {
    // exp(old − rollout) = e^0 = 1 (token) and exp(Σ 0) = 1 (sequence); min(1, cap) = 1; ℓ·1 = ℓ.
    for (const [ratio, v] of RATIO_SURROGATE_PAIRS) {
      for (const aggregation of AGGREGATIONS) {
        fc.assert(
          fc.property(
            logprobBatches(),
            fc.constantFrom<"token" | "sequence">("token", "sequence"),
            fc.constantFrom(1, 1.5, 2, 1e6),
            fc.constantFrom(...KL_VARIANTS),
            (b, level, cap, kl) => {
              const batch = { ...b, rolloutLogprobs: b.oldLogprobs };
              const plain = buildConfig(ratio, v, aggregation, widthOf(batch), { kl });
              const tis: PolicyLossConfig = { ...plain, isCorrection: { cap, level } };
              expectBitwise(
                policyLoss(tis, policyInputs(tis, batch)),
                policyLoss(plain, policyInputs(plain, batch)),
                `${ratio} × ${v.name} × ${aggregation} × ${level}(${cap})`,
              );
            },
          ),
          RUNS,
        );
      }
    }
  });

  it("gradient: advantages ≡ 0 give an exactly zero gradient for every combination without KL", () => {
    for (const [ratio, v] of RATIO_SURROGATE_PAIRS) {
      for (const aggregation of AGGREGATIONS) {
        for (const isCorrection of TIS_VARIANTS) {
          fc.assert(
            fc.property(logprobBatches(), fc.boolean(), (b, vector) => {
              const zeros = vector
                ? b.responseMask.map(() => 0)
                : b.responseMask.map((row) => row.map((on) => (on ? 0 : b.junk)));
              const batch = { ...b, advantages: zeros };
              const config = buildConfig(ratio, v, aggregation, widthOf(batch), { isCorrection });
              const g = policyLoss(config, policyInputs(config, batch)).gradLogprobs.data;
              const bad = Array.from(g).findIndex((x) => x !== 0);
              expect(
                bad,
                `${ratio} × ${v.name} × ${aggregation} × ${variantLabel(isCorrection, null)}: grad[${bad}] = ${g[bad]}`,
              ).toBe(-1);
            }),
            RUNS,
          );
        }
      }
    }
  });
});

describe("policyLoss clip flags", () => {
  it("identity: with the token ratio, the flags mark exactly the tokens whose reference gradient is zero", () => {
    // pg_clip (with and without the dual-clip cap), no KL: the autodiff gradient at a token with
    // A ≠ 0 is zero iff the closed form flags it clippedLow or clippedHigh (|A| ≥ 1e-100 so that
    // w·A·r cannot underflow to 0).
    for (const name of ["pg_clip", "pg_clip+cap3"]) {
      for (const aggregation of AGGREGATIONS) {
        fc.assert(
          fc.property(logprobBatches(), fc.constantFrom(...TIS_VARIANTS), (batch, isCorrection) => {
            const config = buildConfig("token", variant(name), aggregation, widthOf(batch), {
              isCorrection,
            });
            const inputs = policyInputs(config, batch);
            const got = policyLoss(config, inputs);
            const ref = policyLossRef(config, inputs);
            const T = widthOf(batch);
            batch.responseMask.forEach((row, i) => {
              row.forEach((on, t) => {
                if (!on || Math.abs(advAt(batch, i, t)) < 1e-100) return;
                const k = i * T + t;
                const flagged = got.clippedLow.data[k] === 1 || got.clippedHigh.data[k] === 1;
                expect(flagged, `${name} × ${aggregation} at (${i}, ${t})`).toBe(
                  ref.grad.data[k] === 0,
                );
              });
            });
          }),
          RUNS,
        );
      }
    }
  });
});

describe("reverseKlGradSurrogate", () => {
  it("identity: its gradient equals the k2-as-loss gradient bitwise under every aggregation", () => {
    // Both backward passes reduce to w·(lp − ref); the factors differ only by exact powers of two.
    for (const aggregation of AGGREGATIONS) {
      fc.assert(
        fc.property(logprobBatches(), (batch) => {
          const opts = { responseMask: batch.responseMask, normLen: widthOf(batch) + 1 };
          const k2 = klLoss(batch.logprobs, batch.refLogprobs, "k2", aggregation, opts);
          const sur = reverseKlGradSurrogate(batch.logprobs, batch.refLogprobs, aggregation, opts);
          expectBitwise(sur.gradLogprobs, k2.gradLogprobs, aggregation);
        }),
        FC_PARAMS,
      );
    }
  });
});

/** Aggregation weights written from the definitions (test-local; normLen used for token_sum_norm). */
function weights(mask: boolean[][], mode: string, normLen: number): number[][] {
  const B = mask.length;
  const L = mask.map((r) => r.filter(Boolean).length);
  const N = L.reduce((a, l) => a + l, 0);
  const w = (b: number) =>
    mode === "token_mean"
      ? 1 / N
      : mode === "seq_mean_token_mean"
        ? 1 / (B * L[b])
        : mode === "seq_mean_token_sum"
          ? 1 / B
          : 1 / (B * normLen);
  return mask.map((row, b) => row.map((on) => (on ? w(b) : 0)));
}
