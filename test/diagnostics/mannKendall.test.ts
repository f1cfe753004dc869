import { describe, expect, test } from "vitest";
import {
  MANN_KENDALL_EXACT_MAX,
  mannKendall,
  mannKendallNull,
  normalTwoSided,
} from "../../src/diagnostics/mannKendall.js";
import { normalQuantile } from "../../src/diagnostics/ols.js";

describe("mannKendall", () => {
  test("golden: s, variance and exact p-value of a four-point series", () => {
    // n = 4: Var S = 4·3·13/18 = 26/3. Inversion counts of the 24 orders (Mahonian row 4):
    // 1, 3, 5, 6, 5, 3, 1 for I = 0…6, and S = 6 − 2I.
    // [1, 2, 3, 4]: S = 6, p = P(|S′| ≥ 6) = (1 + 1)/24; z = (6 − 1)/√(26/3).
    const up = mannKendall([1, 2, 3, 4]);
    expect(up).toMatchObject({ s: 6, method: "exact" });
    expect(up.varS).toBeCloseTo(26 / 3, 14);
    expect(up.z).toBeCloseTo(5 / Math.sqrt(26 / 3), 14);
    expect(up.pValue).toBeCloseTo(2 / 24, 15);
    // [1, 3, 2, 4]: one inversion, S = 4, p = (1 + 3 + 3 + 1)/24 = 1/3. Reversed: S = −4, same p.
    expect(mannKendall([1, 3, 2, 4]).pValue).toBeCloseTo(1 / 3, 15);
    expect(mannKendall([4, 2, 3, 1])).toMatchObject({ s: -4 });
    expect(mannKendall([4, 2, 3, 1]).pValue).toBeCloseTo(1 / 3, 15);
  });

  test("golden: ties shrink the variance and the exact null", () => {
    // [1, 1, 2, 2]: two tie groups of 2; Var S = (4·3·13 − 2·2·1·9)/18 = 120/18 = 20/3. The six
    // arrangements of {a, a, b, b} have 0, 1, 2, 2, 3, 4 inversions; P = 4 untied pairs, S = 4 − 2I;
    // observed I = 0, S = 4: p = P(I ∈ {0, 4}) = 2/6.
    const r = mannKendall([1, 1, 2, 2]);
    expect(r).toMatchObject({ s: 4, method: "exact" });
    expect(r.varS).toBeCloseTo(20 / 3, 14);
    expect(r.pValue).toBeCloseTo(1 / 3, 15);
    expect(Array.from(mannKendallNull([2, 2]), (p) => p * 6)).toEqual(
      [1, 1, 2, 1, 1].map((c) => expect.closeTo(c, 13)),
    );
    // All values tied: S = 0, Var S = 0, z = 0, p = 1.
    expect(mannKendall([3, 3, 3])).toEqual({ s: 0, varS: 0, z: 0, pValue: 1, method: "exact" });
  });

  test("identity: the exact null is the law of inversions of the arrangements, by enumeration", () => {
    // Every distinct arrangement of a multiset is equally likely under exchangeability; count
    // the inversions of each (brute force over all n! orders, duplicates collapsed).
    const cases: number[][] = [
      [1, 1, 1, 1, 1],
      [3, 2, 1],
      [2, 2, 2],
      [4, 1, 1],
      [1, 1, 3, 1],
    ];
    for (const groups of cases) {
      const values = groups.flatMap((t, g) => new Array<number>(t).fill(g));
      const seen = new Map<string, number>();
      const permute = (rest: number[], acc: number[]): void => {
        if (rest.length === 0) {
          let inv = 0;
          for (let i = 0; i < acc.length; i++)
            for (let j = i + 1; j < acc.length; j++)
              if ((acc[i] as number) > (acc[j] as number)) inv++;
          seen.set(acc.join(","), inv);
          return;
        }
        rest.forEach((v, i) => permute([...rest.slice(0, i), ...rest.slice(i + 1)], [...acc, v]));
      };
      permute(values, []);
      const counts = new Array<number>(Math.max(...seen.values()) + 1).fill(0);
      for (const inv of seen.values()) counts[inv]++;
      const dist = mannKendallNull(groups);
      expect(
        Array.from(dist, (p) => p * seen.size),
        String(groups),
      ).toEqual(counts.map((c) => expect.closeTo(c, 10)));
    }
    // Mahonian row 5 (the first case): 1, 4, 9, 15, 20, 22, 20, 15, 9, 4, 1 over 5! = 120.
    expect(Array.from(mannKendallNull([1, 1, 1, 1, 1]), (p) => Math.round(p * 120))).toEqual([
      1, 4, 9, 15, 20, 22, 20, 15, 9, 4, 1,
    ]);
  });

  test("property: the normal tail agrees with the independent quantile function", () => {
    // normalTwoSided(z) = erfc(z/√2) = 2Φ(−z); normalQuantile (AS 241) inverts Φ independently, so
    // normalQuantile(p/2) = −z. A relative error ρ in p moves the recovered z by
    // ρ·Φ(−z)/φ(z) ≤ 1.26ρ (the Mills ratio, ≤ min(1.26, 1/z)), so |z error| ≤ 2e-13·max(1, z)
    // holds p to about 1.6e-13 relative.
    for (let k = 1; k <= 370; k++) {
      const z = k / 10;
      const p = normalTwoSided(z);
      expect(Math.abs(normalQuantile(p / 2) + z), `z = ${z}`).toBeLessThanOrEqual(
        2e-13 * Math.max(1, z),
      );
    }
    expect(normalTwoSided(0)).toBe(1);
    expect(normalTwoSided(-1.5)).toBe(normalTwoSided(1.5));
  });

  test("calibration: above the exact cap the normal p-value is within 1e-3 of the exact one", () => {
    // n untied values: the exact law of S = P − 2I from mannKendallNull, against erfc(|z|/√2)
    // with z = (|S| − 1)/√Var S, Var S = n(n − 1)(2n + 5)/18, over every attainable S ≥ 0; the
    // law is symmetric, so P(|S′| ≥ S) = 2·P(I ≤ (P − S)/2) for S > 0. At the switch
    // n = MANN_KENDALL_EXACT_MAX + 1 = 101 the worst difference is below 1e-3. Measured:
    // 4.7e-3 at n = 21, 1.9e-3 at n = 51, 9.8e-4 at n = 101 (about 0.1/n).
    const worstAt = (n: number): number => {
      const dist = mannKendallNull(new Array<number>(n).fill(1));
      const P = (n * (n - 1)) / 2;
      const sd = Math.sqrt((n * (n - 1) * (2 * n + 5)) / 18);
      let tail = 0;
      let worst = 0;
      for (let inv = 0; 2 * inv < P; inv++) {
        tail += dist[inv] as number;
        const S = P - 2 * inv;
        worst = Math.max(worst, Math.abs(normalTwoSided((S - 1) / sd) - Math.min(1, 2 * tail)));
      }
      return worst;
    };
    const n = MANN_KENDALL_EXACT_MAX + 1;
    expect(worstAt(n)).toBeLessThanOrEqual(1e-3);
    expect([21, 51, n].map((k) => worstAt(k).toPrecision(2))).toEqual([
      "0.0047",
      "0.0019",
      "0.00098",
    ]);
    const x = Array.from({ length: n }, (_, i) => Math.sin(i));
    expect(mannKendall(x).method).toBe("normal");
    expect(mannKendall(x.slice(1)).method).toBe("exact");
  });
});
