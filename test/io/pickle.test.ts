/**
 * Enforces docs/io.md#restricted-unpickler: the interpreter builds plain values from the opcodes
 * torch.save writes (protocols 1–5), turns REDUCE of an allowed global into a descriptor, and
 * refuses every other opcode and global — naming it and its byte offset — with an IoError; it is
 * bounded (stack, marks, lines, lengths checked against the bytes left) and iterative.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { unzipSync } from "fflate";
import { describe, expect, test } from "vitest";
import { IoError } from "../../src/errors.js";
import {
  MAX_PICKLE_MARKS,
  MAX_PICKLE_STACK,
  type PyDict,
  type PyValue,
  unpickle,
} from "../../src/io/_internal/pickle.js";
import { expectIoError } from "./_kit.js";
import { Pickle } from "./_pickleKit.js";

const run = (bytes: Uint8Array): PyValue => unpickle("parsePt", bytes, "<test>", "data.pkl");

/** Require an IoError on `data.pkl` whose message contains every fragment. */
function refuses(bytes: Uint8Array, ...fragments: string[]): string {
  const e = expectIoError(() => run(bytes), "data.pkl");
  expect(e.fn).toBe("parsePt");
  for (const f of fragments) expect(e.message).toContain(f);
  return e.message;
}

const P = (): Pickle => new Pickle().proto(2);

/** The data.pkl of a recorded torch.save file. */
function recordedPickle(file: string): Uint8Array {
  const files = unzipSync(readFileSync(new URL(`../fixtures/io/pt/${file}`, import.meta.url)));
  const name = Object.keys(files).find((k) => k.endsWith("/data.pkl")) as string;
  return files[name] as Uint8Array;
}

