/**
 * Enforces docs/derivations/kl.md#adaptive-kl-controller: one update of the adaptive KL controller
 * as Ziegler et al. define it and verl and OpenRLHF ship it, β·(1 + clip(KL/target − 1, ±0.2)·n/H).
 */
import { describe, expect, test } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { adaptiveKlCoef } from "../../src/kl/klController.js";
import { expectPolgradError } from "../io/_kit.js";

describe("adaptiveKlCoef", () => {
  test("golden: a KL of 9 against a target of 6 clips the error at 0.2", () => {
    // 9/6 − 1 = 0.5 → 0.2; β' = 0.1·(1 + 0.2·256/10000) = 0.1·1.00512.
    expect(adaptiveKlCoef(0.1, 9, 256, { target: 6, horizon: 10000 })).toBe(
      0.1 * (1 + (0.2 * 256) / 10000),
    );
    // 5.4/6 − 1 = −0.1 (inside): β' = 0.1·(1 − 0.1·256/10000); computed as upstream does.
    const e = 5.4 / 6 - 1;
    expect(adaptiveKlCoef(0.1, 5.4, 256, { target: 6, horizon: 10000 })).toBe(
      0.1 * (1 + (e * 256) / 10000),
    );
    // A KL of 0 gives −1 → −0.2; a clip of 0 makes the controller fixed.
    expect(adaptiveKlCoef(0.1, 0, 100, { target: 6, horizon: 1000 })).toBe(
      0.1 * (1 + (-0.2 * 100) / 1000),
    );
    expect(adaptiveKlCoef(0.1, 100, 100, { target: 6, horizon: 1000, clip: 0 })).toBe(0.1);
  });

  test("rejects: a non-positive target or horizon and a non-finite kl", () => {
    expectPolgradError(
      () => adaptiveKlCoef(0.1, 1, 1, { target: 0, horizon: 1 }),
      ConfigError,
      "E_CONFIG",
      "options.target",
    );
    expectPolgradError(
      () => adaptiveKlCoef(0.1, 1, 1, { target: 1, horizon: -1 }),
      ConfigError,
      "E_CONFIG",
      "options.horizon",
    );
    expectPolgradError(
      () => adaptiveKlCoef(0.1, Number.NaN, 1, { target: 1, horizon: 1 }),
      ConfigError,
      "E_CONFIG",
      "currentKl",
    );
    expectPolgradError(
      () => adaptiveKlCoef(Number.POSITIVE_INFINITY, 1, 1, { target: 1, horizon: 1 }),
      ConfigError,
      "E_CONFIG",
      "coef",
    );
    // Upstream's rule goes negative when e·n/H < −1 (n = 10000, H = 500: 1 − 0.2·20 = −3), and
    // keeps updating from there: quoted, not refused.
    expect(adaptiveKlCoef(0.1, 0, 10000, { target: 6, horizon: 500 })).toBe(
      0.1 * (1 + (-0.2 * 10000) / 500),
    );
  });
});
