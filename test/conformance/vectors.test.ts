/**
 * emitVectors / checkVectors (docs/vectors.md): the emitted folder round-trips through
 * safetensors bytes, the reference's own outputs conform, a wrong implementation fails with its
 * diagnosis, a missing output is named.
 */
import { describe, expect, test } from "vitest";
import { checkVectors, emitVectors } from "../../src/conformance/vectors.js";
import { ConfigError } from "../../src/errors.js";
import { parseSafetensors } from "../../src/io/safetensors.js";
import type { TensorToWrite } from "../../src/io/writeSafetensors.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { policyLoss } from "../../src/losses/policyLoss.js";

const set = (m: ReadonlyMap<string, TensorToWrite>, path: string) =>
  parseSafetensors(encodeSafetensors(m), path);

describe("vectors", () => {
  test("conformance: emit then check: the reference's own outputs conform, a token mean for GRPO fails with its diagnosis", () => {
    const v = emitVectors("grpo", { cases: 6 });
    expect(v.manifest.inputs.streams).toEqual([
      "logprobs",
      "old_logprobs",
      "advantages",
      "response_mask",
      "ref_logprobs",
    ]);
    expect(v.manifest.cases.map((c) => c.name)).toEqual([
      "case_000",
      "case_001",
      "case_002",
      "case_003",
      "case_004",
      "case_005",
    ]);
    expect(v.inputs.get("case_001.advantages")?.shape).toEqual([2]);
    expect(v.inputs.get("case_000.response_mask")?.dtype).toBe("BOOL");
    const inputs = set(v.inputs, "inputs.safetensors");
    const expected = set(v.expected, "expected.safetensors");
    // The expected values are the reference's own outputs: they conform exactly.
    const ok = checkVectors(v.manifest, inputs, expected, expected);
    expect(ok.conforms).toBe(true);
    expect(ok.maxLossRelDiff).toBe(0);
    // A token-mean implementation (GRPO's clip and KL, the wrong aggregation).
    const wrong = new Map<string, TensorToWrite>();
    for (const c of v.manifest.cases) {
      const [B, T] = c.shape;
      const rows = (s: string) => {
        const d = inputs.tensors.get(`${c.name}.${s}`)?.data as Float64Array;
        return Array.from({ length: B }, (_, b) => Array.from(d.subarray(b * T, (b + 1) * T)));
      };
      const r = policyLoss(
        {
          ratio: "token",
          surrogate: "pg_clip",
          clip: { epsLow: 0.2, epsHigh: 0.2 },
          aggregation: "token_mean",
          kl: { kind: "k3", coef: 0.04 },
        },
        {
          logprobs: rows("logprobs"),
          oldLogprobs: rows("old_logprobs"),
          advantages: Array.from(inputs.tensors.get(`${c.name}.advantages`)?.data as Float64Array),
          responseMask: rows("response_mask").map((r) => r.map((x) => x === 1)),
          refLogprobs: rows("ref_logprobs"),
        },
      );
      wrong.set(`${c.name}.loss`, { dtype: "F64", shape: [1], data: [r.loss] });
      wrong.set(`${c.name}.grad_logprobs`, {
        dtype: "F64",
        shape: [B, T],
        data: r.gradLogprobs.data,
      });
    }
    const bad = checkVectors(v.manifest, inputs, expected, set(wrong, "outputs.safetensors"));
    expect(bad.conforms).toBe(false);
    expect(bad.diagnosis?.match?.changes).toEqual([
      "aggregation token_mean (reference seq_mean_token_mean)",
    ]);
    // A missing output is named, not a crash.
    wrong.delete("case_002.grad_logprobs");
    const missing = checkVectors(v.manifest, inputs, expected, set(wrong, "outputs.safetensors"));
    expect(missing.conforms).toBe(false);
    expect(missing.problems).toEqual([
      "case_002.grad_logprobs must be present in outputs.safetensors; got absent",
    ]);
  });

  test("conformance: vectors check diagnoses a KL term with the wrong sign and a Dr.GRPO budget of the padded width", () => {
    const GRPO = {
      ratio: "token",
      surrogate: "pg_clip",
      clip: { epsLow: 0.2, epsHigh: 0.2 },
      aggregation: "seq_mean_token_mean",
    } as const;
    const outputsOf = (
      v: ReturnType<typeof emitVectors>,
      f: (
        i: Parameters<typeof policyLoss>[1],
        T: number,
      ) => { loss: number; gradLogprobs: { data: ArrayLike<number> } },
    ) => {
      const inputs = set(v.inputs, "inputs.safetensors");
      const out = new Map<string, TensorToWrite>();
      for (const c of v.manifest.cases) {
        const [B, T] = c.shape;
        const rows = (s: string) => {
          const d = inputs.tensors.get(`${c.name}.${s}`)?.data as Float64Array;
          return Array.from({ length: B }, (_, b) => Array.from(d.subarray(b * T, (b + 1) * T)));
        };
        const r = f(
          {
            logprobs: rows("logprobs"),
            oldLogprobs: rows("old_logprobs"),
            advantages: Array.from(
              inputs.tensors.get(`${c.name}.advantages`)?.data as Float64Array,
            ),
            responseMask: rows("response_mask").map((r) => r.map((x) => x === 1)),
            ...(v.manifest.inputs.streams.includes("ref_logprobs")
              ? { refLogprobs: rows("ref_logprobs") }
              : {}),
          },
          T,
        );
        out.set(`${c.name}.loss`, { dtype: "F64", shape: [], data: [r.loss] });
        out.set(`${c.name}.grad_logprobs`, {
          dtype: "F64",
          shape: [B, T],
          data: r.gradLogprobs.data,
        });
      }
      return checkVectors(v.manifest, inputs, set(v.expected, "e"), set(out, "outputs"));
    };
    // GRPO with its k3 KL at 0.04, implemented as L_surrogate − 0.04·KL: 2·L(no KL) − L(KL).
    const kl = emitVectors({ ...GRPO, kl: { kind: "k3", coef: 0.04 } }, { cases: 6 });
    const flipped = outputsOf(kl, (i) => {
      const w = policyLoss({ ...GRPO, kl: { kind: "k3", coef: 0.04 } }, i);
      const wo = policyLoss(GRPO, i);
      return {
        loss: 2 * wo.loss - w.loss,
        gradLogprobs: {
          data: Array.from(
            w.gradLogprobs.data,
            (g, k) => 2 * (wo.gradLogprobs.data[k] as number) - g,
          ),
        },
      };
    });
    expect(flipped.conforms).toBe(false);
    expect(flipped.diagnosis?.match?.changes).toEqual([
      "the KL term subtracted, coefficient −0.04 (reference +0.04)",
    ]);
    // Dr.GRPO with max_completion_length 16, implemented with the padded width T.
    const dr = emitVectors({ ...GRPO, aggregation: "token_sum_norm", normLen: 16 }, { cases: 6 });
    const width = outputsOf(dr, (i, T) =>
      policyLoss({ ...GRPO, aggregation: "token_sum_norm", normLen: T }, i),
    );
    expect(width.conforms).toBe(false);
    expect(width.diagnosis?.match?.changes).toEqual([
      "aggregation token_sum_norm with normLen = the padded width T (reference normLen 16)",
    ]);
    // The correct one conforms.
    expect(
      outputsOf(dr, (i) => policyLoss({ ...GRPO, aggregation: "token_sum_norm", normLen: 16 }, i))
        .conforms,
    ).toBe(true);
  });

  test("identity: a framework model reference carries the streams it reads and its own expected values", () => {
    const v = emitVectors("verl@1dda039b:vanilla:token-mean", { cases: 2, shapes: [[3, 5]] });
    expect(v.manifest.reference).toMatchObject({
      kind: "framework",
      name: "verl@1dda039b:vanilla:token-mean",
      config: null,
    });
    expect(v.manifest.inputs.streams).toEqual([
      "logprobs",
      "old_logprobs",
      "advantages",
      "response_mask",
    ]);
    expect(v.manifest.cases[0]?.shape).toEqual([3, 5]);
  });

  test("reject: a manifest that is not polgrad-vectors v1, a token_sum_norm reference without its budget", () => {
    const v = emitVectors("grpo", { cases: 1 });
    const e = set(v.expected, "e");
    expect(() =>
      checkVectors({ ...v.manifest, version: 2 as 1 }, set(v.inputs, "i"), e, e),
    ).toThrow(ConfigError);
    expect(() => emitVectors("dr_grpo", { cases: 1 })).toThrow(/options.normLen must be given/);
    // Bounded before anything is drawn: every case is held in memory.
    expect(() => emitVectors("grpo", { cases: 100_001 })).toThrow(
      /options.cases must be an integer in 1\.\.100000/,
    );
    expect(() => emitVectors("grpo", { cases: 100, shapes: [[512, 4096]] })).toThrow(
      /at most 4194304 tokens/,
    );
    // A hand-edited manifest: each part checked before use, a ConfigError, never a TypeError.
    const i = set(v.inputs, "i");
    for (const broken of [
      { ...v.manifest, cases: "all" },
      { ...v.manifest, cases: [{ name: "case_000", shape: [1e9, 1e9] }] },
      { ...v.manifest, cases: [{ name: "../x", shape: [4, 8] }] },
      { ...v.manifest, inputs: { ...v.manifest.inputs, streams: ["logprobs"] } },
      { ...v.manifest, inputs: null },
      { ...v.manifest, reference: 3 },
    ])
      expect(() => checkVectors(broken as never, i, e, e)).toThrow(ConfigError);
    expect(emitVectors("dr_grpo", { cases: 1, normLen: 16 }).manifest.reference.notes).toContain(
      "normLen: 16 (given)",
    );
  });
});
