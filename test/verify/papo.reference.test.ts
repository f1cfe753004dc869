/**
 * Enforces docs/derivations/papo.md#reference: the closed-form papoLoss (value and both gradients
 * in one pass) equals the equation-level papoRef differentiated by the independent autodiff, for
 * both forms, several parents (the registered grpo and dapo losses, every aggregation, TIS),
 * clip on/off and double entropy on/off, on property-generated ragged batches; both agree with
 * central differences; γ = η = 0 reduces to the parent bitwise; the official form is
 * mask-invariant. Tolerance: 1e-13 norm-wise relative (docs/derivations/reference.md#tolerance).
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Aggregation } from "../../src/aggregate/aggregation.js";
import type { PolicyLossConfig } from "../../src/losses/config.js";
import { type PapoInputs, type PapoResult, papoLoss } from "../../src/losses/papo.js";
import type { PapoConfig, PapoForm } from "../../src/losses/papoConfig.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { dapo } from "../../src/registry/algorithms/dapo.js";
import { grpo } from "../../src/registry/algorithms/grpo.js";
import { papoRef } from "../../src/verify/reference/papoRef.js";
import {
  branchSafe,
  centralDifference,
  expectBitwise,
  expectMaskInvariant,
  expectNormwiseClose,
  FC_PARAMS,
  type LogprobBatch,
  logprobBatches,
  recordDisagreement,
  reportDisagreement,
} from "../_kit/index.js";

const TOL = 1e-13;
const FD_TOL = 1e-7;
const H = 1e-6;
const MARGIN = 1e-4;

afterAll(() => reportDisagreement("papo.reference"));

const uni = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: 2 ** 30 }).map((k) => min + ((max - min) * k) / 2 ** 30);

/** A logprob batch plus the masked view: lpm = lp + U[−1.5, 1.5], entropies U[0.05, 4]. */
interface PapoBatch {
  readonly batch: LogprobBatch;
  /** Finite values for every position of lp, lpm, H, H_mask (what a model returns at padding). */
  readonly full: { lp: number[][]; lpm: number[][]; H: number[][]; Hm: number[][] };
}

function papoBatches(maxB = 4, maxT = 6): fc.Arbitrary<PapoBatch> {
  return logprobBatches({ maxB, maxT }).chain((batch) => {
    const n = batch.responseMask.length * batch.responseMask[0]!.length;
    const cells = (min: number, max: number) =>
      fc.array(uni(min, max), { minLength: n, maxLength: n });
    return fc
      .record({
        pad: cells(-8, -0.0625),
        d: cells(-1.5, 1.5),
        h: cells(0.05, 4),
        hm: cells(0.05, 4),
      })
      .map(({ pad, d, h, hm }) => {
        const T = batch.responseMask[0]!.length;
        const at = (x: number[], b: number, t: number) => x[b * T + t] as number;
        const lp = batch.responseMask.map((row, b) =>
          row.map((on, t) => (on ? (batch.logprobs[b]![t] as number) : at(pad, b, t))),
        );
        const shape = (f: (b: number, t: number) => number) =>
          batch.responseMask.map((row, b) => row.map((_, t) => f(b, t)));
        return {
          batch,
          full: {
            lp,
            lpm: shape((b, t) => (lp[b]![t] as number) + at(d, b, t)),
            H: shape((b, t) => at(h, b, t)),
            Hm: shape((b, t) => at(hm, b, t)),
          },
        };
      });
  });
}

/** The inputs of one form: trl reads padding (finite model values), official gets junk there. */
function inputsFor(config: PapoConfig, pb: PapoBatch): PapoInputs {
  const { batch, full } = pb;
  const trl = config.perception.form === "trl";
  const junked = (x: number[][]) =>
    x.map((row, b) => row.map((v, t) => (batch.responseMask[b]![t] ? v : batch.junk)));
  const pick = (x: number[][]) => (trl ? x : junked(x));
  return {
    logprobs: pick(full.lp),
    maskedLogprobs: pick(full.lpm),
    oldLogprobs: batch.oldLogprobs,
    advantages: batch.advantages,
    responseMask: batch.responseMask,
    refLogprobs: config.kl == null ? null : batch.refLogprobs,
    rolloutLogprobs: config.isCorrection == null ? null : batch.rolloutLogprobs,
    entropies: pick(full.H),
    maskedEntropies: pick(full.Hm),
  };
}

