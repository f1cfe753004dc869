/**
 * Parameter-list comparison for signature contracts: which parameters were added, removed,
 * renamed, changed in kind/default/annotation, and whether the surviving ones were reordered.
 */
import type { PythonParameter } from "./signature.js";

/** A parameter with its 0-based position in its list. */
export interface IndexedParameter extends PythonParameter {
  readonly index: number;
}

/** A parameter that kept its position, kind and default but changed its name. */
export interface ParameterRename {
  readonly from: string;
  readonly to: string;
  /** Position in the pinned list and in the checkout's list (0-based). */
  readonly pinnedIndex: number;
  readonly index: number;
}

/** A parameter that kept its name but changed its kind, default or annotation. */
export interface ParameterChange {
  readonly name: string;
  readonly pinned: PythonParameter;
  readonly checkout: PythonParameter;
}

/** The difference between a pinned and a current parameter list. */
export interface ParameterDiff {
  readonly added: readonly IndexedParameter[];
  readonly removed: readonly IndexedParameter[];
  readonly renamed: readonly ParameterRename[];
  readonly changed: readonly ParameterChange[];
  /** True when parameters present in both lists appear in a different relative order. */
  readonly reordered: boolean;
}

interface Slot {
  readonly p: PythonParameter;
  readonly index: number;
  /** Name of the nearest preceding parameter present in both lists ("" at the start). */
  readonly anchor: string;
  /** How many unmatched parameters precede this one since the anchor. */
  readonly offset: number;
}

function unmatched(list: readonly PythonParameter[], common: ReadonlySet<string>): Slot[] {
  const out: Slot[] = [];
  let anchor = "";
  let offset = 0;
  list.forEach((p, index) => {
    if (common.has(p.name)) {
      anchor = p.name;
      offset = 0;
    } else out.push({ p, index, anchor, offset: offset++ });
  });
  return out;
}

/**
 * Compare two parameter lists. Parameters are matched by name first; then an unmatched pinned
 * parameter and an unmatched current one at the same position (after the same surviving
 * neighbour, at the same offset) with the same kind and default are a rename. What is left is
 * removed (pinned only) or added (current only).
 *
 * @param pinned - The pinned parameter list.
 * @param current - The checkout's parameter list.
 * @returns Added and removed parameters with their indices, renames, changes and the reorder flag.
 * @derivation docs/conformance/drift.md#signature-contracts
 * @enforcedBy test/conformance/python/signatureDiff.test.ts > diffParameters > golden: a rename is recognised after an insertion before it
 * @enforcedBy test/conformance/python/signatureDiff.test.ts > diffParameters > golden: changed default or kind, and reordering
 * @since 0.1.0
 */
export function diffParameters(
  pinned: readonly PythonParameter[],
  current: readonly PythonParameter[],
): ParameterDiff {
  const currentNames = new Set(current.map((p) => p.name));
  const common = new Set(pinned.filter((p) => currentNames.has(p.name)).map((p) => p.name));
  const gone = unmatched(pinned, common);
  const fresh = unmatched(current, common);
  const renamed: ParameterRename[] = [];
  const used = new Set<Slot>();
  const removed: IndexedParameter[] = [];
  for (const g of gone) {
    const twin = fresh.find(
      (f) =>
        !used.has(f) &&
        f.anchor === g.anchor &&
        f.offset === g.offset &&
        f.p.kind === g.p.kind &&
        f.p.default === g.p.default,
    );
    if (twin === undefined) removed.push({ ...g.p, index: g.index });
    else {
      used.add(twin);
      renamed.push({ from: g.p.name, to: twin.p.name, pinnedIndex: g.index, index: twin.index });
    }
  }
  const added = fresh.filter((f) => !used.has(f)).map((f) => ({ ...f.p, index: f.index }));
  const byName = new Map(current.map((p) => [p.name, p]));
  const changed: ParameterChange[] = [];
  for (const p of pinned) {
    const c = byName.get(p.name);
    if (c === undefined) continue;
    if (c.kind !== p.kind || c.default !== p.default || c.annotation !== p.annotation)
      changed.push({ name: p.name, pinned: p, checkout: c });
  }
  const orderPinned = pinned.filter((p) => common.has(p.name)).map((p) => p.name);
  const orderCurrent = current.filter((p) => common.has(p.name)).map((p) => p.name);
  const reordered = orderPinned.some((n, i) => orderCurrent[i] !== n);
  return { added, removed, renamed, changed, reordered };
}

/**
 * Spell a parameter as Python does: `*args`, `**kw`, `name=default`, `name: ann = default`.
 *
 * @param p - The parameter.
 * @returns Its source spelling.
 * @derivation docs/conformance/drift.md#reports-and-exit-codes
 * @enforcedBy test/conformance/python/signatureDiff.test.ts > diffParameters > golden: Python spelling of parameters
 * @since 0.1.0
 */
export function formatParameter(p: PythonParameter): string {
  const star = p.kind === "var_positional" ? "*" : p.kind === "var_keyword" ? "**" : "";
  const ann = p.annotation === null ? "" : `: ${p.annotation}`;
  const def = p.default === null ? "" : ann === "" ? `=${p.default}` : ` = ${p.default}`;
  return `${star}${p.name}${ann}${def}`;
}
