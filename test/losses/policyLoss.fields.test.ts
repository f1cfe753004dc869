/**
 * Enforces docs/performance.md#fields: `policyLoss(config, inputs, { fields })` returns exactly the
 * fields asked for, each bitwise what the full call gives, for every combination of fields, every
 * block size of the row loop and the whole algebra (the kernel's random batches with holes, junk
 * and extreme values, and every registry algorithm); errors are the full call's; `out` is written
 * in place; bad `fields` are refused by name.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, test } from "vitest";
import {
  fieldPaths,
  POLICY_LOSS_FIELDS,
  type PolicyLossField,
  type PolicyLossResult,
  policyLoss,
  setFieldBlockPositions,
} from "../../src/losses/policyLoss.js";
import { cispoClamp, cispoLower, cispoWeight } from "../../src/losses/surrogates.js";
import { ALGORITHM_NAMES, ALGORITHMS } from "../../src/registry/index.js";
import { drawBatch } from "../../src/verify/draw.js";
import { FC_PARAMS } from "../_kit/index.js";
import { policyBatches } from "../_kit/policyBatches.js";

const defaultPositions = setFieldBlockPositions(8192);
afterEach(() => {
  setFieldBlockPositions(defaultPositions);
});

/** A result or its error, as text for errors. */
function run(f: () => unknown): { ok: Record<string, unknown> } | { err: string } {
  try {
    return { ok: f() as Record<string, unknown> };
  } catch (e) {
    const x = e as Error & { code?: string };
    return { err: `${x.constructor.name} ${x.code} ${x.message}` };
  }
}

/** Bitwise equality of one field of two results (Object.is per element). */
function sameField(a: unknown, b: unknown): boolean {
  if (typeof a === "number" || a === null) return Object.is(a, b);
  const x = (a as { data: ArrayLike<number> }).data;
  const y = (b as { data: ArrayLike<number> } | null)?.data;
  if (y === undefined || x.length !== y.length) return false;
  if (x.constructor !== (y as object).constructor) return false;
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return false;
  return true;
}

const subsets = fc.subarray([...POLICY_LOSS_FIELDS], { minLength: 1 });

/** The fields call against the full call: the same error, or exactly the asked fields, bitwise. */
function expectFieldsOf(
  full: () => PolicyLossResult,
  some: (fields: PolicyLossField[]) => unknown,
  fields: PolicyLossField[],
  label: string,
): "ok" | "err" {
  const want = run(full);
  const got = run(() => some(fields));
  if ("err" in want || "err" in got) {
    expect("err" in got ? got.err : "a result", label).toBe("err" in want ? want.err : "a result");
    return "err";
  }
  expect(Object.keys(got.ok), label).toEqual(POLICY_LOSS_FIELDS.filter((f) => fields.includes(f)));
  for (const f of fields) expect(sameField(got.ok[f], want.ok[f]), `${label}: ${f}`).toBe(true);
  return "ok";
}

