/**
 * Enforces docs/io.md#batches: batch files (safetensors or JSON) map polgrad's snake_case tensor
 * names to the camelCase Batch fields; names, presence, ranks, shapes, dtypes and mask values are
 * checked with IoErrors; non-finite junk at padding survives reading; a recorded polgrad fixture
 * case read as a JSON batch reproduces its recorded loss.
 */
import { describe, expect, test } from "vitest";
import { LOGPROB_STREAMS, toPartialBatch } from "../../src/io/batch.js";
import {
  parsePolicyLossConfig,
  readBatch,
  readTensors,
  type TensorSet,
  toBatch,
  writeSafetensors,
} from "../../src/io/index.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import {
  type FixtureNumber,
  loadPolgradFixture,
  rows,
  vecOrRows,
} from "../_kit/polgradFixtures.js";
import { expectIoError, useTmpDir, writeFile } from "./_kit.js";

const tmp = useTmpDir();
const NAN = Number.NaN;
const INF = Number.POSITIVE_INFINITY;

let files = 0;

/** Write `doc` to a fresh JSON file and read its tensors. */
function jsonSet(doc: Record<string, unknown>): TensorSet {
  return readTensors(writeFile(tmp(`set${files++}.json`), JSON.stringify(doc)));
}

const BASE = {
  logprobs: [
    [-0.5, -1.0],
    [-0.25, "NaN"],
  ],
  old_logprobs: [
    [-0.6, -0.9],
    [-0.2, "Infinity"],
  ],
  advantages: [1.0, -2.0],
  response_mask: [
    [true, true],
    [true, false],
  ],
};

describe("readTensors", () => {
  test("rejects: an extension no reader owns, with bytes no reader recognises", () => {
    const path = writeFile(tmp("batch.bin"), "x");
    expect(expectIoError(() => readTensors(path), "path").message).toContain(
      ".safetensors or .json or .npy or .npz or .pt or .pth",
    );
    expectIoError(() => readTensors(writeFile(tmp("batch"), "{}")), "path");
  });

  test("golden: reads every named tensor generically, unknown names included", () => {
    const set = jsonSet({ anything: [[1, 2]], flags: [true] });
    expect([...set.tensors.keys()]).toEqual(["anything", "flags"]);
    expect(set.tensors.get("flags")?.dtype).toBe("BOOL");
  });

  test("golden: the extension is matched case-insensitively", () => {
    const path = tmp("UPPER.SafeTensors");
    writeSafetensors(path, { x: { dtype: "F64", shape: [1], data: [1] } });
    expect(readTensors(path).format).toBe("safetensors");
  });
});

