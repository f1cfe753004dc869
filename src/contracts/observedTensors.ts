/**
 * The named tensors of a run's dump, as an {@link ObservedReduction} (docs/contracts.md#observed-dumps):
 * `parent_grad`, `child_grad`, optional `parent_loss`, `child_loss` and `response_mask`. It takes
 * tensors already read (any format the file readers know, bf16 included, upcast to float64), not
 * files, so contracts/ still reads no files; the structural type below is what a reader returns.
 */
import { mustBe, safeText } from "../core/message.js";
import { closestNames } from "../core/names.js";
import { describeInput, requireObject, requireString } from "../core/validate.js";
import { ConfigError, fail, IoError } from "../errors.js";
import type { PolicyLossInputs } from "../losses/policyLoss.js";
import type { ObservedReduction } from "./observed.js";

/** One named tensor as the readers return it (values upcast to float64 or bytes). */
export interface ObservedTensor {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data: ArrayLike<number>;
}

/** The tensor names a dump may hold, in documentation order. */
export const OBSERVED_TENSOR_NAMES: readonly string[] = Object.freeze([
  "parent_grad",
  "child_grad",
  "parent_loss",
  "child_loss",
  "response_mask",
]);

const FLOATS = ["F64", "F32", "BF16", "F16"];

function bad(path: string, name: string, rule: string, got: string): IoError {
  const fn = "observedFromTensors";
  return new IoError(fn, name, `${mustBe(fn, name, rule, got)} (in ${safeText(path)})`, path);
}

function scalar(path: string, name: string, t: ObservedTensor | undefined): number | null {
  if (t === undefined) return null;
  if (!FLOATS.includes(t.dtype))
    throw bad(path, name, `a float dtype (${FLOATS.join(", ")})`, `dtype ${t.dtype}`);
  if (t.data.length !== 1)
    throw bad(path, name, "one value (shape [] or [1])", `shape [${t.shape}]`);
  return t.data[0] as number;
}

/**
 * Map a dump's named tensors to an observed reduction.
 *
 * Format: `parent_grad` and `child_grad` (float, any equal shape; required); `parent_loss` and
 * `child_loss` (float, one value each; both or neither); `response_mask` (the gradients' shape,
 * values 0/1, any dtype; optional). Any other name is rejected (with the closest known name).
 *
 * @param set - The tensors of one file (`path` for messages, `tensors` by name).
 * @param batch - The batch to calibrate on, or null.
 * @returns The observed reduction (gradients and mask share the tensors' arrays).
 * @throws {IoError} E_IO for a missing gradient, an unknown name, a wrong dtype or a shape mismatch.
 * @derivation docs/contracts.md#observed-dumps
 * @enforcedBy test/contracts/observed.test.ts > observedFromTensors > rejects: an unknown name, a missing gradient, a shape mismatch and an integer gradient
 * @enforcedBy test/contracts/observed.test.ts > contract reduce --observed > golden: a clean bf16 dump exits 0 and a seeded leak exits 1 at both tolerance sets
 * @since 0.1.0
 */
export function observedFromTensors(
  set: { readonly path: string; readonly tensors: ReadonlyMap<string, ObservedTensor> },
  batch: PolicyLossInputs | null = null,
): ObservedReduction {
  requireObject("observedFromTensors", "set", set, "a TensorSet {path, tensors}", [
    "path",
    "tensors",
  ]);
  requireString("observedFromTensors", "set.path", set.path);
  if (!(set.tensors instanceof Map))
    throw fail(
      ConfigError,
      "observedFromTensors",
      "set.tensors",
      "a Map of tensor name → tensor",
      describeInput(set.tensors),
    );
  if (batch !== null)
    requireObject("observedFromTensors", "batch", batch, "PolicyLossInputs or null");
  const path = set.path;
  for (const name of set.tensors.keys()) {
    if (OBSERVED_TENSOR_NAMES.includes(name)) continue;
    const near = closestNames(name, OBSERVED_TENSOR_NAMES);
    const hint = near.length > 0 ? ` (did you mean ${near.map((x) => `'${x}'`).join(", ")}?)` : "";
    throw bad(
      path,
      safeText(name, 80),
      `one of ${OBSERVED_TENSOR_NAMES.join(", ")}`,
      `an unknown tensor${hint}`,
    );
  }
  const grad = (name: string): ObservedTensor => {
    const t = set.tensors.get(name);
    if (t === undefined) throw bad(path, name, "present (the run's dumped gradient)", "missing");
    if (!FLOATS.includes(t.dtype))
      throw bad(path, name, `a float dtype (${FLOATS.join(", ")})`, `dtype ${t.dtype}`);
    return t;
  };
  const p = grad("parent_grad");
  const c = grad("child_grad");
  const same = (a: readonly number[], b: readonly number[]): boolean =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same(p.shape, c.shape))
    throw bad(path, "child_grad", `the shape of parent_grad [${p.shape}]`, `shape [${c.shape}]`);
  const m = set.tensors.get("response_mask");
  if (m !== undefined && !same(m.shape, p.shape))
    throw bad(path, "response_mask", `the shape of parent_grad [${p.shape}]`, `shape [${m.shape}]`);
  const shape = p.shape.length === 0 ? [1] : p.shape;
  return {
    shape,
    parentGrad: p.data,
    childGrad: c.data,
    parentLoss: scalar(path, "parent_loss", set.tensors.get("parent_loss")),
    childLoss: scalar(path, "child_loss", set.tensors.get("child_loss")),
    responseMask: m === undefined ? null : m.data,
    batch,
  };
}
