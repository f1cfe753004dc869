/**
 * A restricted pickle interpreter for the `data.pkl` of `torch.save` files
 * (docs/io.md#restricted-unpickler). It is a stack machine over a fixed opcode allow-list that
 * builds plain values and never calls anything: a global is only looked up in a fixed allow-list
 * (torch's tensor rebuilders, `collections.OrderedDict` and the typed storage classes), and
 * REDUCE of an allowed global builds a descriptor object (`{kind: "tensor", storage, offset, size,
 * stride}`), never a function call. Any other opcode or global is an IoError naming it and its
 * byte offset. Bounded: every length is checked against the remaining bytes, each opcode consumes
 * at least one byte (so the opcode count is at most the input length and the work is linear),
 * the stack, the mark stack and line lengths are capped, and nothing recurses.
 * @internal
 */
import { fmtValue } from "../../core/message.js";
import type { IoError } from "../../errors.js";
import type { TensorDtype } from "../tensorTypes.js";
import { ioError } from "./ioError.js";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A list built by EMPTY_LIST and APPEND(S). @internal */
export interface PyList {
  readonly kind: "list";
  readonly items: PyValue[];
}

/** A tuple (immutable). @internal */
export interface PyTuple {
  readonly kind: "tuple";
  readonly items: readonly PyValue[];
}

/** A dict (`ordered` when built by `collections.OrderedDict()`); keys are str or int, distinct. @internal */
export interface PyDict {
  readonly kind: "dict";
  readonly ordered: boolean;
  readonly keys: (string | bigint)[];
  readonly values: PyValue[];
  readonly index: Map<string, number>;
}

/** An allowed global, not yet used. @internal */
export interface PyGlobal {
  readonly kind: "global";
  readonly name: string;
}

/** A persistent id `('storage', torch.<T>Storage, key, location, numel)`. @internal */
export interface StorageRef {
  readonly kind: "storage";
  readonly dtype: TensorDtype;
  readonly storageType: string;
  readonly key: string;
  readonly location: string;
  readonly numel: number;
}

/** `_rebuild_tensor_v2(storage, offset, size, stride, …)` as data; `at` is the REDUCE's byte. @internal */
export interface TensorRef {
  readonly kind: "tensor";
  readonly storage: StorageRef;
  readonly offset: number;
  readonly size: readonly number[];
  readonly stride: readonly number[];
  readonly at: number;
}

/** Every value the interpreter builds: None, bool, int (bigint), float, str, containers, refs. @internal */
export type PyValue =
  | null
  | boolean
  | bigint
  | number
  | string
  | PyList
  | PyTuple
  | PyDict
  | PyGlobal
  | StorageRef
  | TensorRef;

/** The typed storage classes torch writes, by global name, and the dtype of their elements. @internal */
export const STORAGE_DTYPES: Readonly<Record<string, TensorDtype>> = {
  "torch.DoubleStorage": "F64",
  "torch.FloatStorage": "F32",
  "torch.HalfStorage": "F16",
  "torch.BFloat16Storage": "BF16",
  "torch.LongStorage": "I64",
  "torch.IntStorage": "I32",
  "torch.ShortStorage": "I16",
  "torch.CharStorage": "I8",
  "torch.ByteStorage": "U8",
  "torch.BoolStorage": "BOOL",
};

const REBUILD_TENSOR = "torch._utils._rebuild_tensor_v2";
const REBUILD_PARAMETER = "torch._utils._rebuild_parameter";
const ORDERED_DICT = "collections.OrderedDict";

/** Every global the interpreter accepts. @internal */
export const ALLOWED_GLOBALS: readonly string[] = [
  REBUILD_TENSOR,
  REBUILD_PARAMETER,
  ORDERED_DICT,
  ...Object.keys(STORAGE_DTYPES),
];