const pgClip = (
  aggregation: Aggregation,
  extra: Partial<PolicyLossConfig> = {},
): PolicyLossConfig => ({
  ratio: "token",
  surrogate: "pg_clip",
  clip: { epsLow: 0.2, epsHigh: 0.28 },
  aggregation,
  ...extra,
});
/** Parents: the registered grpo and dapo losses, then pg_clip under each other aggregation (+TIS). */
const PARENTS: readonly (readonly [string, (T: number) => PolicyLossConfig])[] = [
  ["grpo", () => grpo.loss],
  ["dapo", () => dapo.loss],
  [
    "seq_mean_token_sum+tis",
    () => pgClip("seq_mean_token_sum", { isCorrection: { cap: 2, level: "token" } }),
  ],
  ["token_sum_norm", (T) => pgClip("token_sum_norm", { normLen: T + 1 })],
  ["sequence ratio", () => pgClip("seq_mean_token_mean", { ratio: "sequence" })],
];
const FORMS: readonly PapoForm[] = ["trl", "official"];

function papoConfig(
  parent: PolicyLossConfig,
  form: PapoForm,
  clip: number | null,
  de: boolean,
): PapoConfig {
  return {
    ...parent,
    perception: { gamma: form === "trl" ? 0.1 : 0.37, clip, form },
    doubleEntropy: de ? { eta1: 0.03, eta2: 0.05 } : null,
  };
}

function agree(config: PapoConfig, pb: PapoBatch, label: string): void {
  const inputs = inputsFor(config, pb);
  const got = papoLoss(config, inputs);
  const ref = papoRef(config, inputs);
  recordDisagreement("loss", expectNormwiseClose(got.loss, ref.loss, TOL, `${label}: loss`));
  recordDisagreement(
    "gradLogprobs",
    expectNormwiseClose(got.gradLogprobs, ref.grad, TOL, `${label}: grad`),
  );
  recordDisagreement(
    "gradMaskedLogprobs",
    expectNormwiseClose(got.gradMaskedLogprobs, ref.gradMasked, TOL, `${label}: gradMasked`),
  );
  recordDisagreement(
    "perceptionTerm",
    expectNormwiseClose(got.perceptionTerm, ref.perceptionTerm, TOL, `${label}: perceptionTerm`),
  );
  recordDisagreement(
    "perceptionPerToken",
    expectNormwiseClose(got.perceptionPerToken, ref.perceptionPerToken, TOL, `${label}: perToken`),
  );
  if (ref.entropyTerm === null) expect(got.entropyTerm).toBeNull();
  else
    expectNormwiseClose(got.entropyTerm as number, ref.entropyTerm, TOL, `${label}: entropyTerm`);
  expectNormwiseClose(got.policyLoss, ref.policyLoss, TOL, `${label}: policyLoss`);
}

/** The batch is safe for finite differences: ratios and every perception k3 away from the kinks. */
function fdSafe(config: PapoConfig, pb: PapoBatch): boolean {
  if (!branchSafe(config, pb.batch, MARGIN)) return false;
  const clip = config.perception.clip;
  const trl = config.perception.form === "trl";
  const { lp, lpm } = pb.full;
  return lp.every((row, b) =>
    row.every((v, t) => {
      if (!trl && !pb.batch.responseMask[b]![t]) return true;
      const d = (lpm[b]![t] as number) - v;
      const k = Math.exp(d) - d - 1;
      return clip === null || Math.abs(k - clip) >= MARGIN;
    }),
  );
}