describe("toBatch", () => {
  test("rejects: an unknown tensor name with a suggestion", () => {
    const { old_logprobs, ...rest } = BASE;
    const e = expectIoError(
      () => toBatch(jsonSet({ ...rest, old_logprob: old_logprobs }), { strict: true }),
      "old_logprob",
    );
    expect(e.message).toContain('did you mean "old_logprobs"');
  });

  test("rejects: missing required tensors listing missing and present", () => {
    const e = expectIoError(
      () => toBatch(jsonSet({ logprobs: BASE.logprobs, response_mask: BASE.response_mask })),
      "tensors",
    );
    expect(e.message).toContain("missing old_logprobs, advantages");
    expect(e.message).toContain("only logprobs, response_mask");
    const e2 = expectIoError(
      () => toBatch(jsonSet(BASE), { require: ["ref_logprobs"] }),
      "tensors",
    );
    expect(e2.message).toContain("missing ref_logprobs");
  });

  test("rejects: wrong ranks and shapes", () => {
    expectIoError(() => toBatch(jsonSet({ ...BASE, logprobs: [-0.5, -1] })), "logprobs");
    expectIoError(
      () => toBatch(jsonSet({ ...BASE, old_logprobs: [[-0.6, -0.9]] })),
      "old_logprobs",
    );
    expectIoError(() => toBatch(jsonSet({ ...BASE, advantages: [1, 2, 3] })), "advantages");
    expectIoError(
      () => toBatch(jsonSet({ ...BASE, advantages: [[[1, 2]], [[3, 4]]] })),
      "advantages",
    );
    expectIoError(
      () =>
        toBatch(
          jsonSet({
            ...BASE,
            response_mask: [
              [true, true, true],
              [true, false, false],
            ],
          }),
        ),
      "response_mask",
    );
    expectIoError(() => toBatch(jsonSet({ ...BASE, values: [[1], [2]] })), "values");
  });

  test("rejects: mask values other than 0 and 1", () => {
    expectIoError(
      () =>
        toBatch(
          jsonSet({
            ...BASE,
            response_mask: [
              [1, 2],
              [1, 0],
            ],
          }),
        ),
      "response_mask",
    );
    expectIoError(
      () =>
        toBatch(
          jsonSet({
            ...BASE,
            response_mask: [
              [1, 0.5],
              [1, 0],
            ],
          }),
        ),
      "response_mask",
    );
    expectIoError(
      () =>
        toBatch(
          jsonSet({
            ...BASE,
            response_mask: [
              [1, "NaN"],
              [1, 0],
            ],
          }),
        ),
      "response_mask",
    );
  });

  test("rejects: a non-float dtype for a values tensor", () => {
    expectIoError(
      () =>
        toBatch(
          jsonSet({
            ...BASE,
            logprobs: [
              [true, true],
              [true, false],
            ],
          }),
        ),
      "logprobs",
    );
    const path = tmp("int.safetensors");
    writeSafetensors(path, {
      logprobs: { dtype: "I32", shape: [1, 1], data: [0] },
      old_logprobs: { dtype: "F64", shape: [1, 1], data: [0] },
      advantages: { dtype: "F64", shape: [1], data: [0] },
      response_mask: { dtype: "BOOL", shape: [1, 1], data: [1] },
    });
    expectIoError(() => readBatch(path), "logprobs");
  });

  test("golden: response_mask may be bool, u8, i32, i64 or float 0/1", () => {
    for (const dtype of ["BOOL", "U8", "I32", "I64", "F32"] as const) {
      const path = tmp(`mask-${dtype}.safetensors`);
      writeSafetensors(path, {
        logprobs: { dtype: "F64", shape: [1, 3], data: [-1, -2, -3] },
        old_logprobs: { dtype: "F64", shape: [1, 3], data: [-1, -2, -3] },
        advantages: { dtype: "F64", shape: [1], data: [1] },
        response_mask: { dtype, shape: [1, 3], data: [1, 1, 0] },
      });
      const b = readBatch(path);
      expect(Array.from(b.responseMask.data)).toEqual([1, 1, 0]);
      expect(b.source.dtypes.response_mask).toBe(dtype);
    }
  });

  test("identity: optional fields appear only when present", () => {
    const b = toBatch(jsonSet(BASE));
    for (const f of [
      "refLogprobs",
      "rolloutLogprobs",
      "values",
      "oldValues",
      "returns",
      "entropies",
    ]) {
      expect(Object.hasOwn(b, f)).toBe(false);
    }
    const full = toBatch(
      jsonSet({
        ...BASE,
        ref_logprobs: BASE.logprobs,
        entropies: [
          [1, 2],
          [3, 4],
        ],
      }),
      { require: ["ref_logprobs"] },
    );
    expect(full.refLogprobs?.rows).toBe(2);
    expect(Array.from(full.entropies?.data ?? [])).toEqual([1, 2, 3, 4]);
  });

  test("golden: a log-probability above 0 at a response position is a warning naming tensor, count and first position, in every stream", () => {
    // BASE's mask is [[1, 1], [1, 0]]: (1, 1) is padding and may hold anything, 9 included.
    // Response positions above 0: (0, 1) = 0.031 and (1, 0) = 0.5, so count 2, first (0, 1).
    const above = [
      [-0.5, 0.031],
      [0.5, 9],
    ];
    for (const name of LOGPROB_STREAMS) {
      for (const read of [toBatch, toPartialBatch]) {
        const b = read(jsonSet({ ...BASE, [name]: above }));
        expect(b.source.warnings).toEqual([
          {
            code: "positive-logprob",
            tensor: name,
            fileName: null,
            count: 2,
            firstValue: 0.031,
            firstAt: [0, 1],
            message: `${name}: 2 value(s) > 0, first 0.031 at (0, 1): probabilities or logits stored by mistake?`,
          },
        ]);
      }
    }
    // Read as given: the values are the file's, untouched.
    const b = toBatch(jsonSet({ ...BASE, old_logprobs: above }));
    expect([...b.oldLogprobs.data.subarray(0, 3)]).toEqual([-0.5, 0.031, 0.5]);
    // Under another name the warning names the file's tensor too.
    const verl = toBatch(
      jsonSet({
        log_probs: BASE.logprobs,
        old_log_probs: above,
        advantages: BASE.advantages,
        response_mask: BASE.response_mask,
      }),
    );
    expect(verl.source.warnings[0]?.message).toBe(
      "old_log_probs (read as old_logprobs): 2 value(s) > 0, first 0.031 at (0, 1): probabilities or logits stored by mistake?",
    );
    // 0 itself (probability 1) is a log-probability; so is junk at padding; NaN/Inf at a
    // response position is left to the losses' E_NONFINITE: no warning for any of them.
    const edge = [
      [0, -1.0],
      [-0.1, 0.5],
    ];
    expect(toBatch(jsonSet({ ...BASE, logprobs: edge })).source.warnings).toEqual([]);
    const inf = [
      ["Infinity", -1],
      [-0.1, 9],
    ];
    const withInf = toBatch(jsonSet({ ...BASE, logprobs: inf }));
    expect(withInf.logprobs.data[0]).toBe(INF);
    expect(withInf.source.warnings).toEqual([]);
    // Values streams are not log-probabilities: entropies above 0 are no warning.
    expect(toBatch(jsonSet({ ...BASE, entropies: above })).source.warnings).toEqual([]);
  });

  test("rejects: under strict, a log-probability above 0 at a response position in every stream", () => {
    const above = [
      [-0.5, -1.0],
      [0.5, 0.5],
    ];
    for (const name of LOGPROB_STREAMS) {
      const e = expectIoError(
        () => toBatch(jsonSet({ ...BASE, [name]: above }), { strict: true }),
        name,
      );
      expect(e.message).toContain("a log-probability (≤ 0)");
      expect(e.message).toContain("got 0.5 at (1, 0) (1 value(s) > 0)");
      expectIoError(
        () => toPartialBatch(jsonSet({ ...BASE, [name]: above }), { strict: true }),
        name,
      );
    }
  });
});

