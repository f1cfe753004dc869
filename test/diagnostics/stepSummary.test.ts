/**
 * Enforces docs/diagnostics/run.md#one-pass-per-step: the fused per-step pass of a run diagnosis
 * gives, bit for bit, the scalars diagnoseBatch's five reports give (the run keeps nothing else),
 * and hands every step outside its plain case back to diagnoseBatch.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { Mask, Matrix } from "../../src/core/tensor.js";
import { type DiagnoseOptions, diagnoseBatch } from "../../src/diagnostics/diagnoseBatch.js";
import { type StepSummary, stepSummary, summaryOf } from "../../src/diagnostics/stepSummary.js";
import type { PartialBatch } from "../../src/io/batch.js";

const FC = { seed: 20261201, numRuns: 1000 } as const;

/** Bitwise equality of two summaries: Object.is on every number (so −0 ≠ 0 and NaN = NaN). */
function sameBits(a: StepSummary, b: StepSummary): boolean {
  const flat = (s: StepSummary) =>
    JSON.stringify(s, (_k, v) => (typeof v === "number" ? numKey(v) : v));
  return flat(a) === flat(b);
}
const numKey = (v: number): string => (Object.is(v, -0) ? "-0" : String(v));

/** A step: B×T streams drawn from `vals` at response positions, junk (NaN, ±Inf) at padding. */
const stepArb = fc
  .record({
    B: fc.oneof(
      { arbitrary: fc.integer({ min: 3, max: 8 }), weight: 6 },
      { arbitrary: fc.integer({ min: 1, max: 2 }), weight: 1 },
    ),
    T: fc.integer({ min: 2, max: 9 }),
    seed: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 400, maxLength: 400 }),
    present: fc.record({
      logprobs: fc.boolean(),
      oldLogprobs: fc.boolean(),
      rolloutLogprobs: fc.boolean(),
      entropies: fc.constantFrom(false, false, true),
      advantages: fc.constantFrom("none", "row", "token"),
    }),
    // Mostly moderate values; sometimes a huge one, a NaN, a wide gap or a negative entropy.
    wild: fc.constantFrom(
      "plain",
      "plain",
      "plain",
      "plain",
      "huge",
      "nan",
      "gap",
      "negent",
      "empty",
    ),
    options: fc.constantFrom<DiagnoseOptions>(
      {},
      {},
      {},
      {},
      { clip: { epsLow: 0.1, epsHigh: 0.28 } },
      { clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 1.5 }, catastrophicGap: 0.3 },
      { aggregation: "token_mean" },
      { aggregation: "token_sum_norm", normLen: 8 },
      { aggregation: "token_sum_norm" },
      { clip: { epsLow: -1, epsHigh: 0.2 } },
      { catastrophicGap: 0 },
    ),
  })
  .map(({ B, T, seed, present, wild, options }) => {
    let k = 0;
    const u = (): number => seed[k++ % seed.length] as number;
    const mask = new Uint8Array(B * T);
    for (let b = 0; b < B; b++) {
      // Rows of random length ≥ 1 (one row emptied when wild = "empty"), with holes.
      for (let t = 0; t < T; t++) mask[b * T + t] = t === 0 || u() < 0.7 ? 1 : 0;
      if (wild === "empty" && b === B - 1) for (let t = 0; t < T; t++) mask[b * T + t] = 0;
    }
    const junk = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e308];
    const stream = (lo: number, hi: number): Matrix => {
      const data = new Float64Array(B * T);
      for (let i = 0; i < data.length; i++)
        data[i] = mask[i] === 1 ? lo + (hi - lo) * u() : (junk[i % 4] as number);
      return { rows: B, cols: T, data };
    };
    const batch: { -readonly [K in keyof PartialBatch]?: PartialBatch[K] } = {
      responseMask: { rows: B, cols: T, data: mask } as Mask,
    };
    if (present.logprobs) batch.logprobs = stream(-3, 0);
    if (present.oldLogprobs) batch.oldLogprobs = stream(-3, 0);
    if (present.rolloutLogprobs) batch.rolloutLogprobs = stream(-3, 0);
    if (present.entropies) batch.entropies = stream(0, 4);
    if (present.advantages === "row")
      batch.advantages = Float64Array.from({ length: B }, () => (u() < 0.15 ? 0 : 4 * u() - 2));
    if (present.advantages === "token") batch.advantages = stream(-2, 2);
    const first = (x: Matrix | undefined): Float64Array | undefined => x?.data;
    const target =
      wild === "huge" || wild === "nan"
        ? (first(batch.logprobs) ?? first(batch.oldLogprobs) ?? first(batch.entropies))
        : wild === "gap"
          ? first(batch.rolloutLogprobs)
          : wild === "negent"
            ? first(batch.entropies)
            : undefined;
    if (target !== undefined)
      target[0] =
        wild === "huge" ? -1e150 : wild === "nan" ? Number.NaN : wild === "gap" ? -700 : -0.5;
    return { batch: batch as PartialBatch, options };
  });

