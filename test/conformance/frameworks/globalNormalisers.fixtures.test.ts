/**
 * Enforces docs/derivations/aggregation.md#global-normalisers and #rows-with-no-response-token on
 * the frameworks' own code: verl's agg_loss with global_batch_info (dp_size, batch_num_tokens,
 * global_batch_size, loss_scale_factor) under compute_policy_loss_vanilla at 1dda039b, and TRL's
 * _compute_loss with num_items_in_batch, num_processes and gradient accumulation at f2cd5771,
 * recorded by tools/record-fixtures/globalNormalisers.py (torch autograd, float64; one row of most
 * cases has no response token). Each variant is one policy-loss config of ours with
 * `options.global` (tokens, rows, dpSize) and `emptyRows`: loss and gradient to 1e-12.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { GlobalNormalizer } from "../../../src/aggregate/effectiveTokenWeights.js";
import type { PolicyLossConfig } from "../../../src/losses/config.js";
import { policyLoss } from "../../../src/losses/policyLoss.js";
import { expectNormwiseClose } from "../../_kit/index.js";

interface Case {
  readonly seed: number;
  readonly shape: readonly [number, number];
  readonly empty_row: number | null;
  readonly setting: {
    readonly global_batch_info?: {
      readonly batch_num_tokens: number;
      readonly dp_size: number;
      readonly global_batch_size: number;
      readonly loss_scale_factor: number | null;
    };
    readonly num_items_in_batch?: number;
    readonly num_processes?: number;
    readonly current_gradient_accumulation_steps?: number;
  };
  readonly inputs: {
    readonly logprobs: number[][];
    readonly old_logprobs: number[][];
    readonly advantages: number[] | number[][];
    readonly response_mask: boolean[][];
  };
  readonly outputs: { readonly loss: number; readonly grad_logprobs: number[][] };
}
interface Variant {
  readonly name: string;
  readonly framework: "verl" | "trl";
  readonly cases: readonly Case[];
}
const FX = JSON.parse(
  readFileSync(
    new URL("../../fixtures/frameworks/global-normalisers.json", import.meta.url),
    "utf8",
  ),
) as { readonly variants: readonly Variant[] };

const VANILLA = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 3 },
  ratioClamp: { level: "token", lower: -20, upper: 20 },
} as const;
const TRL_CLIP = {
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.2 },
} as const;

/** Our config and global context for one recorded case. */
function ours(v: Variant, c: Case): { config: PolicyLossConfig; global: GlobalNormalizer } {
  const [B, T] = c.shape;
  const N = c.inputs.response_mask.flat().filter(Boolean).length;
  if (v.framework === "verl") {
    const g = c.setting.global_batch_info as NonNullable<Case["setting"]["global_batch_info"]>;
    const rows = { rows: g.global_batch_size, dpSize: g.dp_size };
    const mode = v.name.slice("verl:".length).split(":")[0];
    switch (mode) {
      case "token-mean":
        return {
          config: { ...VANILLA, aggregation: "token_mean", emptyRows: "count" },
          global: { tokens: g.batch_num_tokens, dpSize: g.dp_size },
        };
      case "token-sum":
        return {
          config: { ...VANILLA, aggregation: "token_sum", emptyRows: "count" },
          global: { dpSize: g.dp_size },
        };
      case "seq-mean-token-sum":
        return {
          config: { ...VANILLA, aggregation: "seq_mean_token_sum", emptyRows: "count" },
          global: rows,
        };
      case "seq-mean-token-sum-norm":
        return {
          config: {
            ...VANILLA,
            aggregation: "token_sum_norm",
            normLen: g.loss_scale_factor ?? T,
            emptyRows: "count",
          },
          global: rows,
        };
      default:
        return {
          config: { ...VANILLA, aggregation: "seq_mean_token_mean", emptyRows: "count" },
          global: rows,
        };
    }
  }
  const s = c.setting;
  const ga = s.current_gradient_accumulation_steps as number;
  switch (v.name) {
    case "trl:dapo":
      // Σ / (max(num_items, 1) / num_processes); gradient accumulation is not applied.
      return {
        config: { ...TRL_CLIP, aggregation: "token_mean", emptyRows: "count" },
        global: {
          tokens: Math.max(s.num_items_in_batch as number, 1),
          dpSize: s.num_processes as number,
        },
      };
    case "trl:grpo":
      // The mean over all B rows of the row means, ÷ GA: B·GA rows.
      return {
        config: { ...TRL_CLIP, aggregation: "seq_mean_token_mean", emptyRows: "count" },
        global: { rows: B * ga },
      };
    default:
      // bnpo: Σ / max(N, 1) over this micro-batch, ÷ GA: N·GA tokens.
      return {
        config: { ...TRL_CLIP, aggregation: "token_mean", emptyRows: "count" },
        global: { tokens: Math.max(N, 1) * ga },
      };
  }
}

describe("global normalisers and empty rows vs verl and TRL", () => {
  test("identity: ten variants, most cases with a row of no response token", () => {
    expect(FX.variants.map((v) => v.name)).toEqual([
      "verl:token-mean",
      "verl:token-sum",
      "verl:seq-mean-token-sum",
      "verl:seq-mean-token-sum-norm",
      "verl:seq-mean-token-sum-norm:loss_scale_factor-16",
      "verl:seq-mean-token-mean",
      "verl:seq-mean-token-mean:global_batch_size-2B",
      "trl:dapo",
      "trl:grpo",
      "trl:bnpo",
    ]);
    const withEmpty = FX.variants.flatMap((v) => v.cases).filter((c) => c.empty_row !== null);
    expect(withEmpty.length).toBeGreaterThanOrEqual(20);
  });
  for (const v of FX.variants) {
    test(`conformance: ${v.name} replays to 1e-12 with options.global and emptyRows count`, () => {
      for (const [k, c] of v.cases.entries()) {
        const what = `${v.name} case ${k} (seed ${c.seed})`;
        const { config, global } = ours(v, c);
        const got = policyLoss(
          config,
          {
            logprobs: c.inputs.logprobs,
            oldLogprobs: c.inputs.old_logprobs,
            advantages: c.inputs.advantages,
            responseMask: c.inputs.response_mask,
          },
          { global },
        );
        expectNormwiseClose(got.loss, c.outputs.loss, 1e-12, `${what}: loss`);
        const g = c.outputs.grad_logprobs;
        expectNormwiseClose(
          got.gradLogprobs,
          { rows: g.length, cols: g[0]?.length ?? 0, data: Float64Array.from(g.flat()) },
          1e-12,
          `${what}: grad`,
        );
      }
    });
  }
});
