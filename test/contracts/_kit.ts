/**
 * Test kit of the contracts suite: property arbitraries of contract batches (extension streams
 * included), a seeded generator of realistic batches for the calibration table and the leak
 * margins, and the seeded leaks — honest constructions of adapters that do *not* reduce to their
 * parent at zero coefficient.
 */
import fc from "fast-check";
import {
  type ContractBatch,
  calibrateTolerance,
  checkReduction,
  defineReduction,
  getReduction,
  PRECISIONS,
  REDUCTION_NAMES,
  type ReductionContract,
} from "../../src/contracts/index.js";
import type { MaskLike, MatrixLike } from "../../src/core/tensor.js";
import { effectiveTokenWeights, type PolicyLossConfig, policyLoss } from "../../src/index.js";
import { papoLoss } from "../../src/losses/papo.js";
import type { PapoConfig } from "../../src/losses/papoConfig.js";
import { createRng } from "../../src/verify/index.js";
import { JUNK, type LogprobBatch, logprobBatches } from "../_kit/index.js";

/** A generated batch: the kit's logprob batch plus the masked view and both entropies. */
export interface GeneratedBatch extends LogprobBatch {
  readonly maskedLogprobs: number[][];
  readonly entropies: number[][];
  readonly maskedEntropies: number[][];
}

/** A generated batch with every stream a contract may read (finite padding when `finitePadding`). */
export function contractBatches({
  maxGap = 2,
  finitePadding = false,
}: {
  maxGap?: number;
  finitePadding?: boolean;
} = {}): fc.Arbitrary<GeneratedBatch> {
  return logprobBatches({ maxGap, junk: finitePadding ? [123] : JUNK }).chain((b) => {
    const n = b.responseMask.length * b.responseMask[0].length;
    const grid = (min: number, max: number) =>
      fc
        .array(fc.integer({ min: 0, max: 2 ** 20 }), { minLength: n, maxLength: n })
        .map((ks) => ks.map((k) => min + ((max - min) * k) / 2 ** 20));
    return fc
      .record({ dm: grid(-maxGap, maxGap), e: grid(0, 3), em: grid(0, 3) })
      .map(({ dm, e, em }) => {
        const T = b.responseMask[0].length;
        const rows = (f: (i: number, x: number) => number, base: number[][]) =>
          base.map((row, r) =>
            row.map((x, t) => (b.responseMask[r][t] ? f(r * T + t, x) : b.junk)),
          );
        return {
          ...b,
          maskedLogprobs: rows((i, x) => x + dm[i], b.logprobs),
          entropies: rows((i) => e[i], b.logprobs),
          maskedEntropies: rows((i) => em[i], b.logprobs),
        };
      });
  });
}

/** The same batch with every non-finite padding value replaced by 123 (for the trl form). */
export function finitePadding(b: GeneratedBatch): GeneratedBatch {
  const fix = (m: number[][]) => m.map((r) => r.map((x) => (Number.isFinite(x) ? x : 123)));
  return {
    ...b,
    logprobs: fix(b.logprobs),
    oldLogprobs: fix(b.oldLogprobs),
    refLogprobs: fix(b.refLogprobs),
    rolloutLogprobs: fix(b.rolloutLogprobs),
    maskedLogprobs: fix(b.maskedLogprobs),
    entropies: fix(b.entropies),
    maskedEntropies: fix(b.maskedEntropies),
  };
}

/** Shape and spread of a realistic seeded batch. */
export interface RealisticOptions {
  readonly rows?: number;
  readonly cols?: number;
  /** Std of oldLogprobs − logprobs (near on-policy by default). */
  readonly oldGap?: number;
  /** Std of maskedLogprobs − logprobs (how much the logits depend on the image). */
  readonly imageGap?: number;
}

/**
 * A seeded batch like a training step's: B rows of lengths in [T/4, T], logprobs in (−4, 0),
 * old/ref/rollout near them, per-row standard-normal advantages, masked-view logprobs, entropies.
 */
