/**
 * Random policy-loss batches for the kernel tests: holes in the mask (rows may even be empty),
 * junk at padding, extreme and (rarely) non-finite values, `[B]` or `[B, T]` advantages, typed or
 * nested form, and a config from the whole algebra; with a bitwise comparison of two outcomes
 * (result or error).
 */
import fc from "fast-check";
import { expect } from "vitest";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import type { PolicyLossInputs, PolicyLossResult } from "../../src/losses/policyLoss.js";
import {
  AGGREGATIONS,
  buildConfig,
  KL_VARIANTS,
  RATIO_SURROGATE_PAIRS,
  TIS_VARIANTS,
} from "./configs.js";

export type Outcome = { ok: PolicyLossResult } | { err: string };

export function outcome(f: () => PolicyLossResult): Outcome {
  try {
    return { ok: f() };
  } catch (e) {
    const x = e as Error & { code?: string };
    return { err: `${x.constructor.name} ${x.code} ${x.message}` };
  }
}

const FIELDS = ["gradLogprobs", "perTokenObjective", "ratio", "clippedLow", "clippedHigh"] as const;

/** Bitwise equality of two outcomes (Object.is per element, so ±0 and NaN count). */
export function expectSame(got: Outcome, want: Outcome, label: string): void {
  if ("err" in want || "err" in got) {
    expect("err" in got ? got.err : "a result", label).toBe("err" in want ? want.err : "a result");
    return;
  }
  expect(
    Object.is(got.ok.loss, want.ok.loss),
    `${label}: loss ${got.ok.loss} vs ${want.ok.loss}`,
  ).toBe(true);
  expect(Object.is(got.ok.klLoss, want.ok.klLoss), `${label}: klLoss`).toBe(true);
  for (const k of FIELDS) {
    const a = got.ok[k].data;
    const b = want.ok[k].data;
    expect(a.length, `${label}: ${k} length`).toBe(b.length);
    for (let i = 0; i < a.length; i++) {
      if (!Object.is(a[i], b[i]))
        expect(`${k}[${i}] = ${a[i]}`, label).toBe(`${k}[${i}] = ${b[i]}`);
    }
  }
}

/** A value at a response position: mostly moderate, sometimes extreme or (rarely) not finite. */
const cell = (extreme: boolean): fc.Arbitrary<number> =>
  extreme
    ? fc.oneof(
        { weight: 8, arbitrary: fc.double({ min: -4, max: -0.01, noNaN: true }) },
        {
          weight: 2,
          arbitrary: fc.constantFrom(800, -800, 709.9, -746, 1e300, -1e300, 0, -0, 5e-324),
        },
        { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY) },
      )
    : fc.double({ min: -4, max: -0.01, noNaN: true });

const CONFIGS: PolicyLossConfig[] = RATIO_SURROGATE_PAIRS.flatMap(([ratio, sur]) =>
  AGGREGATIONS.flatMap((agg) =>
    TIS_VARIANTS.flatMap((isCorrection) =>
      KL_VARIANTS.map((kl) => buildConfig(ratio, sur, agg, 9, { isCorrection, kl })),
    ),
  ),
);

/** Batches with holes in the mask (any 0/1 pattern, rows may even be empty), junk at padding. */
export const policyBatches: fc.Arbitrary<{
  config: PolicyLossConfig;
  inputs: PolicyLossInputs;
  B: number;
  T: number;
}> = fc
  .record({
    B: fc.integer({ min: 1, max: 5 }),
    T: fc.integer({ min: 1, max: 8 }),
    extreme: fc.boolean(),
    tokenAdv: fc.boolean(),
    typed: fc.boolean(),
    seed: fc.integer({ min: 0, max: 2 ** 30 }),
  })
  .chain(({ B, T, extreme, tokenAdv, typed }) => {
    const n = B * T;
    const cells = fc.array(cell(extreme), { minLength: n, maxLength: n });
    return fc.record({
      B: fc.constant(B),
      T: fc.constant(T),
      typed: fc.constant(typed),
      lp: cells,
      old: cells,
      ref: cells,
      roll: cells,
      gap: fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: n, maxLength: n }),
      near: fc.boolean(),
      adv: tokenAdv
        ? fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: n, maxLength: n })
        : fc.array(fc.oneof(fc.double({ min: -3, max: 3, noNaN: true }), fc.constant(0)), {
            minLength: B,
            maxLength: B,
          }),
      mask: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }),
      junk: fc.constantFrom(123, Number.NaN, Number.POSITIVE_INFINITY),
      config: fc.constantFrom(...CONFIGS),
    });
  })
  .map((d) => {
    const { B, T } = d;
    // 80 % response tokens; one row in a few comes out empty (an error both sides must agree on).
    const m = Uint8Array.from(d.mask, (v) => (v < 8 ? 1 : 0));
    // Near-policy batches: lp = old + gap, so ratios sit around the clip band.
    const lp = d.near
      ? d.old.map((o, i) => (Number.isFinite(o) ? o + (d.gap[i] as number) / 4 : o))
      : d.lp;
    const junked = (xs: number[]): Float64Array =>
      Float64Array.from(xs, (x, i) => (m[i] === 1 ? x : d.junk));
    const mat = (xs: number[]) => ({ rows: B, cols: T, data: junked(xs) });
    const nested = (xs: Float64Array | Uint8Array) =>
      Array.from({ length: B }, (_, b) => Array.from(xs.subarray(b * T, b * T + T)));
    const typed = {
      logprobs: mat(lp),
      oldLogprobs: mat(d.old),
      refLogprobs: mat(d.ref),
      rolloutLogprobs: mat(d.roll),
      advantages: d.adv.length === B ? Float64Array.from(d.adv) : mat(d.adv),
      responseMask: { rows: B, cols: T, data: m },
    };
    const inputs: PolicyLossInputs = d.typed
      ? typed
      : {
          logprobs: nested(typed.logprobs.data),
          oldLogprobs: nested(typed.oldLogprobs.data),
          refLogprobs: nested(typed.refLogprobs.data),
          rolloutLogprobs: nested(typed.rolloutLogprobs.data),
          advantages:
            d.adv.length === B ? d.adv : nested((typed.advantages as { data: Float64Array }).data),
          responseMask: nested(m),
        };
    return { config: d.config, inputs, B, T };
  });
