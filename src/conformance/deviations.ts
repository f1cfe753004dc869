/**
 * The deviation registry: every place where a framework's shipped default computes something other
 * than the published equation (as polgrad encodes it), each with a neutral description, a
 * measurement computed on seeded batches when asked (never a stored number), and the full name of
 * the test that demonstrates it (docs/conformance/deviations.md).
 */

import { grpoAdvantages } from "../advantages/grpo.js";
import { rlooAdvantages } from "../advantages/rloo.js";
import type { Matrix } from "../core/tensor.js";
import { klLoss } from "../kl/klLoss.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { papoLoss } from "../losses/papo.js";
import type { PapoConfig } from "../losses/papoConfig.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import type { DrawnBatch } from "../verify/draw.js";
import { type ComparedLoss, compareLosses } from "./compare.js";
import { getFrameworkModel } from "./frameworks/registry.js";
import { trlModel } from "./frameworks/trl.js";
import { trlLuspoTokenLoss } from "./frameworks/trlLuspo.js";
import { verlModel } from "./frameworks/verl.js";
import { verlGrpoAdvantages, verlRlooAdvantages } from "./verlAdvantages.js";

/** A measured deviation: named numbers and a one-line reading of them. */
export interface DeviationMeasurement {
  readonly values: Readonly<Record<string, number>>;
  readonly summary: string;
}

/** One registered deviation. */
export interface Deviation {
  readonly id: string;
  readonly framework: "verl" | "openrlhf" | "trl";
  /** Commit or tag the deviation was measured at. */
  readonly version: string;
  /** The upstream function or configuration knob. */
  readonly component: string;
  /** What the framework computes and how it differs from the equation, neutrally. */
  readonly description: string;
  /** Measure the deviation now (seeded, deterministic). */
  readonly measure: () => DeviationMeasurement;
  /** Full vitest name of the test that demonstrates it. */
  readonly demonstratedBy: string;
}

const pol =
  (config: PolicyLossConfig): ComparedLoss =>
  (inputs) =>
    policyLoss(config, inputs);
/** A framework model as a compared loss (the id is resolved once, not per batch). */
const fw = (id: string): ComparedLoss => getFrameworkModel(id).evaluate;
const clip = (ratioCap: number | null = null) => ({ epsLow: 0.2, epsHigh: 0.2, ratioCap });
/** polgrad's PPO clip config (ε 0.2/0.2) under `aggregation`, optionally another ratio, a dual-clip cap, a budget. @internal */
export function ppoClipConfig(
  aggregation: PolicyLossConfig["aggregation"],
  o: { ratio?: PolicyLossConfig["ratio"]; cap?: number; normLen?: number } = {},
): PolicyLossConfig {
  return {
    ratio: o.ratio ?? "token",
    surrogate: "pg_clip",
    clip: clip(o.cap ?? null),
    aggregation,
    normLen: o.normLen ?? null,
  };
}
/** polgrad's PPO clip loss as a compared loss (see {@link ppoClipConfig}). */
const ppoClip = (
  aggregation: PolicyLossConfig["aggregation"],
  o: { ratio?: PolicyLossConfig["ratio"]; cap?: number; normLen?: number } = {},
): ComparedLoss => pol(ppoClipConfig(aggregation, o));

/** Inputs whose old logprobs sit `shift` below logprobs on every other token (ratios e^shift·e^U). @internal */
export function wideGaps(shift: number): (d: DrawnBatch) => PolicyLossInputs {
  return (d) => ({
    logprobs: d.logprobs,
    oldLogprobs: d.oldLogprobs.map((row, b) =>
      row.map((v, t) =>
        (b + t) % 2 === 0 ? ((d.logprobs[b] as number[])[t] as number) - shift : v,
      ),
    ),
    advantages: d.advantages,
    responseMask: d.responseMask,
    refLogprobs: d.refLogprobs,
  });
}

function tokens(inputs: PolicyLossInputs): number {
  return (inputs.responseMask as readonly (readonly boolean[])[]).flat().filter(Boolean).length;
}

function threw(f: () => unknown): boolean {
  try {
    f();
    return false;
  } catch {
    return true;
  }
}

/**
 * Every registered deviation, in a stable order.
 *
 * @derivation docs/conformance/deviations.md#the-registry
 * @enforcedBy test/conformance/deviations.test.ts > DEVIATIONS > identity: at least eight entries, unique ids, each demonstrated by a test that exists
 * @since 0.1.0
 */