describe("stepSummary", () => {
  test("identity: equals the scalars diagnoseBatch reports, bitwise, on random steps with and without every stream", () => {
    let fused = 0;
    let handedBack = 0;
    fc.assert(
      fc.property(stepArb, ({ batch, options }) => {
        const ref = summaryOf(diagnoseBatch(batch, options));
        const got = stepSummary(batch, options);
        if (got === null) {
          handedBack++;
          return true;
        }
        fused++;
        return sameBits(got, ref);
      }),
      FC,
    );
    // Both paths ran: a test whose steps all fell back would assert nothing.
    expect(fused).toBeGreaterThan(FC.numRuns / 4);
    expect(handedBack).toBeGreaterThan(FC.numRuns / 10);
  });

  test("golden: the row sums are compensated and the catastrophic rule strict, as in the detectors", () => {
    // Row 0's log-ratios 2^53, 1, −2^53 sum to 1 exactly (compensated; a plain sum gives 0); the
    // other rows' to 0. ESS of lw = [1, 0, 0, 0]: w = [1, e^−1, e^−1, e^−1] after the max shift,
    // (1 + 3/e)²/(1 + 3/e²), over B = 4.
    const B = 4;
    const T = 3;
    const big = 2 ** 53;
    const lp = new Float64Array(B * T);
    const old = Float64Array.from([-big, -1, big, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // old − rollout: 0.5 (= the gap: not catastrophic, the rule is strict) and 0.625 (catastrophic).
    const rollout = Float64Array.from(old, (v, i) => v - (i === 3 ? 0.5 : i === 7 ? 0.625 : 0));
    const mask: Mask = { rows: B, cols: T, data: new Uint8Array(B * T).fill(1) };
    const mat = (data: Float64Array): Matrix => ({ rows: B, cols: T, data });
    const batch = {
      responseMask: mask,
      logprobs: mat(lp),
      oldLogprobs: mat(old),
      rolloutLogprobs: mat(rollout),
    } as unknown as PartialBatch;
    const got = stepSummary(batch, { catastrophicGap: 0.5 }) as StepSummary;
    expect(got).not.toBeNull();
    expect(sameBits(got, summaryOf(diagnoseBatch(batch, { catastrophicGap: 0.5 })))).toBe(true);
    const e = Math.E;
    expect(got.essRatio).toBeCloseTo((1 + 3 / e) ** 2 / (1 + 3 / e ** 2) / B, 14);
    expect(got.catastrophicCount).toBe(1);
    expect(got.catastrophicIndices).toEqual([[2, 1]]);
  });

  test("regression: steps outside the plain case return null, so diagnoseBatch gives their skips and errors", () => {
    const B = 3;
    const T = 4;
    const mask: Mask = {
      rows: B,
      cols: T,
      data: Uint8Array.from([1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1]),
    };
    const m = (f: (i: number) => number): Matrix => ({
      rows: B,
      cols: T,
      data: Float64Array.from({ length: B * T }, (_, i) => f(i)),
    });
    const base = {
      responseMask: mask,
      logprobs: m((i) => -0.1 - 0.01 * i),
      oldLogprobs: m((i) => -0.12 - 0.01 * i),
      rolloutLogprobs: m((i) => -0.11 - 0.01 * i),
      advantages: Float64Array.from([1, -1, 0.5]),
    } as unknown as PartialBatch;
    const plain = stepSummary(base, {});
    expect(plain).not.toBeNull();
    expect(sameBits(plain as StepSummary, summaryOf(diagnoseBatch(base, {})))).toBe(true);
    const with1 = (patch: Partial<PartialBatch>): PartialBatch => ({ ...base, ...patch });
    const cases: [string, PartialBatch, DiagnoseOptions][] = [
      [
        "NaN at a response position",
        with1({ logprobs: m((i) => (i === 5 ? Number.NaN : -0.1)) }),
        {},
      ],
      ["a value beyond 1e100", with1({ oldLogprobs: m((i) => (i === 0 ? -1e101 : -0.1)) }), {}],
      [
        "|old - rollout| beyond 600 nats",
        with1({ rolloutLogprobs: m((i) => (i === 4 ? -601 : -0.1)) }),
        {},
      ],
      ["a negative entropy", with1({ entropies: m(() => -1e-3) }), {}],
      [
        "an empty row",
        with1({ responseMask: { rows: B, cols: T, data: new Uint8Array(B * T).fill(1, 0, 8) } }),
        {},
      ],
      [
        "a mask value of 2",
        with1({ responseMask: { rows: B, cols: T, data: new Uint8Array(B * T).fill(2) } }),
        {},
      ],
      [
        "constant lengths (no length-bias design)",
        with1({ responseMask: { rows: B, cols: T, data: new Uint8Array(B * T).fill(1) } }),
        {},
      ],
      ["an invalid clip band", base, { clip: { epsLow: 0, epsHigh: 0.2 } }],
      ["a catastrophic gap of 0", base, { catastrophicGap: 0 }],
      ["token_sum_norm without normLen", base, { aggregation: "token_sum_norm" }],
    ];
    // Each is handed back (the caller then runs diagnoseBatch, whose reports and skip reasons the
    // run keeps); most are skips there, the rest (a value beyond 1e100) merely outside the bounds
    // under which the fused pass is proven not to overflow.
    for (const [why, batch, options] of cases) expect(stepSummary(batch, options), why).toBeNull();
  });
});
