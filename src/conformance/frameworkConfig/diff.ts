/**
 * What changed in a loss between two configs or two releases (`polgrad explain --diff A B`): the
 * loss-relevant settings whose values differ, the algebra components whose text differs, the
 * nearest algorithm, and the loss on one batch (docs/conformance/explain.md#diff). Browser-safe.
 */

import { requireObject } from "../../core/validate.js";
import type { RecordedValue } from "../releases/types.js";
import type { Explanation } from "./explain.js";
import { checkResolution } from "./resolution.js";

/** A diff of two explanations. */
export interface ConfigDiff {
  readonly a: { readonly label: string; readonly ref: string };
  readonly b: { readonly label: string; readonly ref: string };
  /** Settings whose value differs (undefined: not defined on that side). */
  readonly settings: readonly {
    readonly key: string;
    readonly a: RecordedValue | undefined;
    readonly b: RecordedValue | undefined;
  }[];
  /** Algebra components whose description differs (null: absent on that side). */
  readonly algebra: readonly {
    readonly component: string;
    readonly a: string | null;
    readonly b: string | null;
  }[];
  readonly nearest: { readonly a: string; readonly b: string };
  /** The loss of both on one batch, when evaluated. */
  readonly loss: { readonly batch: string; readonly a: number; readonly b: number } | null;
}

/**
 * Compare two explanations.
 *
 * Formula: settings = {k : value_a(k) ≠ value_b(k)} (JSON equality), algebra = {c : text_a(c) ≠ text_b(c)}.
 *
 * @param a - The first (e.g. the older release).
 * @param b - The second.
 * @param labels - How each side is named (a release ref or a file name).
 * @param loss - Both losses on one batch, or null.
 * @returns The diff.
 * @derivation docs/conformance/explain.md#diff
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > diffExplanations > golden: TRL v0.19.0 → v1.9.0 changes the default loss_type and the aggregation
 * @since 0.2.0
 */
export function diffExplanations(
  a: Explanation,
  b: Explanation,
  labels: { readonly a: string; readonly b: string },
  loss: { readonly batch: string; readonly a: number; readonly b: number } | null = null,
): ConfigDiff {
  const fn = "diffExplanations";
  for (const [arg, x] of [
    ["a", a],
    ["b", b],
  ] as const) {
    requireObject(fn, arg, x, "an Explanation (explainResolution)", ["resolution"]);
    checkResolution(fn, `${arg}.resolution`, x.resolution);
  }
  requireObject(fn, "labels", labels, "{a, b}", ["a", "b"]);
  if (loss !== null) requireObject(fn, "loss", loss, "{batch, a, b} or null", ["batch", "a", "b"]);
  const sa = new Map(a.resolution.settings.map((s) => [s.key, s.value]));
  const sb = new Map(b.resolution.settings.map((s) => [s.key, s.value]));
  const keys = [...new Set([...sa.keys(), ...sb.keys()])];
  const settings = keys
    .filter((k) => JSON.stringify(sa.get(k)) !== JSON.stringify(sb.get(k)))
    .map((k) => ({ key: k, a: sa.get(k), b: sb.get(k) }));
  const aa = new Map(a.resolution.algebra.map((x) => [x.component, x.text]));
  const ab = new Map(b.resolution.algebra.map((x) => [x.component, x.text]));
  aa.set("batch", a.resolution.plan.batchMeaning);
  ab.set("batch", b.resolution.plan.batchMeaning);
  const comps = [...new Set([...aa.keys(), ...ab.keys()])];
  const algebra = comps
    .filter((c) => aa.get(c) !== ab.get(c))
    .map((c) => ({ component: c, a: aa.get(c) ?? null, b: ab.get(c) ?? null }));
  return {
    a: { label: labels.a, ref: a.resolution.ref },
    b: { label: labels.b, ref: b.resolution.ref },
    settings,
    algebra,
    nearest: { a: a.nearest.name, b: b.nearest.name },
    loss,
  };
}