describe("papoLoss", () => {
  for (const form of FORMS) {
    for (const [name, parent] of PARENTS) {
      it(`gradient: closed form equals the reference, ${form} form × ${name} parent, clip on/off × double entropy on/off`, () => {
        fc.assert(
          fc.property(papoBatches(), fc.constantFrom(null, 0.2), fc.boolean(), (pb, clip, de) => {
            const T = pb.batch.responseMask[0]!.length;
            agree(
              papoConfig(parent(T), form, clip, de),
              pb,
              `${form} × ${name} × clip=${clip} × de=${de}`,
            );
          }),
          FC_PARAMS,
        );
      });
    }
  }

  it("gradient: closed form equals the reference for both forms, both parents, both streams", () => {
    // The registered TRL-form and official-form constants on the grpo and dapo parents.
    for (const form of FORMS)
      for (const parent of [grpo.loss, dapo.loss])
        fc.assert(
          fc.property(papoBatches(), (pb) => agree(papoConfig(parent, form, 0.2, true), pb, form)),
          FC_PARAMS,
        );
  });

  it("gradient: closed form matches central differences in both streams", () => {
    fc.assert(
      fc.property(papoBatches(3, 5), fc.constantFrom(...FORMS), fc.boolean(), (pb, form, g) => {
        const config = papoConfig(g ? grpo.loss : dapo.loss, form, 0.2, true);
        const inputs = inputsFor(config, pb);
        fc.pre(fdSafe(config, pb));
        const r = papoLoss(config, inputs);
        const at = form === "trl" ? undefined : pb.batch.responseMask;
        const lpRows = inputs.logprobs as number[][];
        const fdLp = centralDifference(
          (x) => papoLoss(config, { ...inputs, logprobs: x }).loss,
          lpRows,
          H,
          at,
        );
        recordDisagreement(
          "fd lp",
          expectNormwiseClose(r.gradLogprobs, fdLp, FD_TOL, `${form}: fd lp`),
        );
        if (form === "trl") {
          const fdM = centralDifference(
            (x) => papoLoss(config, { ...inputs, maskedLogprobs: x }).loss,
            inputs.maskedLogprobs as number[][],
            H,
          );
          recordDisagreement(
            "fd lpm",
            expectNormwiseClose(r.gradMaskedLogprobs, fdM, FD_TOL, "trl: fd lpm"),
          );
        } else {
          // sg[maskedLogprobs]: finite differences would see through it; the claim is an exact 0.
          expect(r.gradMaskedLogprobs.data.every((v) => Object.is(v, 0))).toBe(true);
        }
      }),
      { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 2)) },
    );
  });

  it("identity: γ = 0 and η = 0 give the parent loss and gradient bitwise", () => {
    fc.assert(
      fc.property(
        papoBatches(),
        fc.constantFrom(...FORMS),
        fc.integer({ min: 0, max: PARENTS.length - 1 }),
        fc.boolean(),
        (pb, form, p, nullDe) => {
          const T = pb.batch.responseMask[0]!.length;
          const parent = PARENTS[p]![1](T);
          const config: PapoConfig = {
            ...parent,
            perception: { gamma: 0, clip: 0.2, form },
            doubleEntropy: nullDe ? null : { eta1: 0, eta2: 0 },
          };
          const inputs = inputsFor(config, pb);
          const r: PapoResult = papoLoss(config, inputs);
          const base = policyLoss(parent, inputs);
          expectBitwise(r.loss, base.loss, "loss");
          expectBitwise(r.gradLogprobs, base.gradLogprobs, "gradLogprobs");
          expectBitwise(r.policyLoss, base.loss, "policyLoss");
          expect(r.gradMaskedLogprobs.data.every((v) => Object.is(v, 0))).toBe(true);
        },
      ),
      FC_PARAMS,
    );
  });

  it("mask invariance: official form, every parent, bitwise under junk at padding of every stream", () => {
    fc.assert(
      fc.property(papoBatches(), fc.integer({ min: 0, max: PARENTS.length - 1 }), (pb, p) => {
        const T = pb.batch.responseMask[0]!.length;
        const config = papoConfig(PARENTS[p]![1](T), "official", null, true);
        const inputs = inputsFor(config, pb);
        expectMaskInvariant(
          (x) => papoLoss(config, x),
          inputs as PapoInputs & { responseMask: boolean[][] },
        );
        const r = papoLoss(config, inputs);
        pb.batch.responseMask.flat().forEach((on, i) => {
          if (!on) {
            expect(Object.is(r.gradLogprobs.data[i], 0)).toBe(true);
            expect(Object.is(r.gradMaskedLogprobs.data[i], 0)).toBe(true);
            expect(r.perceptionPerToken.data[i]).toBe(0);
          }
        });
      }),
      { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 3)) },
    );
  });
});