export function realisticBatch(seed: number, options: RealisticOptions = {}): ContractBatch {
  const { rows: B = 8, cols: T = 256, oldGap = 0.05, imageGap = 0.5 } = options;
  const rng = createRng(seed);
  const mk = () => [] as number[][];
  const [lp, old, ref, roll, masked, ent, entM] = [mk(), mk(), mk(), mk(), mk(), mk(), mk()];
  const mask: boolean[][] = [];
  const adv: number[] = [];
  for (let b = 0; b < B; b++) {
    const L = rng.int(Math.max(1, T >> 2), T);
    const r = [[], [], [], [], [], [], []] as number[][];
    const m: boolean[] = [];
    for (let t = 0; t < T; t++) {
      const x = -4 * rng.uniform() - 1e-3;
      const on = t < L;
      r[0].push(on ? x : 0);
      r[1].push(on ? x + oldGap * rng.normal() : 0);
      r[2].push(on ? x + 0.1 * rng.normal() : 0);
      r[3].push(on ? x + oldGap * rng.normal() : 0);
      r[4].push(on ? x + imageGap * rng.normal() : 0);
      r[5].push(on ? 3 * rng.uniform() : 0);
      r[6].push(on ? 3 * rng.uniform() : 0);
      m.push(on);
    }
    for (const [k, target] of [lp, old, ref, roll, masked, ent, entM].entries()) target.push(r[k]);
    mask.push(m);
    adv.push(rng.normal());
  }
  return {
    logprobs: lp,
    oldLogprobs: old,
    refLogprobs: ref,
    rolloutLogprobs: roll,
    maskedLogprobs: masked,
    entropies: ent,
    maskedEntropies: entM,
    responseMask: mask,
    advantages: adv,
  };
}

/** A seeded leak: a PAPO adapter that breaks the zero-coefficient reduction in a stated way. */
export interface Leak {
  readonly name: string;
  /** What the bug is, as it would appear in an adapter's code. */
  readonly description: string;
  /** The child evaluator at γ = 0 for the PAPO config `base` (official form). */
  readonly evaluate: (
    base: PapoConfig,
    batch: ContractBatch,
  ) => {
    loss: number;
    gradLogprobs: { rows: number; cols: number; data: Float64Array };
  };
}

/** Element (b, t) of a matrix or mask given either as an object or as nested rows. */
function cell(x: MatrixLike | MaskLike, b: number, t: number): number {
  if ("data" in x) return Number(x.data[b * x.cols + t]);
  return Number((x as readonly (readonly (number | boolean)[])[])[b][t]);
}

const at = (base: PapoConfig, gamma: number): PapoConfig => ({
  ...base,
  perception: { ...base.perception, gamma },
  doubleEntropy: base.doubleEntropy === null ? null : { eta1: 0, eta2: 0 },
});
const inputs = (batch: ContractBatch) => ({ ...batch, maskedLogprobs: batch.maskedLogprobs ?? [] });

/**
 * The three seeded leaks, each honest about what a real adapter might do:
 * - `gamma_on_value_only`: the perception term is written straight-through,
 *   γ·sg[P] + (P − sg[P]), so γ scales its value but not its gradient: at γ = 0 the loss is the
 *   parent's bitwise and the gradient carries the full −∇P.
 * - `gamma_on_part`: an operator-precedence slip, γ·expm1(δ) − δ instead of γ·(expm1(δ) − δ): the
 *   −δ half of k3 escapes γ, so at γ = 0 the loss gains Σ w·δ and the gradient −w per token.
 * - `coefficient_floor`: a "numerical safety" floor γ_eff = max(γ, 1e-3), so at γ = 0 the
 *   perception term still enters at 1e-3.
 */
export const LEAKS: readonly Leak[] = [
  {
    name: "gamma_on_value_only",
    description: "γ·sg[P] + (P − sg[P]): γ scales the value, not the gradient",
    evaluate: (base, batch) => {
      const zero = papoLoss(at(base, 0), inputs(batch));
      const one = papoLoss(at(base, 1), inputs(batch));
      return { loss: zero.loss, gradLogprobs: one.gradLogprobs };
    },
  },
  {
    name: "gamma_on_part",
    description: "γ·expm1(δ) − δ: the −δ half of k3 escapes γ",
    evaluate: (base, batch) => {
      const parent = policyLoss(base, batch);
      const w = effectiveTokenWeights(batch.responseMask, base.aggregation, {
        normLen: base.normLen ?? null,
      });
      const { rows: B, cols: T } = parent.gradLogprobs;
      let extra = 0;
      const grad = Float64Array.from(parent.gradLogprobs.data);
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < T; t++) {
          if (!cell(batch.responseMask, b, t)) continue;
          const wi = w.data[b * T + t];
          extra += wi * (cell(batch.maskedLogprobs ?? [], b, t) - cell(batch.logprobs, b, t));
          grad[b * T + t] -= wi;
        }
      }
      return { loss: parent.loss + extra, gradLogprobs: { ...parent.gradLogprobs, data: grad } };
    },
  },
  {
    name: "coefficient_floor",
    description: "γ_eff = max(γ, 1e-3): the term still enters at 1e-3",
    evaluate: (base, batch) => {
      const r = papoLoss(at(base, Math.max(0, 1e-3)), inputs(batch));
      return { loss: r.loss, gradLogprobs: r.gradLogprobs };
    },
  },
];

