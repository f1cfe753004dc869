import { requireObject } from "../core/validate.js";
import { type PolicyLossConfig, SURROGATE_SETTING_FIELDS } from "../losses/config.js";
import { validatePolicyLossConfig } from "../losses/configValidate.js";
import {
  type ExtendedSurrogateParams,
  SURROGATES,
  surrogateParams,
} from "../losses/kernel/points.js";
import { type PolicyLossInputs, policyLoss } from "../losses/policyLoss.js";
import type { DrawnBatch } from "./draw.js";
import { type GradcheckOptions, type GradcheckReport, gradcheck } from "./gradcheck.js";

/** Require a PolicyLossConfig and a DrawnBatch (drawBatch's result) at a public entry. */
function checkConfigBatch(fn: string, config: unknown, batch: unknown, arg = "batch"): void {
  requireObject(fn, "config", config, "a PolicyLossConfig", ["ratio", "surrogate", "aggregation"]);
  requireObject(fn, arg, batch, "a DrawnBatch (drawBatch)", [
    "logprobs",
    "oldLogprobs",
    "advantages",
    "responseMask",
  ]);
}

/**
 * The policy-loss inputs a config needs, from a drawn batch (ref only with KL, rollout only with TIS).
 * @derivation docs/derivations/verify.md#gradcheck
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheckLoss > golden: every registry algorithm passes on branch-safe draws
 */
export function inputsFor(config: PolicyLossConfig, batch: DrawnBatch): PolicyLossInputs {
  checkConfigBatch("inputsFor", config, batch);
  return {
    logprobs: batch.logprobs,
    oldLogprobs: batch.oldLogprobs,
    advantages: batch.advantages,
    responseMask: batch.responseMask,
    refLogprobs: config.kl ? batch.refLogprobs : null,
    rolloutLogprobs: config.isCorrection ? batch.rolloutLogprobs : null,
    entropies:
      config.topEntropyQuantile != null || config.entropyBonus != null ? batch.entropies : null,
  };
}

/** Every surrogate's settings block cleared (the field table's owned fields), for a config whose surrogate changes. */
const NO_SURROGATE_SETTINGS: Partial<PolicyLossConfig> = Object.fromEntries(
  SURROGATE_SETTING_FIELDS.map((k) => [k, null]),
);

/** The config as REINFORCE on the token ratio: no clip, no surrogate settings (frozen advantages carry the rest). */
function asReinforce(config: PolicyLossConfig): PolicyLossConfig {
  return {
    ...config,
    ratio: "token",
    surrogate: "reinforce",
    clip: null,
    ...NO_SURROGATE_SETTINGS,
  };
}

/** Per-token surrogate ratio: e^z (token) or the row's e^{mean z} (sequence kinds). */
function surrogateRatios(config: PolicyLossConfig, batch: DrawnBatch): number[][] {
  const r = policyLoss(
    {
      ...config,
      surrogate: "pg",
      clip: null,
      isCorrection: null,
      kl: null,
      ...NO_SURROGATE_SETTINGS,
    },
    inputsFor({ ...config, isCorrection: null, kl: null }, batch),
  ).ratio;
  return batch.responseMask.map((row, b) => row.map((_, t) => r.data[b * r.cols + t] as number));
}

/**
 * Distance of a batch to the nearest kink of a policy-loss config: the surrogate ratios' distance
 * to the clip edges 1 − ε_lo, 1 + ε_hi and the dual-clip cap (pg_clip, cispo), and |ref − lp| for
 * an abs KL term. Infinity for a smooth config.
 *
 * @param config - The policy-loss config.
 * @param batch - A drawn batch.
 * @returns The smallest distance over response positions.
 * @derivation docs/derivations/verify.md#gradcheck
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheckLoss > golden: every registry algorithm passes on branch-safe draws
 * @since 0.1.0
 */
