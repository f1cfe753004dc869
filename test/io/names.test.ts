/**
 * Enforces docs/io.md#names-as-trainers-spell-them: framework names are detected and read as
 * polgrad's, ambiguity and conflicts are errors, unused tensors are set aside (an error with
 * strict), TRL's on-policy case and a prompt + response mask are handled as documented.
 */
import { describe, expect, test } from "vitest";
import { IoError } from "../../src/errors.js";
import { toBatch } from "../../src/io/batch.js";
import { FRAMEWORK_NAME_MAPS } from "../../src/io/frameworkNames.js";
import { resolveNames } from "../../src/io/names.js";
import { readTensorsFromBytes } from "../../src/io/readTensors.js";
import type { NamedTensor, TensorSet } from "../../src/io/tensorTypes.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { npyBytes, npzBytes } from "./_writers.js";

const B = 2;
const T = 3;
const f64 = (shape: number[], data: number[]): NamedTensor => ({
  dtype: "F64",
  shape,
  data: Float64Array.from(data),
});
const u8 = (shape: number[], data: number[]): NamedTensor => ({
  dtype: "U8",
  shape,
  data: Uint8Array.from(data),
});
const setOf = (tensors: Record<string, NamedTensor>): TensorSet => ({
  path: "<test>",
  format: "json",
  tensors: new Map(Object.entries(tensors)),
  metadata: {},
});
const LP = f64([B, T], [-0.5, -1, -2, -0.25, -0.75, 0]);
const OLD = f64([B, T], [-0.625, -1, -2.25, -0.5, -1, 0]);
const ADV = f64([B], [1, -0.5]);
const MASK = u8([B, T], [1, 1, 1, 1, 1, 0]);

/** The framework's name for a polgrad name, as the recorded map spells it (first entry). */
const theirs = (id: string, ours: string): string => {
  const map = FRAMEWORK_NAME_MAPS.find((m) => m.id === id);
  const e = map?.entries.find((x) => x.ours === ours);
  if (e === undefined) throw new Error(`no ${ours} in the ${id} map`);
  return e.theirs;
};

function thrown(f: () => unknown): IoError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(IoError);
    return e as IoError;
  }
  throw new Error("no error");
}