/** The PAPO contract `name` with its child replaced by the leak. */
export function leakyContract(
  name: "papo_g_to_grpo" | "papo_d_to_dapo",
  leak: Leak,
): ReductionContract {
  const c = getReduction(name);
  if (c.child.kind !== "papo") throw new Error("not a papo contract");
  const base = c.child.config;
  return defineReduction({
    ...c,
    name: `${name}+${leak.name}`,
    child: {
      kind: "custom",
      label: `${c.child.label} with leak ${leak.name}`,
      evaluate: (b) => leak.evaluate(base, b),
    },
  });
}

/**
 * Batches whose logits depend on the image: near on-policy (|old − lp| ≤ 0.1) and every response
 * token's masked-view logprob 0.25 to 2 nats away from the original.
 */
export function imageBatches(): fc.Arbitrary<GeneratedBatch> {
  return contractBatches({ maxGap: 0.1 }).chain((b) => {
    const n = b.responseMask.length * b.responseMask[0].length;
    return fc
      .array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 2 ** 20 })), {
        minLength: n,
        maxLength: n,
      })
      .map((ds) => {
        const T = b.responseMask[0].length;
        const lp = b.logprobs;
        return {
          ...b,
          maskedLogprobs: lp.map((row, r) =>
            row.map((x, t) => {
              if (!b.responseMask[r][t]) return x;
              const [neg, k] = ds[r * T + t];
              const d = 0.25 + (1.75 * k) / 2 ** 20;
              return x + (neg ? -d : d);
            }),
          ),
        };
      });
  });
}

/** The seeds of the reference batches behind the documented tables. */
export const REFERENCE_SEEDS: readonly number[] = [0, 1, 2, 3];

/** Two significant digits, as the documented tables print them. */
export function sig2(x: number): string {
  return x === 0 ? "0" : x.toExponential(1);
}

/**
 * Extract the `| … |` rows between `<!-- name:start -->` and `<!-- name:end -->` in a markdown
 * text, header and separator rows excluded, each as its trimmed cells.
 */
export function tableRows(markdown: string, name: string): string[][] {
  const start = markdown.indexOf(`<!-- ${name}:start -->`);
  const end = markdown.indexOf(`<!-- ${name}:end -->`);
  if (start < 0 || end < start) throw new Error(`no table ${name}`);
  return markdown
    .slice(start, end)
    .split("\n")
    .filter((l) => l.startsWith("|"))
    .slice(2)
    .map((l) =>
      l
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}

/** The parents of the registered reductions, by label, with their configs. */
export function referenceParents(): [string, PolicyLossConfig][] {
  const out = new Map<string, PolicyLossConfig>();
  for (const name of REDUCTION_NAMES) {
    const p = getReduction(name).parent;
    if (p.kind === "policy_loss") out.set(p.label.split(" ")[0] as string, p.config);
  }
  return [...out];
}

/**
 * The documented calibration table: for each parent and precision, the largest ρ̂/u, rtol,
 * atol/G and absolute atol over the reference batches (B = 8, T = 256).
 */
export function calibrationRows(): string[][] {
  const rows: string[][] = [];
  for (const [label, config] of referenceParents()) {
    for (const precision of PRECISIONS) {
      let rho = 0;
      let rtol = 0;
      let rel = 0;
      let atol = 0;
      for (const seed of REFERENCE_SEEDS) {
        const c = calibrateTolerance(config, realisticBatch(seed), { precision });
        rho = Math.max(rho, c.relativeRoundoff / c.unitRoundoff);
        rtol = Math.max(rtol, c.rtol);
        rel = Math.max(rel, c.atol / c.gradScale);
        atol = Math.max(atol, c.atol);
      }
      rows.push([label, precision, rho.toFixed(1), sig2(rtol), sig2(rel), sig2(atol)]);
    }
  }
  return rows;
}

/**
 * The documented leak table: for each leak, PAPO contract and precision, the smallest gradient
 * margin and the smallest loss margin over the reference batches, and whether the exact loss
 * rule fired on every one of them.
 */
export function leakRows(): string[][] {
  const rows: string[][] = [];
  for (const leak of LEAKS) {
    for (const name of ["papo_d_to_dapo", "papo_g_to_grpo"] as const) {
      for (const precision of ["bf16", "fp16", "fp32"] as const) {
        let grad = Number.POSITIVE_INFINITY;
        let loss = Number.POSITIVE_INFINITY;
        let exact = true;
        for (const seed of REFERENCE_SEEDS) {
          const r = checkReduction(leakyContract(name, leak), realisticBatch(seed), { precision });
          grad = Math.min(grad, r.gradients[0].margin);
          loss = Math.min(loss, r.loss.margin);
          exact &&= r.loss.difference !== 0;
        }
        rows.push([leak.name, name, precision, sig2(grad), sig2(loss), exact ? "yes" : "no"]);
      }
    }
  }
  return rows;
}