export const DEVIATIONS: readonly Deviation[] = Object.freeze([
  {
    id: "verl-sum-norm-padded-width",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: 'agg_loss(loss_agg_mode="seq-mean-token-sum-norm")',
    description:
      "With loss_scale_factor unset, the Dr.GRPO mode divides the token sums by B·T with T the padded width of the tensor, not by B·(generation budget); polgrad token_sum_norm with norm_len = ℓ equals verl × T/ℓ (exactly equal at ℓ = T).",
    measure: () => {
      const r = compareLosses(
        ppoClip("token_sum_norm", { cap: 3, normLen: 16 }),
        fw("verl@1dda039b:vanilla:seq-mean-token-sum-norm"),
        { shapes: [[4, 8]], cases: 8 },
      );
      return {
        values: {
          lossRatioMin: r.lossRatioRange[0],
          lossRatioMax: r.lossRatioRange[1],
          gradCosineMin: r.gradCosineMin,
        },
        summary: `polgrad(ℓ=16)/verl loss ratio ${r.lossRatioRange[0]}..${r.lossRatioRange[1]} on T = 8 (T/ℓ = 0.5), gradient cosine ≥ ${r.gradCosineMin.toFixed(12)}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-sum-norm-padded-width",
  },
  {
    id: "verl-dual-clip-always-on",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: "compute_policy_loss_vanilla (policy_loss.loss_mode=vanilla)",
    description:
      "The PPO clip objective is always dual-clipped at clip_ratio_c = 3: for A < 0 and r > 3 the loss is the constant −3A and the gradient 0, where PPO's eq. 7 keeps −r·A flowing. Equal to polgrad pg_clip with ratio_cap 3.",
    measure: () => {
      const plain = compareLosses(ppoClip("token_mean"), fw("verl@1dda039b:vanilla:token-mean"), {
        cases: 16,
        inputs: wideGaps(1.6),
      });
      const capped = compareLosses(
        ppoClip("token_mean", { cap: 3 }),
        fw("verl@1dda039b:vanilla:token-mean"),
        { cases: 16, inputs: wideGaps(1.6) },
      );
      return {
        values: {
          gradRelDiffVsPpo: plain.maxGradRelDiff,
          gradCosineMinVsPpo: plain.gradCosineMin,
          gradRelDiffVsCap3: capped.maxGradRelDiff,
        },
        summary: `vs PPO eq. 7: gradient rel diff up to ${plain.maxGradRelDiff.toPrecision(3)} (cosine ≥ ${plain.gradCosineMin.toFixed(3)}); vs pg_clip with ratio_cap 3: ${capped.maxGradRelDiff.toExponential(1)}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-dual-clip-always-on",
  },
  {
    id: "verl-gspo-token-form",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: "compute_policy_loss_gspo (policy_loss.loss_mode=gspo)",
    description:
      "The GSPO loss uses the GSPO-token ratio (eq. 14: detached sequence weight, token-local gradient), not eq. 7's sequence ratio: values coincide, gradients coincide only when advantages are constant per row. The combined log-ratio is also clamped at 10.",
    measure: () => {
      const seq = compareLosses(
        ppoClip("seq_mean_token_mean", { ratio: "sequence" }),
        fw("verl@1dda039b:gspo"),
        { cases: 16 },
      );
      const tok = compareLosses(
        ppoClip("seq_mean_token_mean", { ratio: "sequence_token" }),
        fw("verl@1dda039b:gspo"),
        { cases: 16 },
      );
      return {
        values: {
          lossRelDiffVsSequence: seq.maxLossRelDiff,
          gradRelDiffVsSequence: seq.maxGradRelDiff,
          gradRelDiffVsSequenceToken: tok.maxGradRelDiff,
        },
        summary: `vs GSPO eq. 7 (sequence ratio): loss rel diff ${seq.maxLossRelDiff.toExponential(1)}, gradient rel diff ${seq.maxGradRelDiff.toPrecision(3)}; vs GSPO-token: gradient rel diff ${tok.maxGradRelDiff.toExponential(1)}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-gspo-token-form",
  },
  {
    id: "verl-gspo-ignores-aggregation",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: "compute_policy_loss_gspo(loss_agg_mode=...)",
    description:
      "The GSPO loss hard-codes seq-mean-token-mean and ignores its loss_agg_mode argument, so a run configured with token-mean (verl's default) gets the sequence-mean aggregation for its GSPO loss.",
    measure: () => {
      const asked = compareLosses(
        ppoClip("token_mean", { ratio: "sequence_token" }),
        fw("verl@1dda039b:gspo"),
        { cases: 16 },
      );
      const got = compareLosses(
        ppoClip("seq_mean_token_mean", { ratio: "sequence_token" }),
        fw("verl@1dda039b:gspo"),
        { cases: 16 },
      );
      return {
        values: {
          lossRelDiffVsTokenMean: asked.maxLossRelDiff,
          lossRelDiffVsSeqMean: got.maxLossRelDiff,
        },
        summary: `configured token-mean: loss rel diff up to ${asked.maxLossRelDiff.toPrecision(3)}; computed seq-mean-token-mean: ${got.maxLossRelDiff.toExponential(1)}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-gspo-ignores-aggregation",
  },
  {
    id: "verl-engine-microbatch-sum-norm",
    framework: "verl",
    version: "1dda039b",
    component: "workers/utils/losses.py::ppo_loss with seq-mean-token-sum-norm",
    description:
      "In the engine path each micro-batch is re-padded to its own longest response, so with loss_scale_factor unset the Dr.GRPO divisor B_c·T_c depends on how rows were packed into micro-batches; polgrad's Dr.GRPO divisor B_c·ℓ does not.",
    measure: () => {
      const mk = (rows: number[][]) => rows.map((r) => r.map((x) => x));
      const lp = mk([
        [-1, -0.5, 0, 0, 0, 0, 0, 0],
        [-0.7, -1.3, 0, 0, 0, 0, 0, 0],
        [-0.2, -0.9, -1.1, -0.4, -0.6, -0.8, -1.2, -0.3],
        [-1.5, -0.1, -0.7, -0.9, -1.0, -0.2, 0, 0],
      ]);
      const old = lp.map((r) => r.map((x) => x - 0.1));
      const mask = lp
        .map((_, b) => [2, 2, 8, 6].map((L) => L)[b] as number)
        .map((L) => Array.from({ length: 8 }, (_, t) => t < L));
      const adv = [1, -0.5, 0.8, -1.2];
      const chunk = (rows: [number, number], width: number): PolicyLossInputs => ({
        logprobs: lp.slice(...rows).map((r) => r.slice(0, width)),
        oldLogprobs: old.slice(...rows).map((r) => r.slice(0, width)),
        advantages: adv.slice(...rows),
        responseMask: mask.slice(...rows).map((r) => r.slice(0, width)),
      });
      const model = verlModel("1dda039b", "vanilla:seq-mean-token-sum-norm");
      // Micro-batches [rows 0–1] (longest response 2) and [rows 2–3] (longest 8), accumulated as a mean.
      const verl =
        (model.evaluate(chunk([0, 2], 2)).loss + model.evaluate(chunk([2, 4], 8)).loss) / 2;
      const cfg: PolicyLossConfig = {
        ratio: "token",
        surrogate: "pg_clip",
        clip: clip(3),
        aggregation: "token_sum_norm",
        normLen: 8,
      };
      const drgrpo =
        (policyLoss(cfg, chunk([0, 2], 8)).loss + policyLoss(cfg, chunk([2, 4], 8)).loss) / 2;
      const first = model.evaluate(chunk([0, 2], 2)).loss / policyLoss(cfg, chunk([0, 2], 8)).loss;
      return {
        values: { firstMicrobatchFactor: first, accumulatedRatio: verl / drgrpo },
        summary: `micro-batch of short rows (T_c = 2) weighs ${first} × Dr.GRPO's (ℓ/T_c = 4); accumulated loss ratio ${verl / drgrpo}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-engine-microbatch-sum-norm",
  },
  {
    id: "verl-k3-clamp",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: 'kl_penalty(kl_penalty="low_var_kl")',
    description:
      "The k3 estimator clamps ref − logp to ±20 and the estimate to [−10, 10]: where the estimate exceeds 10 (|ref − logp| ≳ 11) its value saturates and its gradient is 0, where Schulman's k3 keeps the gradient 1 − e^δ.",
    measure: () => {
      const inputs = {
        logprobs: [[-0.5, -1.0, -0.8]],
        refLogprobs: [[-13.5, -1.2, -0.7]],
        responseMask: [[true, true, true]],
      };
      const v = getFrameworkModel("verl@1dda039b:kl:k3").evaluate({
        ...inputs,
        oldLogprobs: inputs.logprobs,
        advantages: [0],
      });
      const p = klLoss(inputs.logprobs, inputs.refLogprobs, "k3", "token_mean", {
        responseMask: inputs.responseMask,
      });
      return {
        values: {
          verlGrad0: v.gradLogprobs.data[0] as number,
          polgradGrad0: p.gradLogprobs.data[0] as number,
          lossRatio: v.loss / p.loss,
        },
        summary: `at δ = −13: verl gradient ${v.gradLogprobs.data[0]} vs k3's ${(p.gradLogprobs.data[0] as number).toPrecision(6)}; loss ratio ${(v.loss / p.loss).toPrecision(4)}`,
      };
    },
    demonstratedBy: "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-k3-clamp",
  },
  {
    id: "openrlhf-kl-float32",
    framework: "openrlhf",
    version: "bc71bb19 and 3c3be623",
    component: "models/utils.py::compute_approx_kl",
    description:
      "The KL estimators are computed in float32 whatever the input precision (and clamped to [−10, 10]), so an as-loss KL term carries float32 rounding (≈1e-7 relative) on a float64 run.",
    measure: () => {
      const r = compareLosses(
        (i) =>
          klLoss(i.logprobs, i.refLogprobs as Matrix, "k3", "token_mean", {
            responseMask: i.responseMask,
          }),
        fw("openrlhf@3c3be623:kl:k3"),
        { cases: 16 },
      );
      return {
        values: { lossRelDiff: r.maxLossRelDiff, gradRelDiff: r.maxGradRelDiff },
        summary: `k3 token mean: loss rel diff up to ${r.maxLossRelDiff.toExponential(2)}, gradient ${r.maxGradRelDiff.toExponential(2)} (float32 rounding)`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: openrlhf-kl-float32",
  },
  {
    id: "trl-cispo-absolute-cap",
    framework: "trl",
    version: "v1.8.0 and f2cd5771",
    component: 'GRPOConfig(loss_type="cispo", epsilon_high=...)',
    description:
      "CISPO's epsilon_high is an absolute cap on the importance weight, min(r, ε_high), not 1 + ε_high as in the CISPO paper and verl: TRL's epsilon_high = 5 is polgrad's eps_high = 4 (and the default epsilon_high = epsilon = 0.2 caps every weight at 0.2).",
    measure: () => {
      const asPaper = compareLosses(
        pol({
          ratio: "token",
          surrogate: "cispo",
          clip: { epsLow: null, epsHigh: 5 },
          aggregation: "token_mean",
        }),
        fw("trl@f2cd5771:cispo:token"),
        { cases: 16, inputs: wideGaps(1.7) },
      );
      const shifted = compareLosses(
        pol({
          ratio: "token",
          surrogate: "cispo",
          clip: { epsLow: null, epsHigh: 4 },
          aggregation: "token_mean",
        }),
        fw("trl@f2cd5771:cispo:token"),
        { cases: 16, inputs: wideGaps(1.7) },
      );
      return {
        values: {
          gradRelDiffEps5: asPaper.maxGradRelDiff,
          gradRelDiffEps4: shifted.maxGradRelDiff,
        },
        summary: `vs polgrad eps_high 5 (cap 6): gradient rel diff up to ${asPaper.maxGradRelDiff.toPrecision(3)}; vs eps_high 4 (cap 5): ${shifted.maxGradRelDiff.toExponential(1)}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: trl-cispo-absolute-cap",
  },
  {
    id: "trl-dapo-generation-batch-normaliser",
    framework: "trl",
    version: "v1.8.0 and f2cd5771",
    component: 'loss_type="dapo" (default) with steps_per_generation > gradient_accumulation_steps',
    description:
      "dapo divides each micro-batch's token sum by num_items_in_batch, the token count of the whole generation batch; when steps_per_generation exceeds the accumulation steps (the GSPO recipe) each optimizer step's loss shrinks by GA/steps_per_generation relative to DAPO's token mean.",
    measure: () => {
      const r = compareLosses(
        (i) => trlModel("f2cd5771", "dapo:token", { numItemsInBatch: 2 * tokens(i) }).evaluate(i),
        ppoClip("token_mean"),
        { cases: 8 },
      );
      return {
        values: { lossRatioMin: r.lossRatioRange[0], lossRatioMax: r.lossRatioRange[1] },
        summary: `steps_per_generation = 2·GA: loss ratio to the token mean ${r.lossRatioRange[0]}..${r.lossRatioRange[1]}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: trl-dapo-generation-batch-normaliser",
  },
  {
    id: "verl-grpo-singleton",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: "compute_grpo_outcome_advantage",
    description:
      "A group with a single response gets mean 0 and std 1, so its advantage is the raw reward R/(1 + 1e-6) instead of being undefined (polgrad rejects singleton groups under std scaling).",
    measure: () => {
      const v = verlGrpoAdvantages([0.7, 1, 0], [5, 9, 9]);
      return {
        values: {
          verlSingleton: v[0] as number,
          polgradRejects: threw(() => grpoAdvantages([0.7, 1, 0], [5, 9, 9])) ? 1 : 0,
        },
        summary: `singleton reward 0.7 → verl advantage ${v[0]}; polgrad raises`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-grpo-singleton",
  },
  {
    id: "verl-rloo-singleton",
    framework: "verl",
    version: "74a718a4 and 1dda039b",
    component: "compute_rloo_outcome_advantage / rloo_vectorized",
    description:
      "A single-response group has no leave-one-out baseline: the loop estimator keeps its raw reward, the vectorized one gives 0 — the two verl estimators disagree with each other, and polgrad rejects the group.",
    measure: () => {
      const loop = verlRlooAdvantages([0.7, 1, 0], [5, 9, 9]);
      const vec = verlRlooAdvantages([0.7, 1, 0], [5, 9, 9], true);
      return {
        values: {
          loop: loop[0] as number,
          vectorized: vec[0] as number,
          polgradRejects: threw(() => rlooAdvantages([0.7, 1, 0], [5, 9, 9])) ? 1 : 0,
        },
        summary: `singleton reward 0.7 → loop ${loop[0]}, vectorized ${vec[0]}; polgrad raises`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: verl-rloo-singleton",
  },
  {
    id: "trl-luspo-token-padding",
    framework: "trl",
    version: "f2cd5771 (loss_type luspo, importance_sampling_level token)",
    component: "trl/trainer/grpo_trainer.py::GRPOTrainer._compute_loss (loss_type luspo)",
    description:
      "At token level the LUSPO mean of L_b·ℓ runs over all B×T entries without the mask: every padding position contributes −L_b·min(c·A, clip(c)·A) with its own logprobs, so padding values change the loss and padding gets a gradient (LUSPO is defined on the sequence ratio, where our seq_mean_token_sum keeps padding out).",
    measure: () => {
      const T = 6;
      const lengths = [6, 3, 1];
      const mask = lengths.map((L) => Array.from({ length: T }, (_, t) => t < L));
      const lp = mask.map((row, b) => row.map((_, t) => -0.4 - 0.05 * ((b + 2 * t) % 5)));
      const old = lp.map((row, b) => row.map((x, t) => x + 0.03 * (((b + t) % 3) - 1)));
      const inputs = {
        logprobs: lp,
        oldLogprobs: old,
        advantages: [1, -0.5, 2],
        responseMask: mask,
      };
      const base = trlLuspoTokenLoss(inputs);
      // The same batch with the padding logprobs moved by +0.1: only padding changes.
      const moved = lp.map((row, b) => row.map((x, t) => (mask[b]?.[t] ? x : x + 0.1)));
      const shifted = trlLuspoTokenLoss({ ...inputs, logprobs: moved });
      let padGrad = 0;
      base.gradLogprobs.data.forEach((g, i) => {
        if (!mask[Math.floor(i / T)]?.[i % T]) padGrad += Math.abs(g);
      });
      return {
        values: { lossChangeFromPadding: shifted.loss - base.loss, paddingGradMass: padGrad },
        summary: `lengths [6, 3, 1] at T = 6: moving only the padding logprobs by 0.1 changes the loss by ${(shifted.loss - base.loss).toPrecision(3)}; padding holds gradient mass ${padGrad.toPrecision(3)}`,
      };
    },
    demonstratedBy:
      "test/conformance/deviations.test.ts > DEVIATIONS > deviation: trl-luspo-token-padding",
  },
  {
    id: "trl-vespo-is-padding",
    framework: "trl",
    version: "f2cd5771 (loss_type vespo with the vLLM IS ratio)",
    component: "trl/trainer/grpo_trainer.py::GRPOTrainer.get_gamma_weights",
    description:
      "The log of the vLLM importance-sampling ratio is summed into VESPO's sequence log-weight over all T positions without the mask: a padding value other than 1 changes every weight of its row (TRL's own IS block writes 1 at padding, so only other padding shows it). Ours sums over response tokens.",
    measure: () => {
      // One row, two response tokens, one padding position whose IS ratio is 123 (not 1):
      // TRL's lw gains ln 123 ≈ 4.81, so φ = exp(λ + k·lw − λ·e^lw) collapses.
      const lw = 0.1 + 0.05;
      const phi = (x: number) => Math.exp(3 + 2 * x - 3 * Math.exp(x));
      const ours = phi(lw);
      const trl = phi(Math.min(lw + Math.log(123), 20));
      return {
        values: { phiOurs: ours, phiTrl: trl },
        summary: `log-ratio sum 0.15 with one padding IS ratio of 123: φ ${ours.toPrecision(6)} (response tokens) vs ${trl.toExponential(2)} (all T positions)`,
      };
    },
    demonstratedBy:
      "test/conformance/frameworks/surrogates.fixtures.test.ts > TRL vespo with its IS ratio > conformance: trl@f2cd5771 vespo:token:is-ratio replays to 1e-12 once the padding's log-IS sum is moved into the row, and differs without",
  },
  {
    id: "trl-papo-padding-in-mean",
    framework: "trl",
    version: "v0.29.1 (removed before v1.8.0)",
    component: "trl/experimental/papo/papo_trainer.py::PAPOTrainer._compute_loss",
    description:
      "The perception and double-entropy terms are averaged over all B×T positions, padding included, instead of over response tokens: with zero-valued padding they are scaled by N/(B·T).",
    measure: () => {
      const T = 8;
      const lengths = [8, 5, 3, 2];
      const mask = lengths.map((L) => Array.from({ length: T }, (_, t) => t < L));
      const lp = mask.map((row, b) => row.map((on, t) => (on ? -0.3 - 0.1 * ((b + t) % 5) : 0)));
      const inputs = {
        logprobs: lp,
        oldLogprobs: lp,
        advantages: [1, -1, 0.5, -0.5],
        responseMask: mask,
        maskedLogprobs: lp.map((row, b) => row.map((v, t) => (mask[b]?.[t] ? v - 0.3 : 0))),
      };
      const base = {
        ratio: "token",
        surrogate: "pg_clip",
        clip: clip(),
        aggregation: "token_mean",
        doubleEntropy: null,
      } as const;
      const trl = papoLoss(
        { ...base, perception: { gamma: 0.1, clip: 10, form: "trl" } } as PapoConfig,
        inputs,
      );
      const official = papoLoss(
        { ...base, perception: { gamma: 0.1, clip: 10, form: "official" } } as PapoConfig,
        inputs,
      );
      const ratio = trl.perceptionTerm / official.perceptionTerm;
      return {
        values: { perceptionRatio: ratio, expected: 18 / 32 },
        summary: `lengths [8, 5, 3, 2] at T = 8: TRL/masked-mean perception term ${ratio} (N/(B·T) = 0.5625)`,
      };
    },
    demonstratedBy:
      "test/losses/papo.deviations.test.ts > papo deviations > deviation: trl's perception and entropy terms are a mean over all B×T positions, padding included (factor N/(B·T) vs the masked token mean)",
  },
  {
    id: "trl-papo-entropy-no-gradient",
    framework: "trl",
    version: "v0.29.1 (removed before v1.8.0)",
    component: "PAPOTrainer._compute_loss + GRPOTrainer._get_per_token_logps_and_entropies",
    description:
      "The double-entropy term uses entropies computed under torch.no_grad(): it changes the loss value but contributes exactly 0 to the gradient, where the equation's η·H term has a gradient.",
    measure: () => ({
      values: { gradientContribution: 0 },
      summary:
        "recorded gradients with and without the term are bitwise equal (see the demonstrating test)",
    }),
    demonstratedBy:
      "test/losses/papo.deviations.test.ts > papo deviations > deviation: trl's double-entropy term contributes exactly 0 to the gradient, the official mc estimator −η1/N per response token",
  },
] satisfies readonly Deviation[]);
