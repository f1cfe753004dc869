import { type EmptyRows, emptyRowsMaskRule } from "../aggregate/emptyRows.js";
import { checkFiniteOutput } from "../core/finite.js";
import { oneOf } from "../core/names.js";
import type { Mask, MaskLike, Matrix, MatrixLike } from "../core/tensor.js";
import {
  checkFiniteAt,
  checkFiniteNumber,
  checkObject,
  toMask,
  toMatrix,
} from "../core/validate.js";

/**
 * What the running return does at a masked position inside a row (an observation span of a
 * multi-turn rollout; trailing padding gives the same result under every rule):
 * `"carry"` passes it through unchanged (verl's REINFORCE++ since #7300), `"reset"` zeroes it, so
 * rewards after the span never reach the tokens before it (verl's REINFORCE++ before #7300), and
 * `"discount"` keeps discounting through the span with the masked rewards read as 0 (OpenRLHF's
 * `get_cumulative_returns`, verl's ReMax).
 */
export const MaskedReturn = { CARRY: "carry", RESET: "reset", DISCOUNT: "discount" } as const;
/** One of the masked-position rules of {@link returnsToGo}. */
export type MaskedReturn = (typeof MaskedReturn)[keyof typeof MaskedReturn];
/** Every masked-position rule. */
export const MASKED_RETURNS: readonly MaskedReturn[] = Object.values(MaskedReturn);

/** Options of {@link returnsToGo}. */
export interface ReturnsToGoOptions {
  /** The discount γ. @defaultValue 1 */
  readonly gamma?: number;
  /** The rule at masked positions. @defaultValue "carry" */
  readonly masked?: MaskedReturn;
  /**
   * Rows with no response token: `reject` (default), `count` or `drop` (the same here: such a row
   * gets zeros). @defaultValue "reject"
   */
  readonly emptyRows?: EmptyRows;
}

/**
 * Discounted return-to-go of per-token rewards, row by row from the last position backwards.
 *
 * Formula: with a running return G (0 after the last position), at each t from T − 1 down to 0:
 * a response position sets G ← r_t + γ·G and outputs G; a masked position outputs 0 and sets
 * G ← G (`"carry"`), 0 (`"reset"`) or γ·G (`"discount"`, the masked reward read as 0).
 * Every rule gives the same values on right-padded rows. The additions are the recursion itself
 * (r_t + γ·G in that order, as upstream evaluates it), not a compensated sum. Padding values are
 * never read.
 * Gradient / stop-gradient: none; returns are data (advantages and value targets, sg[·]).
 *
 * @param tokenRewards - `[B, T]` per-token rewards (outcome reward at the last response token,
 *   KL penalties per token, ...), finite at response positions.
 * @param responseMask - The `[B, T]` response mask, ≥ 1 response token per row.
 * @param options - `gamma` (default 1), `masked` (default "carry") and `emptyRows` (default
 *   `reject`; `count` or `drop`: a row with no token gets zeros).
 * @returns The `[B, T]` returns, exactly 0 at masked positions.
 * @throws {ShapeError} E_SHAPE when tokenRewards is not 2-D or the mask shape differs.
 * @throws {MaskError} E_MASK when the mask is not 0/1 or has an empty row.
 * @throws {NonFiniteError} E_NONFINITE when a reward is not finite at a response position.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when masked is not a known rule.
 * @throws {ConfigError} E_CONFIG when gamma is not a finite number or options is not an object.
 * @throws {OverflowError} E_OVERFLOW when a return exceeds float64, naming (b, t).
 * @derivation docs/derivations/advantages.md#returns-to-go
 * @enforcedBy test/advantages/returns.test.ts > returnsToGo > golden: gamma 0.5 over [1, 2, 4] gives [3, 4, 4]
 * @enforcedBy test/advantages/returns.test.ts > returnsToGo > golden: an interior masked span under carry, reset and discount
 * @enforcedBy test/advantages/returns.test.ts > returnsToGo > mask invariance: NaN rewards at masked positions never reach the output
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@1dda039b reinforce_plus_plus:gamma=0.9 replays within its tolerance
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: verl@74a718a4 reinforce_plus_plus:gamma=0.9 replays within its tolerance
 * @enforcedBy test/conformance/frameworks/advantages.fixtures.test.ts > advantage estimators vs verl, OpenRLHF and TRL > conformance: openrlhf@3c3be623 reinforce:gamma=0.9 replays within its tolerance
 * @enforcedBy test/advantages/emptyRows.test.ts > token-level functions with rows of no response token > identity: returnsToGo gives an empty row zeros and the others the bits of the batch without it, under count and drop
 * @since 0.3.0
 */
export function returnsToGo(
  tokenRewards: MatrixLike,
  responseMask: MaskLike,
  options: ReturnsToGoOptions = {},
): Matrix {
  const fn = "returnsToGo";
  const x = toMatrix(fn, "tokenRewards", tokenRewards);
  const opts = checkObject(fn, "options", options);
  const empty = emptyRowsMaskRule(fn, "options.emptyRows", opts.emptyRows);
  const like = { rows: x.rows, cols: x.cols, arg: "tokenRewards" };
  const mask = toMask(fn, responseMask, like, "responseMask", empty);
  const gamma = checkFiniteNumber(fn, "options.gamma", opts.gamma ?? 1);
  const rule = oneOf(fn, "options.masked", opts.masked ?? "carry", MASKED_RETURNS);
  return returnsOf(fn, x, mask, gamma, rule);
}

/**
 * {@link returnsToGo} on validated inputs, errors named for `fn`.
 * @internal
 */
export function returnsOf(
  fn: string,
  x: Matrix,
  mask: Mask,
  gamma: number,
  rule: MaskedReturn,
): Matrix {
  checkFiniteAt(fn, "tokenRewards", x, mask);
  const { rows, cols } = x;
  const r = x.data;
  const m = mask.data;
  const out = new Float64Array(r.length);
  for (let b = 0; b < rows; b++) {
    let g = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      if (m[i] === 1) {
        g = (r[i] as number) + gamma * g;
        out[i] = g;
      } else if (rule === "reset") g = 0;
      else if (rule === "discount") g = gamma * g;
    }
  }
  checkFiniteOutput(fn, "return", out, cols, m, "the discounted sum exceeds float64");
  return { rows, cols, data: out };
}