describe("papoRef", () => {
  it("golden: the hand-derived trl and official goldens", () => {
    // The batch of test/losses/papo.golden.test.ts: dapo parent, lengths [2, 1], on-policy, A = [1, −1],
    // δ = [[ln 2, −ln 2], [0, ln 1.5]]. trl: L = −1/3 − (0.005 + ln(4/3)/40) + 0.09;
    // official (γ 0.01, no clip, η 0.03): L = −0.275, ∂/∂lp = [[−0.34, −0.345], [97/300, 0]].
    const lp = [
      [-1, -1],
      [-1, -1],
    ];
    const lpm = [
      [-1 + Math.LN2, -1 - Math.LN2],
      [-1, -1 + Math.log(1.5)],
    ];
    const inputs = {
      logprobs: lp,
      maskedLogprobs: lpm,
      oldLogprobs: lp,
      advantages: [1, -1],
      responseMask: [
        [true, true],
        [true, false],
      ],
      entropies: [
        [1, 2],
        [3, 4],
      ],
      maskedEntropies: [
        [0.5, 0.5],
        [0.5, 0.5],
      ],
    };
    const trl = papoRef(papoConfig(dapo.loss, "trl", 0.2, false), inputs);
    expect(trl.loss).toBeCloseTo(-1 / 3 - (0.005 + Math.log(4 / 3) / 40), 14);
    const withDe = papoRef(
      { ...papoConfig(dapo.loss, "trl", 0.2, true), doubleEntropy: { eta1: 0.03, eta2: 0.03 } },
      inputs,
    );
    expect(withDe.loss).toBeCloseTo(-1 / 3 - (0.005 + Math.log(4 / 3) / 40) + 0.09, 14);
    expectNormwiseClose(
      withDe.grad,
      [
        [-1 / 3, -1 / 3 - 0.0125],
        [1 / 3, 0.0125],
      ],
      1e-14,
    );
    expectNormwiseClose(
      withDe.gradMasked,
      [
        [0, 0.0125],
        [0, -0.0125],
      ],
      1e-14,
    );
    const off = papoRef(
      {
        ...dapo.loss,
        perception: { gamma: 0.01, clip: null, form: "official" },
        doubleEntropy: { eta1: 0.03, eta2: 0.03 },
      },
      inputs,
    );
    expect(off.loss).toBeCloseTo(-0.275, 14);
    expectNormwiseClose(
      off.grad,
      [
        [-0.34, -0.345],
        [97 / 300, 0],
      ],
      1e-14,
    );
    expectNormwiseClose(
      off.gradMasked,
      [
        [0, 0],
        [0, 0],
      ],
      0,
    );
  });

  it("gradient: matches central differences in both streams", () => {
    fc.assert(
      fc.property(papoBatches(3, 5), fc.constantFrom(...FORMS), (pb, form) => {
        const config = papoConfig(grpo.loss, form, 0.2, true);
        const inputs = inputsFor(config, pb);
        fc.pre(fdSafe(config, pb));
        const r = papoRef(config, inputs);
        const at = form === "trl" ? undefined : pb.batch.responseMask;
        const fd = centralDifference(
          (x) => papoRef(config, { ...inputs, logprobs: x }).loss,
          inputs.logprobs as number[][],
          H,
          at,
        );
        recordDisagreement(
          "ref fd lp",
          expectNormwiseClose(r.grad, fd, FD_TOL, `${form}: ref fd lp`),
        );
        if (form === "trl") {
          const fdM = centralDifference(
            (x) => papoRef(config, { ...inputs, maskedLogprobs: x }).loss,
            inputs.maskedLogprobs as number[][],
            H,
          );
          recordDisagreement(
            "ref fd lpm",
            expectNormwiseClose(r.gradMasked, fdM, FD_TOL, "trl: ref fd lpm"),
          );
        }
      }),
      { ...FC_PARAMS, numRuns: Math.max(1, Math.ceil(FC_PARAMS.numRuns / 2)) },
    );
  });
});
