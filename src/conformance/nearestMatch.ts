/**
 * The diagnosis that comes with a failed conformance check (docs/testing.md#diagnosis): the
 * configurations one or two component changes away from the reference (aggregation and its
 * normaliser, ratio, clip, KL placement and sign, surrogate), each evaluated on the same cases as
 * the implementation under test; the one it matches names the cause ("matches token_mean, not
 * seq_mean_token_mean"), optionally up to a constant factor (a dp_size or a budget). Browser-safe.
 */
import { AGGREGATIONS } from "../aggregate/aggregation.js";
import { pyExp } from "../core/pyFormat.js";
import { requireArrayOf, requireObject } from "../core/validate.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import { caseMetrics } from "./compare.js";

/** A loss on one case: value and gradient w.r.t. logprobs, row-major `[B, T]`. */
export interface CaseResult {
  readonly loss: number;
  readonly grad: ArrayLike<number>;
}

/** One candidate configuration and how far the implementation is from it. */
export interface CandidateMatch {
  /** The changes from the reference, in words (`aggregation token_mean (reference seq_mean_token_mean)`). */
  readonly changes: readonly string[];
  readonly maxLossRelDiff: number;
  readonly maxGradRelDiff: number;
  /** The implementation equals this candidate times `scale` (1: as is). */
  readonly scale: number;
}

/** The diagnosis of a mismatch. */
export interface MismatchDiagnosis {
  /** The candidate the implementation matches within the tolerances, or null. */
  readonly match: CandidateMatch | null;
  /** The three nearest candidates, nearest first (the match first when there is one). */
  readonly nearest: readonly CandidateMatch[];
  /** How many candidates were tried. */
  readonly candidates: number;
  /** One paragraph, for the report. */
  readonly text: string;
}

interface Candidate {
  readonly changes: readonly string[];
  readonly run: (
    b: { readonly shape: readonly [number, number] },
    inputs: PolicyLossInputs,
  ) => CaseResult;
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6))));

function clipText(c: PolicyLossConfig["clip"]): string {
  if (c === null || c === undefined) return "none";
  const cap = c.ratioCap == null ? "" : `, dual clip ${fmt(c.ratioCap)}`;
  return `[1 − ${c.epsLow ?? "∞"}, 1 + ${c.epsHigh ?? "∞"}]${cap}`;
}

function plain(config: PolicyLossConfig): Candidate["run"] {
  return (b, inputs) => {
    const cfg =
      config.aggregation === "token_sum_norm" && config.normLen == null
        ? { ...config, normLen: b.shape[1] }
        : config;
    const r = policyLoss(cfg, inputs);
    return { loss: r.loss, grad: r.gradLogprobs.data };
  };
}

