/** Enforces docs/derivations/verify.md#gradcheck: the public finite-difference checks. */
import { describe, expect, test } from "vitest";
import {
  ALGORITHMS,
  type PolicyLossConfig,
  policyLoss,
  VerificationError,
} from "../../src/index.js";
import { drawBatch } from "../../src/verify/draw.js";
import { gradcheck } from "../../src/verify/gradcheck.js";
import { gradcheckLoss, inputsFor } from "../../src/verify/gradcheckLoss.js";

const pg: PolicyLossConfig = {
  ratio: "token",
  surrogate: "pg",
  clip: null,
  aggregation: "token_mean",
};

/** The PG token_mean loss with a deliberately wrong gradient −w·A (the ratio factor dropped). */
function wrongPg(batch: ReturnType<typeof drawBatch>) {
  const r = policyLoss(pg, inputsFor(pg, batch));
  const N = batch.responseMask.flat().filter(Boolean).length;
  const grad = batch.responseMask.map((row, b) =>
    row.map((on, t) => (on ? -batch.advantages[b]![t]! / N : 0)),
  );
  return { value: r.loss, grad };
}

function caught(f: () => unknown): VerificationError {
  try {
    f();
  } catch (e) {
    if (e instanceof VerificationError) return e;
    throw e;
  }
  throw new Error("expected a VerificationError");
}

describe("drawBatch", () => {
  test("identity: a seed replays its batch and padding holds the junk", () => {
    const a = drawBatch(42, [3, 5]);
    expect(drawBatch(42, [3, 5])).toEqual(a);
    a.responseMask.forEach((row, b) =>
      row.forEach((on, t) => on || expect(a.logprobs[b]![t]).toBe(123)),
    );
    expect(a.responseMask.every((row) => row[0])).toBe(true);
  });
});

describe("gradcheck", () => {
  test("golden: a correct gradient passes and a dropped factor fails with its replay seed", () => {
    const ok = gradcheck((batch) => {
      const r = policyLoss(pg, inputsFor(pg, batch));
      return { value: r.loss, grad: r.gradLogprobs };
    });
    expect(ok.ok).toBe(true);
    expect(ok.paddingLeaks).toBe(0);
    expect(ok.maxRelErr).toBeLessThan(1e-7);
    const e = caught(() =>
      gradcheck(wrongPg, { label: "wrongPg", replayCommand: "polgrad verify --seed {seed}" }),
    );
    expect(e.code).toBe("E_VERIFY");
    expect(typeof e.seed).toBe("number");
    expect(e.message).toMatch(
      /^gradcheck: wrongPg's analytic gradient disagrees with central finite differences\n {2}replay: \{ seed: \d+, shape: \[\d, \d\] \}/,
    );
    expect(e.message).toContain("Hint: 1. replay this case alone");
    expect(e.message).toContain(`Hint: 2. from a shell: polgrad verify --seed ${e.seed}`);
  });

  test("identity: the printed replay reproduces the failing case", () => {
    const first = caught(() => gradcheck(wrongPg, { seed: 3 }));
    const worst = (
      first.report as { worst: { seed: number; shape: [number, number]; absErr: number } }
    ).worst;
    const again = caught(() =>
      gradcheck(wrongPg, { replay: { seed: worst.seed, shape: worst.shape } }),
    );
    expect((again.report as { worst: { absErr: number } }).worst.absErr).toBe(worst.absErr);
  });

  test("rejects: a gradient that is not zero at padding", () => {
    const e = caught(() =>
      gradcheck((batch) => {
        const r = policyLoss(pg, inputsFor(pg, batch));
        const grad = Array.from({ length: r.gradLogprobs.rows }, (_, b) =>
          Array.from({ length: r.gradLogprobs.cols }, (_, t) =>
            batch.responseMask[b]![t] ? r.gradLogprobs.data[b * r.gradLogprobs.cols + t]! : 1e-30,
          ),
        );
        return { value: r.loss, grad };
      }),
    );
    expect(e.message).toContain("padding position");
  });
});

describe("gradcheckLoss", () => {
  test("golden: every registry algorithm passes on branch-safe draws", () => {
    for (const [name, spec] of Object.entries(ALGORITHMS)) {
      const config =
        spec.loss.aggregation === "token_sum_norm" && spec.loss.normLen == null
          ? { ...spec.loss, normLen: 7 }
          : spec.loss;
      // GSPO's band is 7e-4 wide: keep draws 1e-5 away from its edges (a 1e-6 step moves a ratio ~1e-6).
      const report = gradcheckLoss(config, {
        seed: 11,
        margin: name.startsWith("gspo") ? 1e-5 : 1e-3,
        maxAttempts: 256,
      });
      expect(report.ok, name).toBe(true);
    }
  });

  test("property: every valid ratio × surrogate × aggregation passes, with tis and kl", () => {
    const surrogates: Pick<PolicyLossConfig, "surrogate" | "clip">[] = [
      { surrogate: "pg_clip", clip: { epsLow: 0.2, epsHigh: 0.28 } },
      { surrogate: "pg_clip", clip: { epsLow: 0.2, epsHigh: 0.2, ratioCap: 2 } },
      { surrogate: "pg", clip: null },
      { surrogate: "cispo", clip: { epsLow: null, epsHigh: 0.2 } },
      { surrogate: "cispo", clip: { epsLow: 0.15, epsHigh: 0.3 } },
    ];
    let configs = 0;
    for (const ratio of ["token", "sequence", "sequence_token"] as const) {
      for (const s of surrogates) {
        for (const aggregation of [
          "token_mean",
          "seq_mean_token_mean",
          "seq_mean_token_sum",
          "token_sum_norm",
        ] as const) {
          const config: PolicyLossConfig = {
            ratio,
            ...s,
            aggregation,
            normLen: 6,
            isCorrection: { cap: 1.5, level: "token" },
            kl: { kind: "k3", coef: 0.07 },
          };
          expect(gradcheckLoss(config, { seed: configs, cases: 2 }).ok).toBe(true);
          configs++;
        }
      }
    }
    expect(
      gradcheckLoss({
        ratio: "token",
        surrogate: "reinforce",
        clip: null,
        aggregation: "seq_mean_token_sum",
        kl: { kind: "abs", coef: 0.05 },
      }).ok,
    ).toBe(true);
    expect(configs).toBe(60);
  });
});