export function policyKinkDistance(config: PolicyLossConfig, batch: DrawnBatch): number {
  checkConfigBatch("policyKinkDistance", config, batch);
  let d = Number.POSITIVE_INFINITY;
  const edges: number[] = [];
  const clip = config.clip;
  if (clip && (config.surrogate === "pg_clip" || config.surrogate === "cispo")) {
    if (clip.epsLow != null) edges.push(1 - clip.epsLow);
    if (clip.epsHigh != null) edges.push(1 + clip.epsHigh);
    if (clip.ratioCap != null) edges.push(clip.ratioCap);
  }
  if (config.surrogate === "cispo" && config.cispo != null) edges.push(config.cispo.cap);
  const r = edges.length > 0 ? surrogateRatios(config, batch) : null;
  // The log-ratio clamp's bounds (on z_t at token level, on the row's mean z at row level), and
  // DPPO's trust-region edges and truncation: kinks of the loss in lp.
  const entry = SURROGATES[config.surrogate];
  const params = surrogateParams(validatePolicyLossConfig("policyKinkDistance", config));
  const rc = config.ratioClamp ?? null;
  const bounds = rc === null ? [] : [rc.lower, rc.upper].filter((x): x is number => x != null);
  const z = (b: number, t: number): number =>
    ((batch.logprobs[b] as number[])[t] as number) -
    ((batch.oldLogprobs[b] as number[])[t] as number);
  batch.responseMask.forEach((row, b) => {
    if (rc?.level === "row") {
      const ts = row.flatMap((on, t) => (on ? [t] : []));
      const mean = ts.reduce((s, t) => s + z(b, t), 0) / ts.length;
      for (const e of bounds) d = Math.min(d, Math.abs(mean - e));
    }
    row.forEach((on, t) => {
      if (!on) return;
      if (rc?.level === "token") for (const e of bounds) d = Math.min(d, Math.abs(z(b, t) - e));
      if (entry.kink !== undefined) {
        // The surrogate's own kinks (DPPO's trust region and truncation, IPO's edge).
        const lp = (batch.logprobs[b] as number[])[t] as number;
        const od = (batch.oldLogprobs[b] as number[])[t] as number;
        d = Math.min(d, entry.kink(lp, od, params as ExtendedSurrogateParams));
      }
      if (r !== null)
        for (const e of edges) d = Math.min(d, Math.abs(((r[b] as number[])[t] as number) - e));
      if (config.kl?.kind === "abs") {
        d = Math.min(
          d,
          Math.abs(
            ((batch.refLogprobs[b] as number[])[t] as number) -
              ((batch.logprobs[b] as number[])[t] as number),
          ),
        );
      }
    });
  });
  return d;
}

/**
 * The stop-gradient-free equivalent of a config at a base point lp₀: a config and batch whose loss
 * has the same gradient at lp₀ and no sg[·], so finite differences can check it.
 * cispo → reinforce on advantages sg[ŵ(lp₀)]·A; a surrogate that holds a coefficient constant
 * (its entry's `detached`) → reinforce on advantages A·sg[coef]
 * at lp₀; sequence_token → token ratio against old' = lp₀ − log s(lp₀) (rollout shifted alike so
 * the TIS weight is unchanged; a row whose row clamp binds gets advantages 0); else unchanged.
 *
 * @param config - The policy-loss config.
 * @param base - The base batch (lp₀).
 * @returns The frozen config and batch.
 * @derivation docs/derivations/verify.md#gradcheck
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheckLoss > golden: every registry algorithm passes on branch-safe draws
 * @since 0.1.0
 */