/** The candidates one change (and aggregation × one other change) away from `ref`. */
function candidatesOf(ref: PolicyLossConfig, withKl: boolean): Candidate[] {
  type Change = {
    readonly text: string;
    readonly apply: (c: PolicyLossConfig) => PolicyLossConfig | null;
  };
  const aggregation: Change[] = [];
  for (const a of AGGREGATIONS) {
    if (a === "token_sum_norm") {
      // Dr.GRPO's budget: the reference's, or the padded width T (a common slip), or the longest row.
      if (ref.aggregation !== a || ref.normLen != null)
        aggregation.push({
          text: `aggregation token_sum_norm with normLen = the padded width T${ref.aggregation === a ? ` (reference normLen ${ref.normLen})` : ` (reference ${ref.aggregation})`}`,
          apply: (c) => ({ ...c, aggregation: a, normLen: null }),
        });
      if (ref.aggregation !== a && ref.normLen != null)
        aggregation.push({
          text: `aggregation token_sum_norm with normLen ${ref.normLen} (reference ${ref.aggregation})`,
          apply: (c) => ({ ...c, aggregation: a }),
        });
      continue;
    }
    if (a !== ref.aggregation)
      aggregation.push({
        text: `aggregation ${a} (reference ${ref.aggregation})`,
        apply: (c) => ({ ...c, aggregation: a, normLen: null }),
      });
  }
  const other: Change[] = [];
  for (const r of ["token", "sequence", "sequence_token"] as const)
    if (r !== ref.ratio && (ref.surrogate === "pg_clip" || ref.surrogate === "pg"))
      other.push({
        text: `ratio ${r} (reference ${ref.ratio})`,
        apply: (c) => ({ ...c, ratio: r }),
      });
  const clip = ref.clip ?? null;
  if (ref.surrogate === "pg_clip" && clip !== null) {
    other.push({
      text: `no clip (reference ${clipText(clip)})`,
      apply: (c) => ({ ...c, surrogate: "pg", clip: null }),
    });
    const eps = [0.1, 0.2, 0.21, 0.25, 0.28, 0.3];
    for (const lo of eps)
      for (const hi of eps) {
        if (lo === clip.epsLow && hi === clip.epsHigh) continue;
        const next = { epsLow: lo, epsHigh: hi, ratioCap: clip.ratioCap ?? null };
        other.push({
          text: `clip ${clipText(next)} (reference ${clipText(clip)})`,
          apply: (c) => ({ ...c, clip: next }),
        });
      }
    const capped = { ...clip, ratioCap: clip.ratioCap == null ? 3 : null };
    other.push({
      text: `clip ${clipText(capped)} (reference ${clipText(clip)})`,
      apply: (c) => ({ ...c, clip: capped }),
    });
  }
  if (ref.surrogate !== "reinforce" && ref.surrogate !== "pg")
    other.push({
      text: `surrogate pg, the unclipped ratio (reference ${ref.surrogate})`,
      apply: (c) => ({ ...c, surrogate: "pg", clip: null }),
    });
  if (ref.surrogate !== "reinforce")
    other.push({
      text: `surrogate reinforce, −A·lp (reference ${ref.surrogate})`,
      apply: (c) => ({ ...c, surrogate: "reinforce", ratio: "token", clip: null }),
    });
  const out: Candidate[] = [];
  const push = (changes: Change[]) => {
    let c: PolicyLossConfig | null = ref;
    for (const ch of changes) c = c === null ? null : ch.apply(c);
    if (c !== null) out.push({ changes: changes.map((x) => x.text), run: plain(c) });
  };
  // The reference itself: with the least-squares scale, a constant factor (a dp_size, an
  // accumulation count) shows as "times s".
  out.push({ changes: ["no change of configuration"], run: plain(ref) });
  for (const a of aggregation) push([a]);
  for (const o of other) push([o]);
  for (const a of aggregation) for (const o of other) push([a, o]);
  // KL placement and sign (only when the implementation is given refLogprobs).
  const kl = ref.kl ?? null;
  if (withKl && kl !== null) {
    const noKl = { ...ref, kl: null };
    out.push({
      changes: [`no KL term (reference ${kl.kind}, coefficient ${fmt(kl.coef)})`],
      run: plain(noKl),
    });
    // The KL term with the opposite sign: L_surrogate − c·KL = 2·L_without − L_with.
    const withRun = plain(ref);
    const withoutRun = plain(noKl);
    out.push({
      changes: [
        `the KL term subtracted, coefficient −${fmt(kl.coef)} (reference +${fmt(kl.coef)})`,
      ],
      run: (b, inputs) => {
        const w = withRun(b, inputs);
        const wo = withoutRun(b, inputs);
        return {
          loss: 2 * wo.loss - w.loss,
          grad: Array.from(w.grad, (g, i) => 2 * (wo.grad[i] as number) - g),
        };
      },
    });
    for (const k of ["k1", "k2", "k3"] as const)
      if (k !== kl.kind)
        out.push({
          changes: [`KL estimator ${k} (reference ${kl.kind})`],
          run: plain({ ...ref, kl: { ...kl, kind: k } }),
        });
  } else if (withKl && kl === null) {
    for (const k of ["k1", "k3"] as const)
      out.push({
        changes: [`a ${k} KL term, coefficient 0.04 (reference: none)`],
        run: plain({ ...ref, kl: { kind: k, coef: 0.04 } }),
      });
  }
  return out;
}

/** compareLosses' max loss and gradient relative differences of `ours × scale` from `theirs` (NaN: ∞). */
function relDiffs(
  ours: readonly CaseResult[],
  theirs: readonly CaseResult[],
  scale: number,
): { loss: number; grad: number } {
  let loss = 0;
  let grad = 0;
  ours.forEach((o, i) => {
    const t = theirs[i] as CaseResult;
    const g = scale === 1 ? o.grad : Array.from(o.grad, (x) => x * scale);
    const m = caseMetrics(o.loss * scale, g, t.loss, t.grad);
    loss = Math.max(loss, m.lossRel);
    grad = Math.max(grad, m.gradRel);
  });
  return { loss: Number.isNaN(loss) ? Infinity : loss, grad: Number.isNaN(grad) ? Infinity : grad };
}