/** Globals of torch that are known but unsupported, with the reason given in the error. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  "torch.ComplexFloatStorage": "complex tensors are not supported",
  "torch.ComplexDoubleStorage": "complex tensors are not supported",
  "torch.ComplexHalfStorage": "complex tensors are not supported",
  "torch.QInt8Storage": "quantized tensors are not supported",
  "torch.QUInt8Storage": "quantized tensors are not supported",
  "torch.QInt32Storage": "quantized tensors are not supported",
  "torch.QUInt4x2Storage": "quantized tensors are not supported",
  "torch.QUInt2x4Storage": "quantized tensors are not supported",
  "torch._utils._rebuild_qtensor": "quantized tensors are not supported",
  "torch._utils._rebuild_sparse_tensor": "sparse tensors are not supported",
  "torch._utils._rebuild_parameter_with_state":
    "parameters with python attributes are not supported",
  "torch._tensor._rebuild_from_type_v2":
    "tensor subclasses and tensors with python attributes are not supported",
};

/** Names of every pickle opcode (protocols 0–5), so a refused one is named in its error. */
const OPCODE_NAMES: ReadonlyMap<number, string> = new Map(
  `
  28:MARK 29:EMPTY_TUPLE 2e:STOP 30:POP 31:POP_MARK 32:DUP 42:BINBYTES 43:SHORT_BINBYTES
  46:FLOAT 47:BINFLOAT 49:INT 4a:BININT 4b:BININT1 4c:LONG 4d:BININT2 4e:NONE 50:PERSID
  51:BINPERSID 52:REDUCE 53:STRING 54:BINSTRING 55:SHORT_BINSTRING 56:UNICODE 58:BINUNICODE
  5d:EMPTY_LIST 61:APPEND 62:BUILD 63:GLOBAL 64:DICT 65:APPENDS 67:GET 68:BINGET 69:INST
  6a:LONG_BINGET 6c:LIST 6f:OBJ 70:PUT 71:BINPUT 72:LONG_BINPUT 73:SETITEM 74:TUPLE
  75:SETITEMS 7d:EMPTY_DICT 80:PROTO 81:NEWOBJ 82:EXT1 83:EXT2 84:EXT4 85:TUPLE1 86:TUPLE2
  87:TUPLE3 88:NEWTRUE 89:NEWFALSE 8a:LONG1 8b:LONG4 8c:SHORT_BINUNICODE 8d:BINUNICODE8
  8e:BINBYTES8 8f:EMPTY_SET 90:ADDITEMS 91:FROZENSET 92:NEWOBJ_EX 93:STACK_GLOBAL 94:MEMOIZE
  95:FRAME 96:BYTEARRAY8 97:NEXT_BUFFER 98:READONLY_BUFFER
  `
    .trim()
    .split(/\s+/)
    .map((pair) => {
      const [hex, name] = pair.split(":") as [string, string];
      return [Number.parseInt(hex, 16), name];
    }),
);

/** Most values on the stack at once. @internal */
export const MAX_PICKLE_STACK: number = 2 ** 20;
/** Most open MARKs at once. @internal */
export const MAX_PICKLE_MARKS = 1024;
/** Longest text line (GLOBAL module or name, INT, LONG), newline included. @internal */
export const MAX_PICKLE_LINE = 256;

/** `opcode 0x63 GLOBAL` */
function opName(op: number): string {
  const name = OPCODE_NAMES.get(op);
  return `opcode 0x${op.toString(16).padStart(2, "0")}${name === undefined ? " (unknown)" : ` ${name}`}`;
}

/** A short description of a value's type for messages. @internal */
export function pyType(v: PyValue): string {
  if (v === null) return "None";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "float";
    case "string":
      return "str";
    default:
      return v.kind === "global" ? `global ${v.name}` : v.kind;
  }
}

