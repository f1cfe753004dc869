/**
 * The six hand-derived golden cases of polgrad's policy loss (docs/derivations/goldens.md, one
 * `### <name>` section with the arithmetic per case). Clip for all: ε_lo = 0.2, ε_hi = 0.3 (band
 * [0.8, 1.3]); PG_CLIP on the token ratio. Masked positions hold junk 123.
 */
import type { PolicyLossConfig } from "../losses/config.js";
import type { PolicyLossInputs } from "../losses/policyLoss.js";

/** One golden: a config, its inputs, the expected loss and gradient, and its derivation anchor. */
export interface GoldenCase {
  readonly name: string;
  readonly config: PolicyLossConfig;
  readonly inputs: PolicyLossInputs;
  readonly expectedLoss: number;
  readonly expectedGradLogprobs: readonly (readonly number[])[];
  /** Expected clip flags at the response positions, `[clippedLow, clippedHigh]` per token. */
  readonly expectedFlags: readonly (readonly (readonly [boolean, boolean])[])[];
  /** `docs/derivations/goldens.md#<name>`. */
  readonly derivation: string;
}

const J = 123;

function one(
  name: string,
  lp: number,
  old: number,
  a: number,
  expectedLoss: number,
  grad: number,
  flags: [boolean, boolean],
  ratioCap: number | null = null,
): GoldenCase {
  return {
    name,
    config: {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.3, ratioCap },
      aggregation: "token_mean",
    },
    inputs: { logprobs: [[lp]], oldLogprobs: [[old]], advantages: [a], responseMask: [[true]] },
    expectedLoss,
    expectedGradLogprobs: [[grad]],
    expectedFlags: [[flags]],
    derivation: `docs/derivations/goldens.md#${name}`,
  };
}

function ragged(
  name: string,
  aggregation: PolicyLossConfig["aggregation"],
  expectedLoss: number,
  g10: number,
): GoldenCase {
  return {
    name,
    config: {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.3, ratioCap: null },
      aggregation,
    },
    inputs: {
      logprobs: [
        [-0.3, -1.2],
        [-0.5, J],
      ],
      oldLogprobs: [
        [-0.7, -0.8],
        [-0.6, J],
      ],
      advantages: [
        [1, -2],
        [-1, J],
      ],
      responseMask: [
        [true, true],
        [true, false],
      ],
    },
    expectedLoss,
    expectedGradLogprobs: [
      [0, 0],
      [g10, 0],
    ],
    expectedFlags: [
      [
        [false, true],
        [true, false],
      ],
      [[false, false]],
    ],
    derivation: `docs/derivations/goldens.md#${name}`,
  };
}

/**
 * Return fresh copies of the six golden cases (their arithmetic is in docs/derivations/goldens.md).
 *
 * Formula: each case's expected loss and gradient are hand-derived from
 * L = Σ w·(−min(r·A, clamp(r, 0.8, 1.3)·A)) (dual clip: −max(·, c·A) for A < 0).
 *
 * @returns Six cases: inside the band, clipped high (A > 0), clipped low (A < 0), dual clip above
 *   the cap, and a 2×2 ragged batch under token_mean and seq_mean_token_mean.
 * @derivation docs/derivations/goldens.md
 * @enforcedBy test/verify/goldens.test.ts > goldenCases > golden: policyLoss reproduces every case to 1e-12
 * @enforcedBy test/verify/goldens.test.ts > goldenCases > identity: every case has its section in goldens.md
 * @since 0.1.0
 */
export function goldenCases(): GoldenCase[] {
  const e01 = Math.exp(0.1);
  const e02 = Math.exp(0.2);
  return [
    one("pg_clip_inside_band", -0.7, -0.9, 1.5, -1.5 * e02, -1.5 * e02, [false, false]),
    one("pg_clip_clipped_high_positive_advantage", -0.2, -0.7, 2, -(1.3 * 2), 0, [false, true]),
    one("pg_clip_clipped_low_negative_advantage", -1.5, -1.0, -1, 0.8, 0, [true, false]),
    one("dual_clip_negative_advantage_above_cap", -0.4, -1.4, -1.5, 3, 0, [false, true], 2),
    ragged("pg_clip_two_token_ragged_token_mean", "token_mean", (0.3 + e01) / 3, e01 / 3),
    ragged(
      "pg_clip_two_token_ragged_seq_mean_token_mean",
      "seq_mean_token_mean",
      0.3 / 4 + e01 / 2,
      e01 / 2,
    ),
  ];
}
