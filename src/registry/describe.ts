/**
 * Plain-text rendering of a registered algorithm: one fact per line, in polgrad's line order, with
 * polgrad's Python reprs for the constants (`10.0`, `1e-08`, `None`, `GroupNormConfig(…)`) and
 * snake_case wire names (docs/derivations/variants.md#describe-format).
 */
import { Aggregation } from "../aggregate/aggregation.js";
import { pyValue } from "../core/pyRepr.js";
import {
  fieldTexts,
  type ObjectSpec,
  POLICY_LOSS_FIELDS,
  type PolicyLossField,
  type ValueSpec,
} from "../losses/config.js";
import { getAlgorithm } from "./registry.js";
import type { AlgorithmSpec } from "./spec.js";

/** A constant as polgrad's describe() prints it: Python's repr (`0.2`, `10.0`, `1e-08`, `None`). */
function fmt(x: unknown): string {
  return pyValue(x);
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Keys whose values polgrad holds as Python ints. */
const INT_KEYS = new Set(["normLen"]);

function fmtConfig(config: object | null): string {
  if (config === null) return "None";
  return Object.entries(config)
    .map(([k, v]) => `${snake(k)}=${pyValue(v, INT_KEYS.has(k))}`)
    .join(", ");
}

/**
 * One of our fields in describe's words: a settings object as `key=value, …` with Python reprs
 * (the wire keys of the field table), a list item by item, a scalar as its repr; the top-entropy
 * mask and the ratio clamp with what they do.
 */
function describeWords(key: PolicyLossField, loss: AlgorithmSpec["loss"]): string {
  const v: unknown = loss[key];
  if (key === "topEntropyQuantile")
    return `${fmt(v)} (the policy term keeps the top-entropy tokens only)`;
  if (key === "ratioClamp") {
    const rc = v as NonNullable<AlgorithmSpec["loss"]["ratioClamp"]>;
    return `${rc.level}-level log-ratio in [${fmt(rc.lower ?? null)}, ${fmt(rc.upper ?? null)}]${rc.signAware === true ? ", sign-aware (the bound on the side of A's sign)" : ""}`;
  }
  const spec = POLICY_LOSS_FIELDS[key].value as ValueSpec;
  const obj = (o: Readonly<Record<string, unknown>>, fields: ObjectSpec["fields"]): string =>
    Object.entries(fields)
      .filter(([k]) => o[k] !== undefined)
      .map(([k, f]) => `${f.snake}=${pyValue(o[k], INT_KEYS.has(k))}`)
      .join(", ");
  if (spec.kind === "object") return obj(v as Readonly<Record<string, unknown>>, spec.fields);
  if (spec.kind === "list")
    return (v as readonly Readonly<Record<string, unknown>>[])
      .map((x) => `(${obj(x, spec.item.fields)})`)
      .join(", ");
  return fmt(v);
}

/** polgrad's advantage config dataclasses, by estimator family. */
const ADVANTAGE_CLASS: Readonly<Record<string, string>> = {
  grpo: "GroupNormConfig",
  gae: "GAEConfig",
  reinforce_pp: "ReinforcePPConfig",
};

function render(spec: AlgorithmSpec): string {
  const loss = spec.loss;
  const lines = [`${spec.name}: ${loss.surrogate} surrogate on ${loss.ratio} ratio`];
  const clip = loss.clip;
  lines.push(
    clip === null
      ? "clip: none"
      : `clip: eps_low=${fmt(clip.epsLow)}, eps_high=${fmt(clip.epsHigh)}, ratio_cap=${fmt(clip.ratioCap)}`,
  );
  // Ours (polgrad 0.2.0 has none of them): each field of the table that says something, in the
  // table's order, as a `<wire key>: <words>` line.
  for (const f of fieldTexts(loss)) {
    if (!POLICY_LOSS_FIELDS[f.key].polgrad) lines.push(`${f.snake}: ${describeWords(f.key, loss)}`);
  }
  const normLen = loss.normLen ?? null;
  if (loss.aggregation === Aggregation.TOKEN_SUM_NORM) {
    lines.push(`aggregation: ${loss.aggregation} (norm_len=${pyValue(normLen, true)})`);
    if (normLen === null) {
      lines.push(
        "norm_len is None: set it to the generation budget before calling policyLoss, which " +
          "throws ConfigError until then ({ ...spec.loss, normLen: <generation budget> } in " +
          'TypeScript, or "norm_len" in the CLI config JSON)',
      );
    }
  } else {
    lines.push(`aggregation: ${loss.aggregation}`);
  }
  const lossKl = loss.kl ?? null;
  if (spec.klPlacement === "loss" && lossKl !== null) {
    const agg = lossKl.aggregation ?? `${loss.aggregation} (inherited)`;
    lines.push(`kl: as-loss, ${lossKl.kind}, coef=${fmt(lossKl.coef)}, aggregation=${agg}`);
  } else if (spec.klPlacement === "reward" && spec.klReward !== null) {
    lines.push(
      `kl: in-reward, ${spec.klReward.kind}, coef=${fmt(spec.klReward.coef)} ` +
        "(apply via klInReward before advantage estimation)",
    );
  } else {
    lines.push("kl: none");
  }
  const tis = loss.isCorrection ?? null;
  if (tis !== null) {
    const extra = [
      tis.lower === undefined || tis.lower === null ? "" : `, lower=${fmt(tis.lower)}`,
      tis.mode === "mask" ? ", mode=mask" : "",
      tis.logClamp === undefined || tis.logClamp === null ? "" : `, log_clamp=${fmt(tis.logClamp)}`,
      tis.rowMask === undefined || tis.rowMask === null
        ? ""
        : `, row_mask=${tis.rowMask.level} [${fmt(tis.rowMask.lower ?? null)}, ${fmt(tis.rowMask.cap)}]`,
    ].join("");
    lines.push(`is_correction: TIS, ${tis.level}-level, cap=${fmt(tis.cap)}${extra}`);
  }
  if (spec.papo !== undefined) {
    for (const form of ["official", "trl"] as const) {
      const c = spec.papo[form];
      lines.push(
        `extension: PAPO (${form} form), perception gamma=${fmt(c.perception.gamma)}, clip=${fmt(c.perception.clip)}, double entropy ${c.doubleEntropy === null ? "none" : `eta1=${fmt(c.doubleEntropy.eta1)}, eta2=${fmt(c.doubleEntropy.eta2)}`}`,
      );
    }
  }
  const cls = ADVANTAGE_CLASS[spec.advantage];
  lines.push(
    `advantage: ${spec.advantage} (${spec.advantageConfig === null || cls === undefined ? "None" : `${cls}(${fmtConfig(spec.advantageConfig)})`})`,
  );
  const source =
    spec.citation.arxiv !== null ? `arXiv ${spec.citation.arxiv}` : String(spec.citation.url);
  lines.push(`citation: ${spec.citation.title} (${source})`);
  lines.push(`notes: ${spec.notes}`);
  return lines.join("\n");
}

/**
 * Describe a registered algorithm in plain text, one fact per line: surrogate and ratio; clip
 * bounds; aggregation (plus, when a token_sum_norm entry ships `normLen` null, how to set it);
 * the KL placement with estimator and coefficient; the TIS correction if any; the advantage
 * estimator and its config; the citation; the notes. Constants print as polgrad prints them, in
 * Python's repr (`cap=10.0`, `eps=1e-08`, `ratio_cap=None`, `GroupNormConfig(center=True,
 * scale='std', eps=0.0001, unbiased=True)`); mode values and config keys are snake_case wire names.
 *
 * @param name - The registry key, one of `ALGORITHM_NAMES`.
 * @returns 7 to 9 newline-joined lines; meant for people, not for parsing.
 * @throws {UnknownNameError} E_UNKNOWN_NAME when `name` is not registered.
 * @derivation docs/derivations/variants.md#describe-format
 * @enforcedBy test/registry/describeAlgorithm.test.ts > describeAlgorithm > golden: grpo renders seven lines in polgrad's order
 * @enforcedBy test/registry/describeAlgorithm.test.ts > describeAlgorithm > property: every entry states its aggregation, clip, kl, advantage, citation and notes
 * @enforcedBy test/registry/describeAlgorithm.test.ts > describeAlgorithm > golden: dr_grpo states norm_len None and how to set it
 * @enforcedBy test/registry/describeAlgorithm.test.ts > describeAlgorithm > rejects: an unknown name
 * @since 0.1.0
 */
export function describeAlgorithm(name: string): string {
  return render(getAlgorithm(name));
}