describe("readBatch", () => {
  test("golden: a json batch with nan and infinity at padding", () => {
    const path = writeFile(
      tmp("batch.json"),
      JSON.stringify({
        ...BASE,
        advantages: [
          [1, 2],
          [3, "-Infinity"],
        ],
      }),
    );
    const b = readBatch(path);
    expect(b.logprobs).toEqual({
      rows: 2,
      cols: 2,
      data: Float64Array.from([-0.5, -1, -0.25, NAN]),
    });
    expect(Array.from(b.oldLogprobs.data)).toEqual([-0.6, -0.9, -0.2, INF]);
    expect(b.advantages).toEqual({ rows: 2, cols: 2, data: Float64Array.from([1, 2, 3, -INF]) });
    expect(b.responseMask).toEqual({ rows: 2, cols: 2, data: Uint8Array.from([1, 1, 1, 0]) });
    expect(b.source).toEqual({
      path,
      format: "json",
      dtypes: { logprobs: "F64", old_logprobs: "F64", advantages: "F64", response_mask: "BOOL" },
      names: { map: "polgrad", detected: true, renamed: {}, ignored: [], notes: [] },
      warnings: [],
    });
  });

  test("golden: a safetensors batch with f32 logprobs and a bool mask", () => {
    const path = tmp("batch.safetensors");
    writeSafetensors(path, {
      logprobs: { dtype: "F32", shape: [2, 2], data: [-0.5, -1, -0.25, NAN] },
      old_logprobs: { dtype: "BF16", shape: [2, 2], data: [-0.5, -1, -0.25, INF] },
      advantages: { dtype: "F64", shape: [2], data: [1, -2] },
      response_mask: { dtype: "BOOL", shape: [2, 2], data: [1, 1, 1, 0] },
    });
    const b = readBatch(path);
    expect(Array.from(b.logprobs.data)).toEqual([-0.5, -1, -0.25, NAN]);
    expect(Array.from(b.oldLogprobs.data)).toEqual([-0.5, -1, -0.25, INF]);
    expect(b.advantages).toEqual(Float64Array.from([1, -2]));
    expect(b.source.dtypes).toEqual({
      logprobs: "F32",
      old_logprobs: "BF16",
      advantages: "F64",
      response_mask: "BOOL",
    });
  });

  test("identity: a recorded polgrad fixture case read as a json batch reproduces its loss", () => {
    type Rows = FixtureNumber[][];
    interface Case {
      name: string;
      config: unknown;
      inputs: {
        logprobs: Rows;
        old_logprobs: Rows;
        advantages: FixtureNumber[] | Rows;
        response_mask: boolean[][];
        ref_logprobs?: Rows;
        rollout_logprobs?: Rows;
      };
      outputs: { loss: number };
    }
    const { cases } = loadPolgradFixture<{ cases: Case[] }>("policy_loss.json");
    const c = cases.find(
      (x) => x.inputs.ref_logprobs !== undefined && x.inputs.rollout_logprobs !== undefined,
    ) as Case;
    const b = readBatch(writeFile(tmp("fixture.json"), JSON.stringify(c.inputs)));
    expect(Array.from(b.logprobs.data)).toEqual(rows(c.inputs.logprobs).flat());
    const adv = vecOrRows(c.inputs.advantages);
    expect(
      Array.from(b.advantages instanceof Float64Array ? b.advantages : b.advantages.data),
    ).toEqual(adv.flat());
    const r = policyLoss(parsePolicyLossConfig(c.config, c.name), b);
    expect(Math.abs(r.loss - c.outputs.loss)).toBeLessThanOrEqual(
      1e-12 * Math.max(1, Math.abs(c.outputs.loss)),
    );
  });
});
