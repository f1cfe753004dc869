/**
 * Text renderings of the contracts module's results for the CLI (pure: no I/O, no numerics).
 */
import type { ReductionCheck } from "./checkReduction.js";
import type { ReductionContract } from "./contract.js";

const g = (x: number): string => (x === 0 ? "0" : x.toPrecision(4));
const e = (x: number): string => (x === 0 ? "0" : x.toExponential(2));

/**
 * Render the registered contracts as one line each plus their condition and exactness.
 *
 * Formula: per contract, "name  summary" then "parameter = value (note); batch condition …;
 * loss bitwise|within tolerance, gradient bitwise|within tolerance".
 *
 * @param contracts - The contracts, in listing order (at least one).
 * @returns The text, one two-line block per contract, ending in a newline.
 * @throws Nothing: rendering never validates or computes.
 * @derivation docs/contracts.md#command-line
 * @enforcedBy test/contracts/cli.test.ts > contracts > golden: lists every registered reduction in text and json
 * @since 0.1.0
 */
export function renderContractsText(contracts: readonly ReductionContract[]): string {
  const w = Math.max(...contracts.map((c) => c.name.length));
  return `${contracts
    .map((c) => {
      const exact = `loss ${c.exact.loss ? "bitwise" : "within tolerance"}, gradient ${c.exact.gradient ? "bitwise" : "within tolerance"}`;
      const cond = c.condition === null ? "" : `; batch condition ${c.condition}`;
      return `${c.name.padEnd(w)}  ${c.summary}\n${" ".repeat(w)}  ${c.parameter.name} = ${c.parameter.value} (${c.parameter.note})${cond}; ${exact}`;
    })
    .join("\n")}\n`;
}

/**
 * Render a reduction check: the sides, the calibration, the loss and gradient comparisons and the
 * verdict.
 *
 * Formula: one line per item — parent, child, normLen, imposed, precision and calibration
 * (ρ̂, η̂, rtol, atol, G), loss (parent, child, difference, requirement, margin), one line per
 * gradient stream (max |Δ|, margin, worst position), then "verdict: holds|violated".
 *
 * @param check - The result of `checkReduction`.
 * @param contract - The contract that was checked.
 * @returns The report, ending in a newline.
 * @throws Nothing: rendering never validates or computes.
 * @derivation docs/contracts.md#command-line
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > golden: a policy-loss batch file holds and exits 0
 * @enforcedBy test/contracts/cli.test.ts > contract reduce > golden: a ratio above the 1e300 stand-in for ∞ breaks dual_clip_to_pg_clip and exits 1
 * @since 0.1.0
 */
export function renderReductionText(check: ReductionCheck, contract: ReductionContract): string {
  const c = check.calibration;
  const lines = [
    `contract ${contract.name}: ${contract.summary}`,
    `  parent     ${contract.parent.label}`,
    `  child      ${contract.child.label} at ${contract.parameter.name} = ${contract.parameter.value}`,
  ];
  if (check.normLen !== null)
    lines.push(`  normLen    ${check.normLen} (factor ${g(check.factor)})`);
  if (check.imposed.length > 0) lines.push(`  imposed    ${check.imposed.join("; ")}`);
  lines.push(
    `  precision  ${check.precision} (u = ${e(c.unitRoundoff)}); calibrated on the parent with seed ${c.seed}, ${c.pairs} pairs:`,
    `             measured roundoff ρ̂ = ${e(c.relativeRoundoff)}, η̂ = ${e(c.excessRoundoff)}; rtol ${e(c.rtol)}, atol ${e(c.atol)} (G = ${e(c.gradScale)})`,
  );
  const L = check.loss;
  const req = L.required === "exact" ? "required exactly 0" : `tolerance ${e(L.tolerance)}`;
  lines.push(
    `  loss       parent ${g(L.parent)}, child ${g(L.child)}, difference ${e(L.difference)} (${req}; margin ${e(L.margin)}) ${L.holds ? "ok" : "VIOLATED"}`,
  );
  for (const d of check.gradients) {
    const at =
      d.worst === null
        ? ""
        : ` at (${d.worst.row}, ${d.worst.col}): expected ${g(d.worst.expected)}, child ${g(d.worst.child)}`;
    lines.push(
      `  gradient   ${d.stream}: max |Δ| ${e(d.maxAbsDifference)}${d.bitwise ? " (bitwise)" : ""}, margin ${e(d.margin)} of rtol ${e(d.rtol)}, atol ${e(d.atol)}${at} ${d.holds ? "ok" : "VIOLATED"}`,
    );
  }
  lines.push(`verdict: ${check.verdict}`);
  return `${lines.join("\n")}\n`;
}
