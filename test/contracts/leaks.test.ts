/**
 * Enforces docs/contracts.md#seeded-leaks: adapters that do not reduce to their parent at zero
 * coefficient are caught in fp32, fp16 and bf16 — the two partial-γ leaks by more than an order of
 * magnitude on the gradient, the 1e-3 coefficient floor by the bit-exact loss rule (and on the
 * gradient only in fp32) — and the documented margins are the ones this code measures.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { checkReduction } from "../../src/contracts/index.js";
import { FC_PARAMS } from "../_kit/index.js";
import {
  imageBatches,
  LEAKS,
  leakRows,
  leakyContract,
  REFERENCE_SEEDS,
  realisticBatch,
  tableRows,
} from "./_kit.js";

const PRECISIONS = ["fp32", "fp16", "bf16"] as const;
const CONTRACTS = ["papo_d_to_dapo", "papo_g_to_grpo"] as const;
const leak = (name: string) => LEAKS.find((l) => l.name === name) ?? LEAKS[0];

describe("leaks", () => {
  test("property: every seeded leak is caught in fp32, fp16 and bf16", () => {
    // On any batch whose logits depend on the image (|δ| ≥ 0.25 at every response token).
    fc.assert(
      fc.property(
        imageBatches(),
        fc.constantFrom(...LEAKS),
        fc.constantFrom(...CONTRACTS),
        fc.constantFrom(...PRECISIONS),
        (batch, l, name, precision) => {
          const r = checkReduction(leakyContract(name, l), batch, { precision });
          expect(r.verdict, `${l.name} ${name} ${precision}`).toBe("violated");
        },
      ),
      FC_PARAMS,
    );
  });

  test("golden: the partial-γ leaks exceed the gradient tolerance by more than 10x in fp32, fp16 and bf16", () => {
    for (const name of ["gamma_on_value_only", "gamma_on_part"]) {
      for (const contract of CONTRACTS) {
        for (const precision of PRECISIONS) {
          for (const seed of REFERENCE_SEEDS) {
            const r = checkReduction(leakyContract(contract, leak(name)), realisticBatch(seed), {
              precision,
            });
            expect(
              r.gradients[0].margin,
              `${name} ${contract} ${precision} ${seed}`,
            ).toBeGreaterThan(10);
          }
        }
      }
    }
    // The straight-through leak keeps the loss bitwise: only the gradient can see it.
    const st = checkReduction(
      leakyContract("papo_d_to_dapo", leak("gamma_on_value_only")),
      realisticBatch(0),
      {
        precision: "bf16",
      },
    );
    expect(st.loss.difference).toBe(0);
    expect(st.loss.holds).toBe(true);
  });

  test("golden: the 1e-3 coefficient floor is caught by the exact loss everywhere and by the gradient only in fp32", () => {
    for (const contract of CONTRACTS) {
      for (const seed of REFERENCE_SEEDS) {
        const run = (precision: (typeof PRECISIONS)[number]) =>
          checkReduction(leakyContract(contract, leak("coefficient_floor")), realisticBatch(seed), {
            precision,
          });
        const [fp32, fp16, bf16] = PRECISIONS.map(run);
        for (const r of [fp32, fp16, bf16]) {
          expect(r.loss.difference).not.toBe(0);
          expect(r.loss.holds).toBe(false);
          expect(r.verdict).toBe("violated");
        }
        // A 1e-3-relative gradient leak sits below bf16's (and near fp16's) own roundoff.
        expect(fp32.gradients[0].margin).toBeGreaterThan(10);
        expect(fp16.gradients[0].margin).toBeLessThan(10);
        expect(bf16.gradients[0].margin).toBeLessThan(1);
      }
    }
  });

  test("golden: the documented leak margins are the measured ones", () => {
    const doc = readFileSync(new URL("../../docs/contracts.md", import.meta.url), "utf8");
    expect(tableRows(doc, "leak-margins")).toEqual(leakRows());
  }, 120_000);
});
