/**
 * Text reports of the checks on a user's run (docs/contracts.md#checking-a-reduction-on-a-run and
 * docs/contracts.md#liveness-on-a-run): both verdicts of an observed reduction with the deciding
 * one marked, and the batches a liveness probe read.
 */
import { safeText } from "../core/message.js";
import type { ReductionContract } from "./contract.js";
import type { ObservedPosition, ObservedReductionCheck } from "./observed.js";

const g = (x: number): string =>
  x === 0 ? "0" : Math.abs(x) >= 1e-3 && Math.abs(x) < 1e4 ? x.toPrecision(4) : x.toExponential(3);

function at(w: ObservedPosition | null): string {
  return w === null
    ? ""
    : ` at [${w.position.join(", ")}] (parent ${g(w.parent)}, child ${g(w.child)})`;
}

/**
 * Render an observed reduction check as text.
 *
 * Formula: one line per rule — loss, the authors' gradient rule (norm reading) with the
 * elementwise reading beside it, our calibrated tolerance — then the two verdicts and the
 * deciding one.
 *
 * @param check - The result of checkObservedReduction.
 * @param contract - The contract checked (for its summary line).
 * @returns The report, ending in `verdict: holds|violated (decided by …)` and a newline.
 * @throws Nothing.
 * @derivation docs/contracts.md#checking-a-reduction-on-a-run
 * @enforcedBy test/contracts/observed.test.ts > contract reduce --observed > golden: a clean bf16 dump exits 0 and a seeded leak exits 1 at both tolerance sets
 * @internal
 * @since 0.1.0
 */
export function renderObservedText(
  check: ObservedReductionCheck,
  contract: ReductionContract,
): string {
  const a = check.authors;
  const c = check.calibrated;
  const l = check.loss;
  const lines = [
    `contract ${check.contract}: ${safeText(contract.summary)}`,
    `observed   shape [${check.shape.join(", ")}], ${check.compared} positions compared, precision ${check.precision}`,
    l.given
      ? `loss       parent ${g(l.parent as number)}, child ${g(l.child as number)}: ${l.required === "exact" ? (l.holds ? "equal (required bit-exactly)" : "DIFFERENT (required bit-exactly)") : "not required"}`
      : "loss       not dumped: the loss rule is not checked",
    `authors    ‖Δ‖₂ / max(‖parent‖₂, ${a.absFloor}) = ${g(a.relative)} (limit ${a.relTol}): ${a.holds ? "within" : "EXCEEDED"}  [‖Δ‖₂ ${g(a.differenceNorm)}, ‖parent‖₂ ${g(a.parentNorm)}]`,
    `           elementwise reading max |Δ_i| / max(|p_i|, ${a.absFloor}) = ${g(a.elementwise.relative)}${at(a.elementwise.worst)} (labelled figure; does not decide)`,
    `calibrated ${c.basis === "batch" ? "on the batch" : "floors only (no --batch)"}: rtol ${g(c.rtol)}, atol ${g(c.atol)}; margin ${g(c.margin)}${at(c.worst)}: ${c.holds ? "within" : "EXCEEDED"}`,
    `authors' rule: ${a.verdict}`,
    `calibrated:    ${c.verdict}`,
    `verdict: ${check.verdict} (decided by ${check.decidedBy === "authors" ? "the authors' rule" : "our calibrated tolerance"})`,
  ];
  return `${lines.join("\n")}\n`;
}
