/**
 * Enforces docs/derivations/aggregation.md#rows-with-no-response-token for the token-level
 * functions: broadcastToTokens, whiten, gae, returnsToGo, remaxAdvantages and papoLoss accept rows
 * with no response token under `emptyRows` count or drop (the same there), give such a row zeros,
 * and give every other row the bits it gets in the batch without that row; absent or `reject`,
 * the row is a MaskError naming it, as before.
 */
import { describe, expect, test } from "vitest";
import { broadcastToTokens } from "../../src/advantages/broadcast.js";
import { gae } from "../../src/advantages/gae.js";
import { remaxAdvantages } from "../../src/advantages/remax.js";
import { returnsToGo } from "../../src/advantages/returns.js";
import { whiten } from "../../src/advantages/whiten.js";
import { MaskError, UnknownNameError } from "../../src/errors.js";
import { papoLoss } from "../../src/losses/papo.js";
import type { PapoConfig } from "../../src/losses/papoConfig.js";

/** Rows 0 and 2 ragged, row 1 empty (its positions hold junk 7). */
const mask = [
  [true, true, true, false],
  [false, false, false, false],
  [true, true, false, false],
];
const x = [
  [0.5, -1, 2, 7],
  [7, 7, 7, 7],
  [1.5, 0.25, 7, 7],
];
/** The batch without row 1. */
const drop1 = <V>(rows: readonly V[]): V[] => rows.filter((_, b) => b !== 1);
/** A `[B, T]` result's rows. */
const rowsOf = (m: { rows: number; cols: number; data: Float64Array }): number[][] =>
  Array.from({ length: m.rows }, (_, b) =>
    Array.from(m.data.subarray(b * m.cols, (b + 1) * m.cols)),
  );

/** With the empty row: zeros there, the other rows bitwise those of the batch without it. */
function expectRowDropped(
  withRow: { rows: number; cols: number; data: Float64Array },
  without: { rows: number; cols: number; data: Float64Array },
): void {
  const a = rowsOf(withRow);
  expect(a[1]?.map((v) => Object.is(v, 0))).toEqual([true, true, true, true]);
  expect(drop1(a)).toEqual(rowsOf(without));
}

const cases: [string, (emptyRows?: "reject" | "count" | "drop") => unknown, () => unknown][] = [
  [
    "broadcastToTokens",
    (e) => broadcastToTokens([2, 3, -1], mask, e === undefined ? {} : { emptyRows: e }),
    () => broadcastToTokens([2, -1], drop1(mask)),
  ],
  [
    "whiten",
    (e) => whiten(x, mask, e === undefined ? {} : { emptyRows: e }),
    () => whiten(drop1(x), drop1(mask)),
  ],
  [
    "gae",
    (e) =>
      gae(x, x, { gamma: 0.9, lam: 0.95 }, mask, e === undefined ? {} : { emptyRows: e })
        .advantages,
    () => gae(drop1(x), drop1(x), { gamma: 0.9, lam: 0.95 }, drop1(mask)).advantages,
  ],
  [
    "returnsToGo",
    (e) => returnsToGo(x, mask, { gamma: 0.5, ...(e === undefined ? {} : { emptyRows: e }) }),
    () => returnsToGo(drop1(x), drop1(mask), { gamma: 0.5 }),
  ],
  [
    "remaxAdvantages",
    (e) => remaxAdvantages(x, mask, [0.5, 1, 0.25], e === undefined ? {} : { emptyRows: e }),
    () => remaxAdvantages(drop1(x), drop1(mask), [0.5, 0.25]),
  ],
];

describe("token-level functions with rows of no response token", () => {
  for (const [name, withRow, without] of cases) {
    test(`identity: ${name} gives an empty row zeros and the others the bits of the batch without it, under count and drop`, () => {
      const ref = without() as { rows: number; cols: number; data: Float64Array };
      for (const e of ["count", "drop"] as const) {
        expectRowDropped(withRow(e) as typeof ref, ref);
      }
    });

    test(`rejects: ${name} without emptyRows (or reject) names the empty row; an unknown policy is named`, () => {
      for (const e of [undefined, "reject"] as const) {
        let err: unknown;
        try {
          withRow(e);
        } catch (x) {
          err = x;
        }
        expect(err).toBeInstanceOf(MaskError);
        expect((err as Error).message).toMatch(/1/);
      }
      let bad: unknown;
      try {
        withRow("keep" as "count");
      } catch (x) {
        bad = x;
      }
      expect(bad).toBeInstanceOf(UnknownNameError);
      expect((bad as { arg?: string }).arg).toBe("options.emptyRows");
    });
  }

  test("identity: papoLoss follows the parent's emptyRows: official form with an empty row equals the batch without it (token_mean), trl form is accepted and finite", () => {
    const lp = x.map((r) => r.map((v, t) => -0.2 - 0.1 * Math.abs(v) - 0.01 * t));
    const old = lp.map((r) => r.map((v) => v + 0.05));
    const lpm = lp.map((r) => r.map((v) => v - 0.3));
    const base = {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "token_mean",
      doubleEntropy: { eta1: 0.03, eta2: 0.03 },
    } as const;
    const official: PapoConfig = {
      ...base,
      emptyRows: "count",
      perception: { gamma: 0.01, clip: null, form: "official" },
    };
    const inputs = {
      logprobs: lp,
      oldLogprobs: old,
      advantages: [1, -1, 0.5],
      responseMask: mask,
      maskedLogprobs: lpm,
    };
    const got = papoLoss(official, inputs);
    const ref = papoLoss(
      { ...official, emptyRows: "reject" },
      {
        logprobs: drop1(lp),
        oldLogprobs: drop1(old),
        advantages: [1, 0.5],
        responseMask: drop1(mask),
        maskedLogprobs: drop1(lpm),
      },
    );
    expect(got.loss).toBe(ref.loss);
    expectRowDropped(got.gradLogprobs, ref.gradLogprobs);
    const trl = papoLoss(
      { ...official, perception: { gamma: 0.01, clip: 0.2, form: "trl" } },
      {
        ...inputs,
        entropies: lp.map((r) => r.map(() => 1)),
        maskedEntropies: lp.map((r) => r.map(() => 1.5)),
      },
    );
    expect(Number.isFinite(trl.loss)).toBe(true);
    let err: unknown;
    try {
      papoLoss({ ...official, emptyRows: "reject" }, inputs);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MaskError);
    // A non-string policy is named as an unknown name too.
    expect(() => whiten(x, mask, { emptyRows: 3 as unknown as "count" })).toThrow(UnknownNameError);
  });
});