/**
 * Run the restricted interpreter over `bytes` (a whole pickle) and return the value STOP leaves.
 *
 * Format: a pickle of protocol 1–5 restricted to the opcodes and globals of
 * docs/io.md#restricted-unpickler; `arg` names the pickle in errors (e.g. `archive/data.pkl`).
 *
 * @throws {IoError} E_IO (arg `arg`) for a refused opcode or global (named, with its byte
 *   offset), a truncated or malformed pickle, or a value of the wrong kind for an opcode.
 * @internal
 */
export function unpickle(fn: string, bytes: Uint8Array, path: string, arg: string): PyValue {
  const n = bytes.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: PyValue[] = [];
  const marks: number[] = [];
  const memo = new Map<number, PyValue>();
  let p = 0;
  let at = 0; // byte offset of the current opcode
  let op = 0;

  const fail = (rule: string, actual: string): IoError =>
    ioError(fn, path, arg, rule, `${actual} at byte ${at}`);
  const need = (k: number, what: string): void => {
    if (k > n - p) {
      throw fail(`a complete pickle (${what} of ${k} bytes)`, `${n - p} bytes left (truncated)`);
    }
  };
  const push = (v: PyValue): void => {
    if (stack.length >= MAX_PICKLE_STACK) {
      throw fail(`a pickle of at most ${MAX_PICKLE_STACK} values on its stack`, "more");
    }
    stack.push(v);
  };
  const base = (): number => (marks.length === 0 ? 0 : (marks[marks.length - 1] as number));
  const pop = (): PyValue => {
    if (stack.length <= base())
      throw fail("a well-formed pickle", `${opName(op)} on an empty stack`);
    return stack.pop() as PyValue;
  };
  const top = (): PyValue => {
    if (stack.length <= base())
      throw fail("a well-formed pickle", `${opName(op)} on an empty stack`);
    return stack[stack.length - 1] as PyValue;
  };
  const popMark = (): PyValue[] => {
    if (marks.length === 0) throw fail("a well-formed pickle", `${opName(op)} without a MARK`);
    const from = marks.pop() as number;
    return stack.splice(from);
  };
  const line = (what: string): string => {
    const end = bytes.subarray(p, Math.min(n, p + MAX_PICKLE_LINE)).indexOf(0x0a);
    if (end < 0) {
      throw fail(`${what} as a line of at most ${MAX_PICKLE_LINE} bytes ending in \\n`, "none");
    }
    const text = utf8(bytes.subarray(p, p + end));
    p += end + 1;
    return text;
  };
  const str = (len: number): string => {
    need(len, "a string");
    const s = utf8(bytes.subarray(p, p + len));
    p += len;
    return s;
  };
  const utf8 = (b: Uint8Array): string => {
    try {
      return UTF8.decode(b);
    } catch (e) {
      if (e instanceof TypeError) {
        throw fail("valid UTF-8 text in its strings", `invalid UTF-8 bytes in ${opName(op)}`);
      }
      throw fail("strings small enough to decode", `${b.length} bytes in ${opName(op)}`);
    }
  };
  const intOf = (v: PyValue, what: string, min: number): number => {
    if (typeof v !== "bigint" || v < BigInt(min) || v > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw fail(
        `${what} as an int in [${min}, 2^53)`,
        typeof v === "bigint" ? String(v) : pyType(v),
      );
    }
    return Number(v);
  };
  const global = (name: string): PyGlobal => {
    if (ALLOWED_GLOBALS.includes(name)) return { kind: "global", name };
    const why = UNSUPPORTED[name];
    throw fail(
      `an allowed global (${ALLOWED_GLOBALS.join(", ")})${why === undefined ? "" : `: ${why}`}`,
      `global ${fmtValue(name)}`,
    );
  };

  if (n === 0) throw fail("a complete pickle", "0 bytes");
  for (;;) {
    if (p >= n) throw fail("a complete pickle (ending with STOP)", "the end of the bytes");
    at = p;
    op = bytes[p++] as number;
    switch (op) {
      case 0x80: {
        // PROTO
        need(1, "PROTO's version");
        const v = bytes[p++] as number;
        if (at !== 0 || v > 5) throw fail("PROTO 0–5 as the first opcode", `PROTO ${v}`);
        break;
      }
      case 0x95: {
        // FRAME: a length prefix of the following opcodes; only checked against the bytes left.
        need(8, "FRAME's length");
        const len = view.getBigUint64(p, true);
        p += 8;
        if (len > BigInt(n - p)) throw fail("a FRAME within the bytes left", `${len} bytes`);
        break;
      }
      case 0x7d: // EMPTY_DICT
        push({ kind: "dict", ordered: false, keys: [], values: [], index: new Map() });
        break;
      case 0x5d: // EMPTY_LIST
        push({ kind: "list", items: [] });
        break;
      case 0x29: // EMPTY_TUPLE
        push({ kind: "tuple", items: [] });
        break;
      case 0x28: // MARK
        if (marks.length >= MAX_PICKLE_MARKS) {
          throw fail(`a pickle of at most ${MAX_PICKLE_MARKS} open MARKs`, "more");
        }
        marks.push(stack.length);
        break;
      case 0x74: // TUPLE
        push({ kind: "tuple", items: popMark() });
        break;
      case 0x85:
      case 0x86:
      case 0x87: {
        // TUPLE1, TUPLE2, TUPLE3
        const items: PyValue[] = [];
        for (let k = op - 0x84; k > 0; k--) items.unshift(pop());
        push({ kind: "tuple", items });
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItem(top(), k, v);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        if (items.length % 2 !== 0)
          throw fail("SETITEMS of key-value pairs", `${items.length} values`);
        const d = top();
        for (let i = 0; i < items.length; i += 2)
          setItem(d, items[i] as PyValue, items[i + 1] as PyValue);
        break;
      }
      case 0x61: {
        // APPEND
        const v = pop();
        listOf(top()).push(v);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        const l = listOf(top());
        for (const v of items) l.push(v);
        break;
      }
      case 0x4a: // BININT
        need(4, "BININT");
        push(BigInt(view.getInt32(p, true)));
        p += 4;
        break;
      case 0x4b: // BININT1
        need(1, "BININT1");
        push(BigInt(bytes[p++] as number));
        break;
      case 0x4d: // BININT2
        need(2, "BININT2");
        push(BigInt(view.getUint16(p, true)));
        p += 2;
        break;
      case 0x8a: {
        // LONG1: n bytes, little-endian two's complement
        need(1, "LONG1's length");
        const len = bytes[p++] as number;
        need(len, "LONG1");
        let v = 0n;
        for (let i = len - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[p + i] as number);
        if (len > 0 && (bytes[p + len - 1] as number) >= 0x80) v -= 1n << BigInt(8 * len);
        p += len;
        push(v);
        break;
      }
      case 0x49: {
        // INT (protocol 0/1 text): "00" / "01" are False / True, else a decimal int
        const t = line("INT");
        if (t === "00" || t === "01") push(t === "01");
        else if (/^-?(0|[1-9][0-9]*)$/.test(t)) push(BigInt(t));
        else throw fail("INT as 00, 01 or a decimal integer", fmtValue(t));
        break;
      }
      case 0x4c: {
        // LONG (protocol 0/1 text): a decimal int with an optional trailing L
        const t = line("LONG");
        if (!/^-?(0|[1-9][0-9]*)L?$/.test(t)) throw fail("LONG as a decimal integer", fmtValue(t));
        push(BigInt(t.endsWith("L") ? t.slice(0, -1) : t));
        break;
      }
      case 0x47: // BINFLOAT: big-endian float64
        need(8, "BINFLOAT");
        push(view.getFloat64(p, false));
        p += 8;
        break;
      case 0x58: // BINUNICODE
        need(4, "BINUNICODE's length");
        p += 4;
        push(str(view.getUint32(p - 4, true)));
        break;
      case 0x8c: // SHORT_BINUNICODE
        need(1, "SHORT_BINUNICODE's length");
        push(str(bytes[p++] as number));
        break;
      case 0x8d: {
        // BINUNICODE8
        need(8, "BINUNICODE8's length");
        const len = view.getBigUint64(p, true);
        p += 8;
        if (len > BigInt(n - p)) throw fail("a string within the bytes left", `${len} bytes`);
        push(str(Number(len)));
        break;
      }
      case 0x71: // BINPUT
        need(1, "BINPUT");
        memo.set(bytes[p++] as number, top());
        break;
      case 0x72: // LONG_BINPUT
        need(4, "LONG_BINPUT");
        memo.set(view.getUint32(p, true), top());
        p += 4;
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x68:
      case 0x6a: {
        // BINGET, LONG_BINGET
        const w = op === 0x68 ? 1 : 4;
        need(w, opName(op));
        const i = w === 1 ? (bytes[p] as number) : view.getUint32(p, true);
        p += w;
        const v = memo.get(i);
        if (v === undefined) throw fail("a memo index that was stored", `${opName(op)} ${i}`);
        push(v);
        break;
      }
      case 0x4e: // NONE
        push(null);
        break;
      case 0x88: // NEWTRUE
        push(true);
        break;
      case 0x89: // NEWFALSE
        push(false);
        break;
      case 0x63: {
        // GLOBAL "module\nname\n"
        const module = line("GLOBAL's module");
        const name = line("GLOBAL's name");
        push(global(`${module}.${name}`));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== "string" || typeof name !== "string") {
          throw fail("STACK_GLOBAL of two str", `${pyType(module)} and ${pyType(name)}`);
        }
        push(global(`${module}.${name}`));
        break;
      }
      case 0x51: // BINPERSID
        push(persistent(pop()));
        break;
      case 0x52: {
        // REDUCE: build a descriptor; nothing is called
        const args = pop();
        const callable = pop();
        push(reduce(callable, args));
        break;
      }
      case 0x62: {
        // BUILD: only an OrderedDict's attribute state (state_dict's _metadata), which is dropped
        const state = pop();
        const obj = top();
        const isDict = (v: PyValue) => v !== null && typeof v === "object" && v.kind === "dict";
        if (!isDict(obj) || !(obj as PyDict).ordered || !(state === null || isDict(state))) {
          throw fail(
            "BUILD only of an OrderedDict with a dict or None state",
            `BUILD of ${pyType(obj)} with ${pyType(state)}`,
          );
        }
        break;
      }
      case 0x2e: // STOP
        if (marks.length > 0 || stack.length !== 1) {
          throw fail(
            "STOP with one value and no open MARK",
            `${stack.length} values, ${marks.length} MARKs`,
          );
        }
        if (p !== n) throw fail("a pickle ending at STOP", `${n - p} bytes after it`);
        return stack[0] as PyValue;
      default:
        throw fail("an allowed pickle opcode (docs/io.md#restricted-unpickler)", opName(op));
    }
  }

  function listOf(v: PyValue): PyValue[] {
    if (v === null || typeof v !== "object" || v.kind !== "list") {
      throw fail(`${opName(op)} onto a list`, pyType(v));
    }
    return v.items;
  }

  function setItem(d: PyValue, k: PyValue, v: PyValue): void {
    if (d === null || typeof d !== "object" || d.kind !== "dict") {
      throw fail(`${opName(op)} into a dict`, pyType(d));
    }
    if (typeof k !== "string" && typeof k !== "bigint") {
      throw fail("a dict key that is a str or an int", pyType(k));
    }
    const tag = typeof k === "string" ? `s${k}` : `i${k}`;
    if (d.index.has(tag)) throw fail("distinct dict keys", `key ${fmtValue(String(k))} twice`);
    d.index.set(tag, d.keys.length);
    d.keys.push(k);
    d.values.push(v);
  }

  function persistent(pid: PyValue): StorageRef {
    const t = pid !== null && typeof pid === "object" && pid.kind === "tuple" ? pid.items : null;
    const [tag, type, key, location, numel] = t ?? [];
    if (
      t === null ||
      t.length !== 5 ||
      tag !== "storage" ||
      type === null ||
      typeof type !== "object" ||
      type.kind !== "global" ||
      STORAGE_DTYPES[type.name] === undefined ||
      typeof key !== "string" ||
      typeof location !== "string"
    ) {
      throw fail(
        "a persistent id ('storage', torch.<T>Storage, key, location, numel)",
        t === null ? pyType(pid) : `(${t.map(pyType).join(", ")})`,
      );
    }
    return {
      kind: "storage",
      dtype: STORAGE_DTYPES[type.name] as TensorDtype,
      storageType: type.name,
      key,
      location,
      numel: intOf(numel as PyValue, "the storage numel", 0),
    };
  }

  function reduce(callable: PyValue, args: PyValue): PyValue {
    if (callable === null || typeof callable !== "object" || callable.kind !== "global") {
      throw fail("REDUCE of an allowed global", pyType(callable));
    }
    if (args === null || typeof args !== "object" || args.kind !== "tuple") {
      throw fail(`REDUCE of ${callable.name} with a tuple of arguments`, pyType(args));
    }
    const a = args.items;
    const isDict = (v: PyValue | undefined) =>
      v != null && typeof v === "object" && v.kind === "dict";
    const sig = `(${a.map(pyType).join(", ")})`;
    if (callable.name === ORDERED_DICT) {
      if (a.length !== 0) throw fail("OrderedDict() without arguments", `OrderedDict${sig}`);
      return { kind: "dict", ordered: true, keys: [], values: [], index: new Map() };
    }
    if (callable.name === REBUILD_PARAMETER) {
      const [t, grad, hooks] = a;
      if (a.length !== 3 || !isTensor(t) || typeof grad !== "boolean" || !isDict(hooks)) {
        throw fail("_rebuild_parameter(tensor, requires_grad, hooks)", `_rebuild_parameter${sig}`);
      }
      return t;
    }
    if (callable.name === REBUILD_TENSOR) {
      const [storage, offset, size, stride, grad, hooks, meta] = a;
      if (
        (a.length !== 6 && a.length !== 7) ||
        storage === null ||
        typeof storage !== "object" ||
        storage.kind !== "storage" ||
        !isIntTuple(size) ||
        !isIntTuple(stride) ||
        size.items.length !== stride.items.length ||
        typeof grad !== "boolean" ||
        !isDict(hooks)
      ) {
        throw fail(
          "_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) with size and stride int tuples of one length",
          `_rebuild_tensor_v2${sig}`,
        );
      }
      if (a.length === 7 && meta !== null && (!isDict(meta) || (meta as PyDict).keys.length > 0)) {
        const keys = isDict(meta)
          ? (meta as PyDict).keys.map(String).join(", ")
          : pyType(meta as PyValue);
        throw fail("tensor metadata that is None or empty (no conj or neg bit)", keys);
      }
      return {
        kind: "tensor",
        storage,
        offset: intOf(offset as PyValue, "the storage offset", 0),
        size: size.items.map((d) => intOf(d, "every size", 0)),
        stride: stride.items.map((d) => intOf(d, "every stride", 0)),
        at,
      };
    }
    throw fail(`REDUCE of a callable global`, `REDUCE of ${callable.name}`);
  }
}

function isTensor(v: PyValue | undefined): v is TensorRef {
  return v != null && typeof v === "object" && v.kind === "tensor";
}

function isIntTuple(v: PyValue | undefined): v is PyTuple {
  return (
    v != null &&
    typeof v === "object" &&
    v.kind === "tuple" &&
    v.items.every((x) => typeof x === "bigint")
  );
}