export function sgFrozenEquivalent(
  config: PolicyLossConfig,
  base: DrawnBatch,
): { config: PolicyLossConfig; batch: DrawnBatch } {
  checkConfigBatch("sgFrozenEquivalent", config, base, "base");
  const m = base.responseMask;
  if (SURROGATES[config.surrogate].detached === true) {
    // sg[min(r, C)]·valid (DPPO) and sg[φ] (VESPO) are data: REINFORCE on the token advantages
    // A·coef at lp₀, read off the objective −A·coef·lp (lp < 0 at every drawn position).
    const obj = policyLoss(config, inputsFor(config, base)).perTokenObjective;
    return {
      config: { ...asReinforce(config), ratioClamp: null },
      batch: {
        ...base,
        advantages: m.map((row, b) =>
          row.map((on, t) =>
            on
              ? -(obj.data[b * obj.cols + t] as number) /
                ((base.logprobs[b] as number[])[t] as number)
              : 123,
          ),
        ),
      },
    };
  }
  if (config.surrogate === "cispo" && (config.clip || config.cispo != null)) {
    const r = surrogateRatios(config, base);
    const hi = config.cispo != null ? config.cispo.cap : 1 + (config.clip?.epsHigh as number);
    const lo = config.clip?.epsLow == null ? null : 1 - config.clip.epsLow;
    const w = (x: number): number => (x > hi ? hi : lo !== null && x < lo ? lo : x);
    return {
      config: asReinforce(config),
      batch: {
        ...base,
        advantages: m.map((row, b) =>
          row.map((on, t) =>
            on
              ? w((r[b] as number[])[t] as number) * ((base.advantages[b] as number[])[t] as number)
              : 123,
          ),
        ),
      },
    };
  }
  if (config.ratio === "sequence_token") {
    const r = surrogateRatios(config, base);
    // A binding row clamp passes no gradient to the row's surrogate: its frozen advantages are 0.
    const rc = config.ratioClamp ?? null;
    const binds = (b: number): boolean => {
      if (rc === null || rc.level !== "row") return false;
      const ts = (m[b] as boolean[]).flatMap((on, t) => (on ? [t] : []));
      const mean =
        ts.reduce(
          (s, t) =>
            s +
            ((base.logprobs[b] as number[])[t] as number) -
            ((base.oldLogprobs[b] as number[])[t] as number),
          0,
        ) / ts.length;
      return (
        mean < (rc.lower ?? Number.NEGATIVE_INFINITY) ||
        mean > (rc.upper ?? Number.POSITIVE_INFINITY)
      );
    };
    const shift = (b: number, t: number): number =>
      ((base.logprobs[b] as number[])[t] as number) -
      Math.log((r[b] as number[])[t] as number) -
      ((base.oldLogprobs[b] as number[])[t] as number);
    const shifted = (x: number[][]): number[][] =>
      m.map((row, b) =>
        row.map((on, t) => (on ? ((x[b] as number[])[t] as number) + shift(b, t) : 123)),
      );
    return {
      config: { ...config, ratio: "token", ratioClamp: null },
      batch: {
        ...base,
        oldLogprobs: shifted(base.oldLogprobs),
        rolloutLogprobs: shifted(base.rolloutLogprobs),
        advantages: m.map((row, b) =>
          row.map((_, t) => (binds(b) ? 0 : ((base.advantages[b] as number[])[t] as number))),
        ),
      },
    };
  }
  return { config, batch: base };
}

/**
 * Gradcheck a policy-loss config: polgrad's closed-form gradient at lp₀ against central finite
 * differences of the config's sg-frozen equivalent, on seeded ragged batches drawn at least
 * `margin` from every kink.
 *
 * Formula: as {@link gradcheck}, with fn = (batch, base) ↦ { value: policyLoss(frozen(base), batch).loss,
 * grad: policyLoss(config, base).gradLogprobs }.
 * Gradient / stop-gradient: the frozen equivalent removes every sg[·] while keeping the gradient at lp₀.
 *
 * @param config - The policy-loss config (validated by policyLoss).
 * @param options - gradcheck options (shapes, seed, replay, tolerances, margin).
 * @returns The report when every case passes.
 * @throws {VerificationError} E_VERIFY with the replay seed on a mismatch.
 * @throws {ConfigError} E_CONFIG (and the other policyLoss errors) for an invalid config.
 * @derivation docs/derivations/verify.md#gradcheck
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheckLoss > golden: every registry algorithm passes on branch-safe draws
 * @enforcedBy test/verify/gradcheck.test.ts > gradcheckLoss > property: every valid ratio × surrogate × aggregation passes, with tis and kl
 * @since 0.1.0
 */
export function gradcheckLoss(
  config: PolicyLossConfig,
  options: GradcheckOptions = {},
): GradcheckReport {
  requireObject("gradcheckLoss", "config", config, "a PolicyLossConfig", [
    "ratio",
    "surrogate",
    "aggregation",
  ]);
  let frozenFor: DrawnBatch | null = null;
  let frozen: { config: PolicyLossConfig; batch: DrawnBatch } | null = null;
  return gradcheck(
    (batch, base) => {
      if (frozenFor !== base) {
        frozenFor = base;
        frozen = sgFrozenEquivalent(config, base);
      }
      const f = frozen as { config: PolicyLossConfig; batch: DrawnBatch };
      const value = policyLoss(
        f.config,
        inputsFor(f.config, { ...f.batch, logprobs: batch.logprobs }),
      ).loss;
      const grad =
        batch === base
          ? policyLoss(config, inputsFor(config, base)).gradLogprobs
          : { rows: 0, cols: 0, data: new Float64Array(0) };
      return { value, grad };
    },
    {
      kinkDistance: (b) => policyKinkDistance(config, b),
      label: `policyLoss(${config.surrogate}, ${config.ratio}, ${config.aggregation})`,
      ...options,
    },
  );
}