/**
 * Search the configurations near `reference` for the one an implementation computes.
 *
 * Formula: for each candidate C (one change of aggregation/normaliser, ratio, clip, surrogate or
 * KL, or an aggregation change with one other), d(C) = max over cases of the loss and gradient
 * relative differences (compareLosses' metric) between the implementation and C, also after the
 * least-squares scale s = Σ f·c / Σ c² of the losses; a match is the candidate with the smallest d
 * within the tolerances (unscaled preferred).
 *
 * @param implementation - The implementation's result on each case, in `cases` order.
 * @param cases - The cases and the inputs the implementation was given.
 * @param reference - The reference config.
 * @param o - Tolerances, whether refLogprobs were passed (KL candidates).
 * @returns The diagnosis.
 * @derivation docs/testing.md#diagnosis
 * @enforcedBy test/testing/assertConforms.test.ts > assertConforms > conformance: token-mean for seq-mean-token-mean, a KL term with the wrong sign and a Dr.GRPO budget of the padded width fail with their diagnosis
 * @since 0.2.0
 */
export function nearestMatch(
  implementation: readonly CaseResult[],
  cases: readonly {
    readonly batch: { readonly shape: readonly [number, number] };
    readonly inputs: PolicyLossInputs;
  }[],
  reference: PolicyLossConfig,
  o: { readonly lossRtol: number; readonly gradRtol: number; readonly withKl: boolean },
): MismatchDiagnosis {
  const fn = "nearestMatch";
  const isObj = (x: unknown): boolean => typeof x === "object" && x !== null;
  requireArrayOf(
    fn,
    "implementation",
    implementation,
    "an array of case results {loss, gradLogprobs}",
    isObj,
  );
  requireArrayOf(fn, "cases", cases, "an array of cases {batch, inputs}", isObj);
  requireObject(fn, "reference", reference, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  requireObject(fn, "o", o, "{lossRtol, gradRtol, withKl}", ["lossRtol", "gradRtol", "withKl"]);
  const cands = candidatesOf(reference, o.withKl);
  const scored: (CandidateMatch & { readonly d: number; readonly ok: boolean })[] = [];
  for (const c of cands) {
    let results: CaseResult[];
    try {
      results = cases.map((x) => c.run(x.batch, x.inputs));
    } catch {
      continue; // the candidate does not apply to these cases (e.g. an invalid combination)
    }
    const raw = relDiffs(results, implementation, 1);
    let num = 0;
    let den = 0;
    implementation.forEach((f, i) => {
      const v = (results[i] as CaseResult).loss;
      num += f.loss * v;
      den += v * v;
    });
    const s = den > 0 ? num / den : 1;
    const scaled =
      Number.isFinite(s) && s !== 0 && s !== 1 ? relDiffs(results, implementation, s) : raw;
    const okRaw = raw.loss <= o.lossRtol && raw.grad <= o.gradRtol;
    const okScaled = scaled.loss <= o.lossRtol && scaled.grad <= o.gradRtol;
    const useScaled = !okRaw && okScaled;
    const pick = useScaled ? scaled : raw;
    scored.push({
      changes: c.changes,
      maxLossRelDiff: pick.loss,
      maxGradRelDiff: pick.grad,
      scale: useScaled ? s : 1,
      d: Math.max(pick.loss, pick.grad) + (useScaled ? 1e-300 : 0),
      ok: okRaw || okScaled,
    });
  }
  scored.sort((a, b) => Number(b.ok) - Number(a.ok) || a.d - b.d);
  const strip = ({ d: _d, ok: _ok, ...m }: (typeof scored)[number]): CandidateMatch => m;
  const best = scored[0];
  const match = best?.ok === true ? strip(best) : null;
  const nearest = scored.slice(0, 3).map(strip);
  const describe = (m: CandidateMatch) =>
    `${m.changes.join(" and ")}${m.scale === 1 ? "" : `, times ${fmt(m.scale)}`}`;
  const text =
    match !== null
      ? `diagnosis: the implementation matches the reference with ${describe(match)} (max loss rel diff ${pyExp(match.maxLossRelDiff, 3)}, max grad rel diff ${pyExp(match.maxGradRelDiff, 3)}; ${scored.length} candidates tried)`
      : `diagnosis: no configuration one change of aggregation, normaliser, ratio, clip, surrogate or KL away from the reference (or an aggregation change with one other) matches (${scored.length} candidates tried); nearest: ${nearest.map((m) => `${describe(m)} (max loss rel diff ${pyExp(m.maxLossRelDiff, 3)})`).join("; ")}`;
  return { match, nearest, candidates: scored.length, text };
}
