/**
 * Issue 9 for `which`: advantages near 1.8e308 give finite losses and gradient masses (the row
 * sums overflow; the aggregates do not), and a non-object batch or options is a typed error.
 */
import { describe, expect, it } from "vitest";
import { whichTable } from "../../src/index.js";
import { BUILTIN_BATCH } from "../../src/which/builtinBatch.js";

describe("whichTable", () => {
  it("golden: advantages 1e308 give finite losses and masses, computed stably", () => {
    // With every advantage A = c > 0, each surrogate is positively homogeneous in A:
    // min(r·cA, clamp(r)·cA) = c·min(r·A, clamp(r)·A) (also the dual clip, which binds only for
    // A < 0, and TRL's and the frameworks' row reductions, which are linear). So every loss and
    // every gradient mass at A = 1e308 is 1e308 × its value at A = 1, up to rounding.
    const unit = whichTable({ ...BUILTIN_BATCH, advantages: [1, 1, 1, 1] });
    const huge = whichTable({ ...BUILTIN_BATCH, advantages: [1e308, 1e308, 1e308, 1e308] });
    huge.rows.forEach((row, k) => {
      const u = unit.rows[k];
      if (u === undefined) throw new Error("row missing");
      expect(Number.isFinite(row.loss), row.key).toBe(true);
      expect(Math.abs(row.loss - 1e308 * u.loss)).toBeLessThanOrEqual(1e-12 * Math.abs(row.loss));
      row.gradMass.forEach((m, b) => {
        expect(Number.isFinite(m)).toBe(true);
        expect(Math.abs(m - 1e308 * (u.gradMass[b] as number))).toBeLessThanOrEqual(1e-12 * m);
      });
    });
    for (const c of huge.crossChecks) expect(Number.isFinite(c.absDiff), c.claim).toBe(true);
  });

  it("rejects: a batch or options that are not objects with typed errors", () => {
    for (const bad of [null, undefined, 3, "batch"]) {
      expect(() => whichTable(bad as never)).toThrow(expect.objectContaining({ arg: "batch" }));
    }
    expect(() => whichTable(BUILTIN_BATCH, null as never)).toThrow(
      expect.objectContaining({ name: "ConfigError", arg: "options" }),
    );
  });
});
