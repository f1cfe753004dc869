/**
 * Enforces docs/derivations/losses.md#value-loss: goldens of spec §3.4 and conformance with
 * polgrad 0.2.0 on test/fixtures/polgrad/value_loss.json.
 */
import { describe, expect, test } from "vitest";
import { ConfigError, ShapeError, toRows, valueLoss } from "../../src/index.js";
import {
  type FixtureNumber,
  loadPolgradFixture,
  matrixRelErr,
  relErr,
  rows,
} from "../_kit/polgradFixtures.js";

const v = [[1.5, 0.5]];
const vo = [[1, 1]];
const R = [[0, 0]];
const m = [[true, true]];

describe("valueLoss", () => {
  test("golden: clipped token_mean loss 0.7225", () => {
    // v = (1.5, 0.5), v_old = 1, R = 0, ε = 0.2: token 0 clamps v to 1.2, (1.2)² = 1.44 < 2.25 so
    // ℓ0 = ½·2.25 = 1.125 (unclipped branch, gradient w·(v − R) = ½·1.5 = 0.75); token 1 clamps to
    // 0.8, 0.64 > 0.25 so ℓ1 = ½·0.64 = 0.32 (clipped wins, gradient 0). loss = (1.125 + 0.32)/2.
    const r = valueLoss(v, vo, R, m, { clipEps: 0.2, aggregation: "token_mean" });
    expect(r.loss).toBeCloseTo(0.7225, 15);
    expect(toRows(r.gradValues)).toEqual([[0.75, 0]]);
    expect(r.clippedFrac).toBe(0.5);
  });

  test("golden: unclipped loss 0.625 and token_sum_norm 0.36125", () => {
    // ½·(2.25 + 0.25)/2 = 0.625, gradient ½·(1.5, 0.5) = (0.75, 0.25);
    // token_sum_norm with ℓ = 4 (B = 1): (1.125 + 0.32)/4 = 0.36125.
    const r = valueLoss(v, vo, R, m, { clipEps: null, aggregation: "token_mean" });
    expect(r.loss).toBe(0.625);
    expect(toRows(r.gradValues)).toEqual([[0.75, 0.25]]);
    expect(r.clippedFrac).toBe(0);
    const s = valueLoss(v, vo, R, m, { clipEps: 0.2, aggregation: "token_sum_norm", normLen: 4 });
    expect(s.loss).toBeCloseTo(0.36125, 15);
  });

  test("identity: a band wider than every update equals the unclipped loss bitwise", () => {
    const wide = valueLoss(v, vo, R, m, { clipEps: 100, aggregation: "seq_mean_token_sum" });
    const plain = valueLoss(v, vo, R, m, { clipEps: null, aggregation: "seq_mean_token_sum" });
    expect(Object.is(wide.loss, plain.loss)).toBe(true);
    expect(Array.from(wide.gradValues.data)).toEqual(Array.from(plain.gradValues.data));
  });

  test("rejects: clipEps that is not a positive finite number", () => {
    for (const clipEps of [0, -0.5, Number.POSITIVE_INFINITY]) {
      expect(() => valueLoss(v, vo, R, m, { clipEps, aggregation: "token_mean" })).toThrow(
        ConfigError,
      );
    }
    expect(() => valueLoss(v, [[1]], R, m, { clipEps: null, aggregation: "token_mean" })).toThrow(
      ShapeError,
    );
  });

  test("conformance: matches polgrad 0.2.0 on every recorded value-loss case", () => {
    type Rows = FixtureNumber[][];
    const f = loadPolgradFixture<{
      cases: {
        name: string;
        config: { clip_eps: number | null; aggregation: "token_mean"; norm_len: number | null };
        inputs: { values: Rows; old_values: Rows; returns: Rows; response_mask: boolean[][] };
        outputs: { loss: number; grad_values: Rows; clipped_frac: number };
      }[];
    }>("value_loss.json");
    expect(f.cases.length).toBe(36);
    for (const c of f.cases) {
      const r = valueLoss(
        rows(c.inputs.values),
        rows(c.inputs.old_values),
        rows(c.inputs.returns),
        c.inputs.response_mask,
        {
          clipEps: c.config.clip_eps,
          aggregation: c.config.aggregation,
          normLen: c.config.norm_len,
        },
      );
      expect(relErr(r.loss, c.outputs.loss), c.name).toBeLessThanOrEqual(1e-12);
      expect(matrixRelErr(r.gradValues, c.outputs.grad_values), c.name).toBeLessThanOrEqual(1e-12);
      expect(r.clippedFrac, c.name).toBe(c.outputs.clipped_frac);
    }
  });
});