describe("resolveNames", () => {
  test("golden: each framework's names are detected and read as polgrad's", () => {
    // Hand-spelled, as each framework writes them (docs/io.md#names-as-trainers-spell-them).
    const files = {
      verl: { log_prob: LP, old_log_probs: OLD, advantages: ADV, response_mask: MASK },
      trl: {
        per_token_logps: LP,
        old_per_token_logps: OLD,
        advantages: ADV,
        completion_mask: MASK,
      },
      openrlhf: { log_probs: LP, action_log_probs: OLD, advantages: ADV, action_mask: MASK },
    };
    for (const [id, tensors] of Object.entries(files)) {
      const { set, names } = resolveNames("f", setOf(tensors));
      expect(names.map).toBe(id);
      expect(names.detected).toBe(true);
      expect([...set.tensors.keys()].sort()).toEqual(
        ["advantages", "logprobs", "old_logprobs", "response_mask"].sort(),
      );
      expect(set.tensors.get("logprobs")).toBe(LP);
      expect(set.tensors.get("old_logprobs")).toBe(OLD);
      // Given explicitly, the same reading.
      expect(resolveNames("f", setOf(tensors), { names: id as never }).names.detected).toBe(false);
    }
    // polgrad's own names need no map.
    const own = resolveNames(
      "f",
      setOf({ logprobs: LP, old_logprobs: OLD, advantages: ADV, response_mask: MASK }),
    );
    expect(own.names).toEqual({
      map: "polgrad",
      detected: true,
      renamed: {},
      ignored: [],
      notes: [],
    });
  });

  test("rejects: names that two frameworks read differently", () => {
    const e = thrown(() =>
      resolveNames(
        "f",
        setOf({ per_token_logps: LP, action_log_probs: OLD, advantages: ADV, response_mask: MASK }),
      ),
    );
    expect(e.message).toContain("trl (per_token_logps)");
    expect(e.message).toContain("openrlhf (action_log_probs)");
    expect(e.message).toContain("--names");
    // Two tensors for one polgrad name.
    const both = thrown(() =>
      resolveNames("f", setOf({ log_prob: LP, log_probs: LP, old_log_probs: OLD })),
    );
    expect(both.message).toMatch(
      /both "log_probs" and "log_prob" read as logprobs|both "log_prob" and "log_probs" read as logprobs/,
    );
  });

  test("golden: unused tensors are set aside, and are an error with strict", () => {
    const tensors = {
      log_prob: LP,
      old_log_probs: OLD,
      advantages: ADV,
      response_mask: MASK,
      input_ids: f64([B, 5], new Array(10).fill(7)),
      my_extra: f64([1], [0]),
    };
    const { names } = resolveNames("f", setOf(tensors));
    expect(names.ignored).toEqual(["input_ids", "my_extra"]);
    const e = thrown(() => resolveNames("f", setOf(tensors), { strict: true }));
    expect(e.message).toContain('unused tensor(s) "input_ids", "my_extra"');
    // A typo stays visible: the missing-tensor error names the near miss.
    const typo = thrown(() =>
      toBatch(setOf({ logprobs: LP, old_logprob: OLD, advantages: ADV, response_mask: MASK })),
    );
    expect(typo.message).toContain('(ignored: "old_logprob" (did you mean "old_logprobs"?))');
  });

  test("golden: one-off renames and a user map", () => {
    const tensors = { lp: LP, behaviour: OLD, adv: ADV, m: MASK };
    const user = resolveNames("f", setOf(tensors), {
      names: { logprobs: "lp", old_logprobs: "behaviour", advantages: "adv", response_mask: "m" },
    });
    expect(user.names.map).toBe("custom");
    expect(user.names.renamed).toEqual({
      logprobs: "lp",
      old_logprobs: "behaviour",
      advantages: "adv",
      response_mask: "m",
    });
    const once = resolveNames("f", setOf({ ...tensors, log_prob: LP }), {
      rename: { old_logprobs: "behaviour", advantages: "adv", response_mask: "m" },
    });
    expect(once.names.map).toBe("verl");
    expect(once.set.tensors.get("old_logprobs")).toBe(OLD);
    expect(
      thrown(() => resolveNames("f", setOf(tensors), { rename: { logprobs: "nope" } })).message,
    ).toContain('no tensor "nope"');
    expect(
      thrown(() => resolveNames("f", setOf(tensors), { names: { logprob: "lp" } as never }))
        .message,
    ).toContain('did you mean "logprobs"');
  });

  test("golden: trl without old_per_token_logps is on-policy (old = current), noted", () => {
    const { set, names } = resolveNames(
      "f",
      setOf({ per_token_logps: LP, advantages: ADV, completion_mask: MASK }),
    );
    expect(set.tensors.get("old_logprobs")).toBe(LP);
    expect(names.notes).toEqual([
      "old_logprobs = logprobs (TRL: old_per_token_logps is None on-policy, ratio 1)",
    ]);
  });

  test("golden: a prompt + response attention mask is cut with the response slice", () => {
    // verl: attention_mask [B, P+T] over a left-padded prompt (P = 2) and the response (T = 3);
    // response_mask = attention_mask[:, -T:].
    const attention = u8([B, 5], [0, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
    const tensors = {
      log_prob: LP,
      old_log_probs: OLD,
      advantages: ADV,
      attention_mask: attention,
    };
    const e = thrown(() => resolveNames("f", setOf(tensors)));
    expect(e.message).toContain("--response-slice last");
    expect(e.message).toContain("attention_mask is [2, 5] (prompt + response)");
    const { set, names } = resolveNames("f", setOf(tensors), { responseSlice: "last" });
    expect(Array.from(set.tensors.get("response_mask")?.data ?? [])).toEqual([1, 1, 1, 1, 1, 0]);
    expect(names.notes).toEqual(["response_mask = attention_mask[:, 2:5]"]);
    const explicit = resolveNames("f", setOf(tensors), { responseSlice: { start: 2, end: 5 } });
    expect(explicit.set.tensors.get("response_mask")?.data).toEqual(
      set.tensors.get("response_mask")?.data,
    );
    // A response mask wider than the streams is refused with the same advice.
    const wide = thrown(() => resolveNames("f", setOf({ ...tensors, response_mask: attention })));
    expect(wide.message).toContain("--response-slice last");
    expect(
      thrown(() => resolveNames("f", setOf(tensors), { responseSlice: { start: 0, end: 2 } }))
        .message,
    ).toContain("3 columns inside the 5 of attention_mask");
  });

  test("identity: the recorded maps read every framework name to a polgrad name or to nothing", () => {
    for (const m of FRAMEWORK_NAME_MAPS) {
      expect(m.commit).toMatch(/^[0-9a-f]{40}$/);
      for (const e of m.entries) {
        if (e.ours !== null) expect(theirs(m.id, e.ours)).toBeTypeOf("string");
        expect(e.source.line).toBeGreaterThan(0);
      }
    }
  });
});

describe("readTensorsFromBytes", () => {
  test("golden: every format is sniffed from its bytes", () => {
    const json = new TextEncoder().encode(JSON.stringify({ logprobs: [[-1, -2]] }));
    const st = encodeSafetensors({
      logprobs: { dtype: "F64", shape: [1, 2], data: Float64Array.from([-1, -2]) },
    });
    const npy = npyBytes("<f8", [1, 2], [-1, -2]);
    const npz = npzBytes({ logprobs: { descr: "<f8", shape: [1, 2], data: [-1, -2] } });
    for (const [bytes, format, name] of [
      [json, "json", "logprobs"],
      [st, "safetensors", "logprobs"],
      [npy, "npy", "array"],
      [npz, "npz", "logprobs"],
    ] as const) {
      const set = readTensorsFromBytes(bytes, "<stdin>");
      expect(set.format).toBe(format);
      expect(Array.from(set.tensors.get(name)?.data ?? [])).toEqual([-1, -2]);
    }
    expect(() => readTensorsFromBytes(new Uint8Array([1, 2, 3]), "<stdin>")).toThrow(IoError);
  });
});