describe("unpickle", () => {
  test("golden: scalars of every width, strings, None and bools", () => {
    // LONG1 of 2^70 is 9 bytes little-endian: eight 0x00 then 0x40; -2^70 is 00…00 C0.
    const p = P().mark();
    for (const v of [255, 65535, -1, 2 ** 31 - 1, 2n ** 70n, -(2n ** 70n), -129n]) p.int(v);
    p.float(-0.5).float(Number.NaN).str("é").str("short", true).none().bool(true).bool(false);
    p.raw(0x8d, 2, 0, 0, 0, 0, 0, 0, 0, 0x68, 0x69); // BINUNICODE8 "hi"
    p.raw(0x49, ...new TextEncoder().encode("01\n00\n-42\n").slice(0, 3)); // INT "01" → True
    p.raw(0x49, 0x30, 0x30, 0x0a, 0x49, 0x2d, 0x34, 0x32, 0x0a); // INT "00" → False, INT "-42"
    p.raw(0x4c, ...new TextEncoder().encode("-12345678901234567890L\n")); // LONG text
    const v = run(p.tuple().stop().bytes()) as { kind: "tuple"; items: PyValue[] };
    expect(v.items).toEqual([
      255n,
      65535n,
      -1n,
      2n ** 31n - 1n,
      2n ** 70n,
      -(2n ** 70n),
      -129n,
      -0.5,
      Number.NaN,
      "é",
      "short",
      null,
      true,
      false,
      "hi",
      true,
      false,
      -42n,
      -12345678901234567890n,
    ]);
    expect(Object.is(v.items[7], -0.5)).toBe(true);
  });

  test("golden: containers, the memo and protocol 4 framing", () => {
    // {"a": [1, 2, 3], "b": (x, x, x) with x = the memoized list, 7: OrderedDict()}
    const p = new Pickle().proto(4).raw(0x95, 0, 0, 0, 0, 0, 0, 0, 0); // FRAME 0 (no length check beyond the bytes left)
    p.emptyDict().memoize().mark().str("a", true).emptyList().put(300).int(1).append().mark();
    p.int(2).int(3).appends().str("b").get(300).get(300).get(300).tupleN(3);
    p.int(7).str("collections", true).str("OrderedDict", true).raw(0x93).emptyTuple().reduce();
    const v = run(p.setitems().stop().bytes()) as PyDict;
    expect(v.kind).toBe("dict");
    expect(v.keys).toEqual(["a", "b", 7n]);
    const list = v.values[0] as { kind: "list"; items: PyValue[] };
    expect(list.items).toEqual([1n, 2n, 3n]);
    const tup = v.values[1] as { kind: "tuple"; items: PyValue[] };
    expect(tup.items.every((x) => x === list)).toBe(true);
    expect(v.values[2]).toMatchObject({ kind: "dict", ordered: true, keys: [] });
  });

  test("golden: a torch tensor becomes a descriptor and nothing is called", () => {
    const bytes = P()
      .emptyDict()
      .str("w")
      .tensor("HalfStorage", "0", 6, 1, [2, 2], [1, 3])
      .setitem()
      .stop()
      .bytes();
    const d = run(bytes) as PyDict;
    expect(d.values[0]).toEqual({
      kind: "tensor",
      storage: {
        kind: "storage",
        dtype: "F16",
        storageType: "torch.HalfStorage",
        key: "0",
        location: "cpu",
        numel: 6,
      },
      offset: 1,
      size: [2, 2],
      stride: [1, 3],
      at: expect.any(Number),
    });
  });

  test("golden: every recorded torch.save pickle runs (protocols 1, 2 and 4)", () => {
    for (const f of [
      "nested.pt",
      "protocol1.pt",
      "protocol4.pt",
      "state_dict.pt",
      "parameter.pt",
      "views.pt",
    ]) {
      const v = run(recordedPickle(f));
      expect(v, f).toMatchObject({ kind: "dict" });
    }
  });

  test("rejects: every global off the allow-list, named with its byte offset", () => {
    // PROTO is bytes 0-1, so the GLOBAL opcode is at byte 2.
    for (const [module, name] of [
      ["os", "system"],
      ["posix", "system"],
      ["nt", "system"],
      ["builtins", "eval"],
      ["builtins", "exec"],
      ["builtins", "getattr"],
      ["__builtin__", "eval"],
      ["subprocess", "Popen"],
      ["torch", "load"],
      ["torch._utils", "_rebuild_tensor"],
      ["collections", "defaultdict"],
    ] as const) {
      const msg = refuses(
        P().global(module, name).stop().bytes(),
        `global "${module}.${name}"`,
        "at byte 2",
      );
      expect(msg).toContain("an allowed global");
    }
    // STACK_GLOBAL is refused the same way, at the STACK_GLOBAL opcode (bytes 2-5 and 6-14 are the strings).
    refuses(
      P().str("os", true).str("system", true).raw(0x93).stop().bytes(),
      '"os.system"',
      "at byte 14",
    );
  });

  test("rejects: complex, quantized and sparse tensors with the reason", () => {
    refuses(
      P().global("torch", "ComplexFloatStorage").stop().bytes(),
      "complex tensors are not supported",
    );
    refuses(
      P().global("torch", "QInt8Storage").stop().bytes(),
      "quantized tensors are not supported",
    );
    refuses(P().global("torch._utils", "_rebuild_qtensor").stop().bytes(), "quantized tensors");
    refuses(P().global("torch._utils", "_rebuild_sparse_tensor").stop().bytes(), "sparse tensors");
  });

  test("rejects: every opcode off the allow-list, named with its byte offset", () => {
    const cases: [number[], string][] = [
      [[0x69, ...new TextEncoder().encode("os\nsystem\n")], "INST"],
      [[0x6f], "OBJ"],
      [[0x81], "NEWOBJ"],
      [[0x92], "NEWOBJ_EX"],
      [[0x82, 1], "EXT1"],
      [[0x83, 1, 0], "EXT2"],
      [[0x84, 1, 0, 0, 0], "EXT4"],
      [[0x50, 0x30, 0x0a], "PERSID"],
      [[0x30], "POP"],
      [[0x32], "DUP"],
      [[0x67, 0x30, 0x0a], "GET"],
      [[0x53, 0x27, 0x27, 0x0a], "STRING"],
      [[0x43, 0], "SHORT_BINBYTES"],
      [[0x8f], "EMPTY_SET"],
      [[0x8b, 0, 0, 0, 0], "LONG4"],
      [[0x97], "NEXT_BUFFER"],
      [[0xff], "0xff (unknown)"],
    ];
    for (const [op, name] of cases)
      refuses(
        P()
          .raw(...op)
          .stop()
          .bytes(),
        name,
        "at byte 2",
      );
  });

  test("rejects: persistent ids other than torch's storage tuple", () => {
    const pid = (build: (p: Pickle) => Pickle) => build(P()).binpersid().stop().bytes();
    refuses(
      pid((p) => p.str("0")),
      "a persistent id ('storage'",
    );
    refuses(
      pid((p) =>
        p.mark().str("module").global("torch", "FloatStorage").str("0").str("cpu").int(1).tuple(),
      ),
    );
    refuses(pid((p) => p.mark().str("storage").global("torch", "FloatStorage").tuple()));
    refuses(
      pid((p) =>
        p
          .mark()
          .str("storage")
          .global("collections", "OrderedDict")
          .str("0")
          .str("cpu")
          .int(1)
          .tuple(),
      ),
      "(str, global collections.OrderedDict, str, str, int)",
    );
    refuses(
      pid((p) =>
        p.mark().str("storage").global("torch", "FloatStorage").int(0).str("cpu").int(1).tuple(),
      ),
    );
  });

  test("rejects: REDUCE and BUILD of anything but torch's descriptors", () => {
    const od = (p: Pickle) => p.global("collections", "OrderedDict");
    refuses(
      P().global("torch", "FloatStorage").emptyTuple().reduce().stop().bytes(),
      "REDUCE of torch.FloatStorage",
    );
    refuses(od(P()).int(1).tupleN(1).reduce().stop().bytes(), "OrderedDict() without arguments");
    refuses(P().emptyList().emptyTuple().reduce().stop().bytes(), "REDUCE of an allowed global");
    refuses(od(P()).emptyList().reduce().stop().bytes(), "a tuple of arguments");
    refuses(
      P().global("torch._utils", "_rebuild_tensor_v2").emptyTuple().reduce().stop().bytes(),
      "_rebuild_tensor_v2()",
    );
    refuses(P().emptyDict().emptyDict().build().stop().bytes(), "BUILD of dict with dict");
    refuses(od(P()).emptyTuple().reduce().emptyList().build().stop().bytes(), "with list");
  });

  test("rejects: tensor arguments of the wrong kind or sign, and tensor metadata", () => {
    const tensor = (
      offset: number,
      size: number[],
      stride: number[],
      extra?: (p: Pickle) => Pickle,
    ) => {
      const p = P()
        .global("torch._utils", "_rebuild_tensor_v2")
        .mark()
        .storage("FloatStorage", "0", 4)
        .int(offset);
      p.mark();
      for (const d of size) p.int(d);
      p.tuple().mark();
      for (const d of stride) p.int(d);
      p.tuple().bool(false).global("collections", "OrderedDict").emptyTuple().reduce();
      return (extra ? extra(p) : p).tuple().reduce().stop().bytes();
    };
    refuses(tensor(-1, [2], [1]), "the storage offset as an int in [0, 2^53)", "got -1");
    refuses(tensor(0, [2], [-1]), "every stride as an int in [0, 2^53)");
    refuses(tensor(0, [2, 2], [1]), "size and stride int tuples of one length");
    // A 7th argument (torch ≥ 2 writes tensor metadata only when it is not empty) must be None or {}.
    expect(run(tensor(0, [2], [1], (p) => p.none()))).toMatchObject({ kind: "tensor" });
    refuses(
      tensor(0, [2], [1], (p) => p.emptyDict().str("neg").bool(true).setitem()),
      "no conj or neg bit",
      "neg",
    );
  });

  test("rejects: broken stack discipline", () => {
    refuses(P().none().none().stop().bytes(), "STOP with one value", "2 values");
    refuses(P().mark().none().stop().bytes(), "1 MARKs");
    refuses(P().none().stop().raw(0x4e).bytes(), "a pickle ending at STOP", "1 bytes after it");
    refuses(P().setitem().stop().bytes(), "SETITEM on an empty stack");
    refuses(P().emptyDict().mark().str("k").setitem().stop().bytes(), "on an empty stack"); // no pop across a MARK
    refuses(P().tuple().stop().bytes(), "TUPLE without a MARK");
    refuses(P().get(3).stop().bytes(), "a memo index that was stored", "BINGET 3");
    refuses(P().emptyDict().int(1).append().stop().bytes(), "onto a list", "got dict");
    refuses(P().emptyList().str("k").int(1).setitem().stop().bytes(), "into a dict", "got list");
    refuses(
      P().emptyDict().str("k").none().setitem().str("k").none().setitem().stop().bytes(),
      'key "k" twice',
    );
    refuses(P().emptyDict().float(1).none().setitem().stop().bytes(), "a str or an int", "float");
    refuses(P().emptyDict().mark().str("k").setitems().stop().bytes(), "key-value pairs");
    refuses(new Pickle().proto(6).none().stop().bytes(), "PROTO 6");
    refuses(P().proto(2).none().stop().bytes(), "as the first opcode", "at byte 2");
    refuses(new Uint8Array(0), "0 bytes");
  });

  test("rejects: every truncation of a recorded pickle", () => {
    const full = recordedPickle("nested.pt");
    for (let k = 0; k < full.length; k++) expectIoError(() => run(full.subarray(0, k)), "data.pkl");
  });

  test("regression: lengths beyond the bytes left are refused before anything is allocated", () => {
    refuses(
      P().raw(0x58, 0xff, 0xff, 0xff, 0xff, 0x41).stop().bytes(),
      "a string of 4294967295 bytes",
    );
    refuses(
      P().raw(0x8d, 0, 0, 0, 0, 0, 0, 0, 0x80).stop().bytes(),
      "a string within the bytes left",
    );
    refuses(
      P().raw(0x95, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff).stop().bytes(),
      "a FRAME within the bytes left",
    );
    refuses(P().raw(0x8a, 200, 1, 2).stop().bytes(), "LONG1 of 200 bytes");
    refuses(P().raw(0x58, 2, 0, 0, 0, 0xff, 0xfe).stop().bytes(), "valid UTF-8");
    refuses(P().global("a".repeat(300), "b").stop().bytes(), "a line of at most 256 bytes");
    refuses(
      P().raw(0x49, 0x31, 0x2e, 0x35, 0x0a).stop().bytes(),
      'INT as 00, 01 or a decimal integer; got "1.5"',
    );
  });

  test("regression: the stack and the marks are capped", () => {
    const p = P();
    for (let i = 0; i <= MAX_PICKLE_STACK; i++) p.none();
    refuses(p.stop().bytes(), `at most ${MAX_PICKLE_STACK} values on its stack`);
    const q = P();
    for (let i = 0; i <= MAX_PICKLE_MARKS; i++) q.mark();
    refuses(q.stop().bytes(), `at most ${MAX_PICKLE_MARKS} open MARKs`);
  });

  test("regression: 100000 nested lists build without recursion", () => {
    const p = P();
    for (let i = 0; i < 100_000; i++) p.emptyList();
    for (let i = 1; i < 100_000; i++) p.append();
    let v = run(p.stop().bytes());
    let depth = 1;
    while (typeof v === "object" && v !== null && v.kind === "list" && v.items.length === 1) {
      v = v.items[0] as PyValue;
      depth++;
    }
    expect(depth).toBe(100_000);
  });

  test("property: any bytes give a value or an IoError", () => {
    const ops = fc.array(
      fc.oneof(
        fc.constantFrom(
          0x28,
          0x29,
          0x2e,
          0x4e,
          0x51,
          0x52,
          0x5d,
          0x61,
          0x62,
          0x65,
          0x73,
          0x74,
          0x75,
          0x7d,
          0x85,
          0x86,
          0x87,
          0x88,
          0x93,
          0x94,
        ),
        fc.integer({ min: 0, max: 255 }),
      ),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(ops, (body) => {
        try {
          run(Uint8Array.from([0x80, 2, ...body]));
        } catch (e) {
          if (!(e instanceof IoError)) throw e;
        }
      }),
      { seed: 20261130, numRuns: 2000 },
    );
  });
});