describe("policyLoss fields", () => {
  it("property: every combination of fields, at every block size, is bitwise the full call on the fields it returns, and errors are the full call's (the kernel's random batches: holes, junk, extreme values, every ratio × surrogate × aggregation × IS × KL)", () => {
    const seen = { ok: 0, err: 0 };
    const paths = { ...fieldPaths };
    fc.assert(
      fc.property(
        policyBatches,
        subsets,
        fc.integer({ min: 1, max: 40 }),
        ({ config, inputs }, fields, positions) => {
          setFieldBlockPositions(positions);
          seen[
            expectFieldsOf(
              () => policyLoss(config, inputs),
              (f) => policyLoss(config, inputs, { fields: f }),
              fields,
              `${JSON.stringify(config)} fields ${fields} positions ${positions}`,
            )
          ]++;
        },
      ),
      { ...FC_PARAMS, numRuns: FC_PARAMS.numRuns * 10 },
    );
    // Both sides of the comparison were exercised, and each of the three paths of a call with
    // fields: the fused loss and gradient, the row blocks, the whole call where they stop.
    expect(seen.ok).toBeGreaterThan(50);
    expect(seen.err).toBeGreaterThan(5);
    expect(fieldPaths.blocks - paths.blocks).toBeGreaterThan(20);
    expect(fieldPaths.whole - paths.whole).toBeGreaterThan(5);
  });

  it("property: the loss and the gradient of a loss without IS weights (one fused pass) are bitwise the full call's, with its errors (every ratio, surrogate, aggregation and KL estimator, holes, junk, extreme values, caller out)", () => {
    const paths = { ...fieldPaths };
    fc.assert(
      fc.property(
        policyBatches,
        fc.subarray(["loss", "gradLogprobs", "klLoss", "entropyLoss", "gradEntropies"] as const, {
          minLength: 1,
        }),
        fc.boolean(),
        ({ config, inputs, B, T }, fields, out) => {
          // The kit's config made fusable: no IS weights (its ratios, token, sequence and
          // sequence_token, and its KL terms, k1, k2, k3 and abs, stay).
          const plain = { ...config, isCorrection: null };
          const grad = new Float64Array(B * T).fill(Number.NaN);
          const options =
            out && fields.includes("gradLogprobs")
              ? { fields: [...fields], out: { gradLogprobs: grad } }
              : { fields: [...fields] };
          const r = expectFieldsOf(
            () => policyLoss(plain, inputs),
            () => policyLoss(plain, inputs, options),
            [...fields],
            `${JSON.stringify(plain)} fields ${fields} out ${out}`,
          );
          if (r === "ok" && options.out !== undefined) {
            const full = policyLoss(plain, inputs).gradLogprobs.data;
            expect(grad.every((x, i) => Object.is(x, full[i]))).toBe(true);
          }
        },
      ),
      { ...FC_PARAMS, numRuns: FC_PARAMS.numRuns * 10 },
    );
    expect(fieldPaths.fused - paths.fused).toBeGreaterThan(50);
    expect(fieldPaths.whole - paths.whole).toBeGreaterThan(5);
  });

  it("golden: a sequence ratio whose log-ratio sum needs its compensation (z = 1, 1e16, −1e16: the plain sum loses the 1) is the full call's in the fused pass, bitwise", () => {
    const inputs = {
      logprobs: [[1, 1e16, -1e16, -3]],
      oldLogprobs: [[0, 0, 0, 0]],
      advantages: [1.5],
      responseMask: [[1, 1, 1, 0]],
    };
    for (const ratio of ["sequence", "sequence_token"] as const) {
      const config = {
        ratio,
        surrogate: "pg" as const,
        clip: null,
        aggregation: "token_mean" as const,
      };
      const before = fieldPaths.fused;
      const full = policyLoss(config, inputs);
      const some = policyLoss(config, inputs, { fields: ["loss", "gradLogprobs"] });
      expect(fieldPaths.fused).toBe(before + 1);
      // mean log-ratio (1 + 1e16 − 1e16)/3 = 1/3 compensated (0 plain): ℓ = −e^{1/3}·1.5 per token.
      expect(full.ratio.data[0]).toBe(Math.exp(1 / 3));
      expect(Object.is(some.loss, full.loss)).toBe(true);
      expect(Array.from(some.gradLogprobs.data)).toEqual(Array.from(full.gradLogprobs.data));
    }
  });

  it("regression: the pg_clip row has no test inside the band, and what only such a test would catch is the full call's: a −∞ logprob with lo < 0 (ratio 0 inside the band), an advantage whose hi·A overflows, r·A overflowing inside the band", () => {
    const config = {
      ratio: "token" as const,
      surrogate: "pg_clip" as const,
      clip: { epsLow: 1.5, epsHigh: 0.28, ratioCap: null },
      aggregation: "token_mean" as const,
    };
    const cases = [
      // exp(−∞ − (−1)) = 0 lies in (−0.5, 1.28): the fused pass must still refuse the −∞ (the
      // row's log-ratio sum in ratioRow is −∞).
      { logprobs: [[-Infinity, -1]], oldLogprobs: [[-1, -1]], advantages: [1] },
      // hi·A = 1.28 × 1.7e308 overflows: the finite result is the full call's.
      { logprobs: [[-1, -1]], oldLogprobs: [[-1, -1]], advantages: [1.7e308] },
      // A ratio just above 1 with A = 1.7e308: r·A overflows inside the band.
      { logprobs: [[-0.9, -1]], oldLogprobs: [[-1, -1]], advantages: [1.7e308] },
    ];
    const outcomes = cases.map((c) => {
      const inputs = { ...c, responseMask: [[1, 1]] };
      const before = fieldPaths.fused + fieldPaths.whole;
      const r = expectFieldsOf(
        () => policyLoss(config, inputs),
        (f) => policyLoss(config, inputs, { fields: f }),
        ["loss", "gradLogprobs"],
        JSON.stringify(c),
      );
      expect(fieldPaths.fused + fieldPaths.whole).toBe(before + 1);
      return r;
    });
    expect(outcomes).toEqual(["err", "ok", "err"]);
  });

  it("regression: the pg_clip row's one-comparison clipped branch leaves to pgClipNoCapInto exactly where it would differ (r at lo or hi, a tie r·A = c·A, A = ±0, r = +∞), and a stop whose parts are finite but whose sum overflows gives the full call's result", () => {
    const clip = (epsLow: number, epsHigh: number) => ({
      ratio: "token" as const,
      surrogate: "pg_clip" as const,
      clip: { epsLow, epsHigh, ratioCap: null },
      aggregation: "token_mean" as const,
    });
    // old = 0, so z = lp exactly: ±0.3 (r = 1.35, 0.74: outside [0.8, 1.28]), 800 (r = +∞).
    const row = (z: number[], A: number) => ({
      logprobs: [z],
      oldLogprobs: [z.map(() => 0)],
      advantages: [A],
      responseMask: [z.map(() => 1)],
    });
    // exp(ln 0.5) = 0.5 = 1 − 0.5 and exp(ln 1.25) = 1.25 = 1 + 0.25 exactly: r on the band's edges.
    const edges = [Math.log(0.5), Math.log(1.25), 0.9, -0.9];
    const cases: [string, ReturnType<typeof clip>, ReturnType<typeof row>, "ok" | "err"][] = [
      ["r = lo or hi, A > 0", clip(0.5, 0.25), row(edges, 0.7), "ok"],
      ["r = lo or hi, A < 0", clip(0.5, 0.25), row(edges, -0.7), "ok"],
      // A = 2^−1074: r·A and c·A both round to 2^−1074 outside the band, a tie (slope ½).
      ["tie r·A = c·A", clip(0.2, 0.28), row([0.3, -0.3, 0.1], Number.MIN_VALUE), "ok"],
      ["A = 0", clip(0.2, 0.28), row([0.3, -0.3, 800], 0), "ok"],
      ["A = −0", clip(0.2, 0.28), row([0.3, -0.3, 800], -0), "ok"],
      // r = +∞: clipped high for A > 0 (ℓ = −hi·A, slope 0); for A < 0, r·A = −∞ is the overflow.
      ["r = +∞, A > 0", clip(0.2, 0.28), row([800, 0.1], 0.5), "ok"],
      ["r = +∞, A < 0", clip(0.2, 0.28), row([800, 0.1], -0.5), "err"],
      // One token, r = 0.75 below the band, A = 1.5e308: ℓ = ∂ = −1.125e308, each finite, the
      // row's test sum (loss sum + Σ ∂) −2.25e308 is not: the whole call gives the (finite) result.
      ["finite parts, overflowing test", clip(0.2, 0.28), row([Math.log(0.75)], 1.5e308), "ok"],
    ];
    const outcomes = cases.map(([label, config, inputs]) => {
      const before = { ...fieldPaths };
      const got = expectFieldsOf(
        () => policyLoss(config, inputs),
        (f) => policyLoss(config, inputs, { fields: f }),
        ["loss", "gradLogprobs"],
        label,
      );
      const path = fieldPaths.fused > before.fused ? "fused" : "whole";
      expect(fieldPaths.fused + fieldPaths.whole, label).toBe(before.fused + before.whole + 1);
      return [label, got, path] as const;
    });
    // Every finite case but the last completes in the fused pass; the last stops at its test.
    expect(outcomes).toEqual(
      cases.map(([label, , , want], k) => [
        label,
        want,
        want === "err" || k === cases.length - 1 ? "whole" : "fused",
      ]),
    );
    // The edges and the tie did leave the one comparison: there the gradient flows (pass 1 at an
    // edge, slope ½ at a tie), where the clamp's branch would give 0 (with A > 0, r = 2.46 above
    // the band is clipped; r = 0.41 below it is not: min(r·A, c·A) = r·A).
    const edge = policyLoss(clip(0.5, 0.25), row(edges, 0.7), { fields: ["gradLogprobs"] });
    expect(Array.from(edge.gradLogprobs.data, (g) => g !== 0)).toEqual([true, true, false, true]);
    const tie = policyLoss(clip(0.2, 0.28), row([0.3, -0.3, 0.1], Number.MIN_VALUE), {
      fields: ["gradLogprobs"],
    });
    // g·A = −(1/3)·2^−1074 is −0: the tie's slope ½ keeps −0 (as the band does), the clamp's
    // slope 0 would write +0.
    expect(Array.from(tie.gradLogprobs.data, (g) => Object.is(g, -0))).toEqual([true, true, true]);
  });

  it("regression: pg_clip's and cispo's rows read r back from ratioRow and test once per row: a non-finite old logprob that leaves ℓ and ∂ finite (old = +∞: r = 0; old = −∞: r = +∞, clipped), a NaN logprob, a bad token in a later row, are the full call's errors; a log-ratio sum past float64 from finite log-ratios goes to the full call and its result", () => {
    const configs = {
      pg_clip: ALGORITHMS.dapo.loss,
      cispo: ALGORITHMS.cispo.loss,
    };
    // Two rows of three response tokens; `bad` replaces one entry of row `at`.
    const batch = (at: number, lp: number, old: number, A = 0.5) => {
      const logprobs = [
        [-1, -1.1, -0.9],
        [-1.2, -1, -1],
      ];
      const oldLogprobs = [
        [-1, -1, -1],
        [-1, -1, -1],
      ];
      (logprobs[at] as number[])[1] = lp;
      (oldLogprobs[at] as number[])[1] = old;
      return {
        logprobs,
        oldLogprobs,
        advantages: [A, A],
        responseMask: [
          [1, 1, 1],
          [1, 1, 1],
        ],
      };
    };
    const cases: [string, ReturnType<typeof batch>, "ok" | "err", "fused" | "whole"][] = [
      ["old = +∞ (r = 0)", batch(0, -1, Number.POSITIVE_INFINITY), "err", "whole"],
      [
        "old = −∞ (r = +∞, clipped for A > 0)",
        batch(0, -1, Number.NEGATIVE_INFINITY),
        "err",
        "whole",
      ],
      ["lp = NaN", batch(0, Number.NaN, -1), "err", "whole"],
      ["old = +∞ in the second row", batch(1, -1, Number.POSITIVE_INFINITY), "err", "whole"],
      ["lp = −∞ in the second row", batch(1, Number.NEGATIVE_INFINITY, -1), "err", "whole"],
      // lp − old = 1e308 + 1e308 − … : each log-ratio of the row finite (9.9e307), the first row's
      // sum 1.98e308 past float64; r = +∞ at both is clipped (A > 0): the full call's finite loss.
      [
        "finite log-ratios whose sum overflows",
        {
          ...batch(0, 9e307, -9e306),
          logprobs: [
            [9e307, 9e307, -1],
            [-1.2, -1, -1],
          ],
          oldLogprobs: [
            [-9e306, -9e306, -1],
            [-1, -1, -1],
          ],
        },
        "ok",
        "whole",
      ],
      // A = 1.5e308, every ratio in pg_clip's band: each ℓ and ∂ finite; pg_clip's row test (the
      // loss sums so far plus the second row's Σ ∂, −2.2e308) and cispo's row bound (g·max(|lo|,
      // |hi|)·A: 1.2 × 1.5e308 is past float64) stop: the whole call's finite result.
      ["A = 1.5e308", batch(0, -1.05, -1, 1.5e308), "ok", "whole"],
      ["all finite", batch(0, -1.05, -1), "ok", "fused"],
    ];
    for (const [name, config] of Object.entries(configs)) {
      const outcomes = cases.map(([label, inputs]) => {
        const before = { ...fieldPaths };
        const got = expectFieldsOf(
          () => policyLoss(config, inputs),
          (f) => policyLoss(config, inputs, { fields: f }),
          ["loss", "gradLogprobs"],
          `${name}: ${label}`,
        );
        return [label, got, fieldPaths.fused > before.fused ? "fused" : "whole"];
      });
      expect(outcomes, name).toEqual(cases.map(([label, , want, path]) => [label, want, path]));
    }
  });

  it("property: cispoClamp under cispoLower's bound (the cispo row's weight, no flag per token) is bitwise the weight as written with its flag (r > hi: hi; two-sided and r < lo: lo; else r), for any doubles, ±0, ±∞ and NaN included", () => {
    // The weight as cispoWeight was written before the row pass took its bound once.
    const flagged = (r: number, lo: number, hi: number, oneSided: boolean) =>
      r > hi ? hi : !oneSided && r < lo ? lo : r;
    const double = fc.oneof(
      fc.double(),
      fc.constantFrom(0, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN),
    );
    fc.assert(
      fc.property(double, double, double, fc.boolean(), (r, lo, hi, oneSided) => {
        const want = flagged(r, lo, hi, oneSided);
        expect(Object.is(cispoClamp(r, cispoLower(lo, oneSided), hi), want)).toBe(true);
        expect(Object.is(cispoWeight(r, lo, hi, oneSided), want)).toBe(true);
      }),
      { ...FC_PARAMS, numRuns: 20 * FC_PARAMS.numRuns },
    );
  });

  it("golden: GSPO's row-constant surrogate (formed once per row) is the full call's bitwise, clipped and unclipped rows, with holes, into a dirty out", () => {
    const config = {
      ratio: "sequence" as const,
      surrogate: "pg_clip" as const,
      clip: { epsLow: 0.0003, epsHigh: 0.0004, ratioCap: null },
      aggregation: "seq_mean_token_mean" as const,
    };
    const inputs = {
      // Row 0 inside the band (mean log-ratio 0), row 1 clipped high with A > 0, row 2 low with A < 0.
      logprobs: [
        [-1, -2, -3, -4],
        [-1, -1.5, 9, -1],
        [-2, -2, -2, 7],
      ],
      oldLogprobs: [
        [-1, -2, -3, -4],
        [-1.1, -1.5, 9, -1],
        [-1.9, -2, -2, 7],
      ],
      advantages: [0.7, 1.3, -0.4],
      responseMask: [
        [1, 1, 1, 0],
        [1, 0, 1, 1],
        [1, 1, 1, 0],
      ],
    };
    const full = policyLoss(config, inputs);
    const grad = new Float64Array(12).fill(Number.NaN);
    const before = fieldPaths.fused;
    const some = policyLoss(config, inputs, {
      fields: ["loss", "gradLogprobs"],
      out: { gradLogprobs: grad },
    });
    expect(fieldPaths.fused).toBe(before + 1);
    expect(Object.is(some.loss, full.loss)).toBe(true);
    expect(Array.from(grad)).toEqual(Array.from(full.gradLogprobs.data));
    // Row 0's gradient flows; rows 1 and 2 are clipped (their ratio outside the band): exactly 0.
    expect(grad[0]).not.toBe(0);
    expect(Array.from(grad.subarray(4))).toEqual(Array(8).fill(0));
  });

  test.each(ALGORITHM_NAMES)(
    "identity: %s with every single field and with loss and gradLogprobs, blocks of one row and of several, is bitwise the full call",
    (name) => {
      const drawn = drawBatch(17, [6, 9]);
      const inputs = { ...drawn, advantages: drawn.advantages.map((row) => row[0] as number) };
      // An open generation budget (dr_grpo's normLen null) is set to T, as `polgrad loss` does.
      const loss = ALGORITHMS[name].loss;
      const config =
        loss.aggregation === "token_sum_norm" ? { ...loss, normLen: loss.normLen ?? 9 } : loss;
      for (const positions of [9, 30, 8192]) {
        setFieldBlockPositions(positions);
        for (const fields of [
          ...POLICY_LOSS_FIELDS.map((f) => [f]),
          ["loss", "gradLogprobs"] as PolicyLossField[],
        ]) {
          expect(
            expectFieldsOf(
              () => policyLoss(config, inputs),
              (f) => policyLoss(config, inputs, { fields: f }),
              fields,
              `${name} ${fields} positions ${positions}`,
            ),
          ).toBe("ok");
        }
      }
    },
  );

  it("golden: a single asked-for output is an array of its own (its buffer is exactly its data); several share one staggered buffer", () => {
    const drawn = drawBatch(5, [3, 7]);
    const inputs = { ...drawn, advantages: drawn.advantages.map((row) => row[0] as number) };
    const config = ALGORITHMS.dapo.loss;
    const one = policyLoss(config, inputs, { fields: ["loss", "gradLogprobs"] });
    expect(one.gradLogprobs.data.buffer.byteLength).toBe(3 * 7 * 8);
    const flags = policyLoss(config, inputs, { fields: ["clippedHigh"] });
    expect(flags.clippedHigh.data.buffer.byteLength).toBe(3 * 7);
    const two = policyLoss(config, inputs, { fields: ["gradLogprobs", "ratio"] });
    expect(two.gradLogprobs.data.buffer).toBe(two.ratio.data.buffer);
  });

  it("golden: the result type and object hold only the fields asked for, and out arrays of asked fields are written in place", () => {
    const drawn = drawBatch(3, [4, 6]);
    const inputs = { ...drawn, advantages: drawn.advantages.map((row) => row[0] as number) };
    const config = ALGORITHMS.dapo.loss;
    const grad = new Float64Array(24);
    const r = policyLoss(config, inputs, {
      fields: ["loss", "gradLogprobs"],
      out: { gradLogprobs: grad },
    });
    expect(Object.keys(r)).toEqual(["loss", "gradLogprobs"]);
    expect(r.gradLogprobs.data).toBe(grad);
    // @ts-expect-error ratio was not asked for: the result type has no such field
    expect(r.ratio).toBeUndefined();
    const full = policyLoss(config, inputs);
    // The fields are the full result's keys, in its order.
    expect(Object.keys(full)).toEqual(POLICY_LOSS_FIELDS);
    expect(Object.is(r.loss, full.loss)).toBe(true);
    expect(Array.from(grad)).toEqual(Array.from(full.gradLogprobs.data));
    // Only what is asked for is allocated: the gradient alone, where the full call's buffer
    // holds all five outputs (each staggered by 520 bytes).
    const lean = policyLoss(config, inputs, { fields: ["loss", "gradLogprobs"] });
    expect(lean.gradLogprobs.data.buffer.byteLength).toBe(24 * 8);
    expect(full.gradLogprobs.data.buffer.byteLength).toBe(3 * (24 * 8 + 520) + 2 * (24 + 520));
  });

  it("rejects: fields that are not a non-empty array of result fields (with did-you-mean), and out for a field not asked for", () => {
    const drawn = drawBatch(3, [2, 3]);
    const inputs = { ...drawn, advantages: drawn.advantages.map((row) => row[0] as number) };
    const config = ALGORITHMS.dapo.loss;
    const call = (options: unknown) => () =>
      policyLoss(config, inputs, options as { fields: PolicyLossField[] });
    expect(call({ fields: [] })).toThrow(
      /^policyLoss: options\.fields must be a non-empty array of result fields \(loss, gradLogprobs/,
    );
    expect(call({ fields: "loss" })).toThrow(/options\.fields must be a non-empty array/);
    expect(call({ fields: ["loss", "gradLogprob"] })).toThrow(
      /options\.fields\[1\] must be one of .*got "gradLogprob" \(did you mean "gradLogprobs"\?\)/,
    );
    expect(call({ fields: ["loss"], out: { ratio: new Float64Array(6) } })).toThrow(
      /^policyLoss: options\.out\.ratio must be given only for a field listed in options\.fields; got ratio, which is not asked for/,
    );
    expect(call({ feilds: ["loss"] })).toThrow(
      /options\.feilds must be one of out, threads, global, fields/,
    );
  });
});
