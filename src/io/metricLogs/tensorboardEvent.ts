/**
 * The protobuf side of the TensorBoard event-file reader (docs/diagnostics/logs.md#tensorboard-event-files):
 * one `Event` record's bytes → its step and the scalars of its summary. The wire format is read
 * with `@bufbuild/protobuf`'s BinaryReader; only the fields a scalar needs are decoded (Event.step
 * and .summary, Summary.value, Value.tag / .node_name / .simple_value / .tensor / .metadata,
 * TensorProto.dtype / .tensor_shape / .tensor_content and its value fields, SummaryMetadata's
 * plugin name and data class), every other field is skipped by its wire type. Pure (no `node:`
 * import).
 * @internal
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { bf16ToNumber, f16ToNumber } from "../../core/halfFloat.js";
import { fmtValue } from "../../core/message.js";

/** A record that is not a valid `Event` (the reader lists it as a problem and goes on). */
export class Malformed extends Error {}

/** One scalar of an event, or why one value of it was skipped. @internal */
export type EventValue =
  | { readonly kind: "scalar"; readonly tag: string; readonly value: number }
  | { readonly kind: "skipped" }
  | { readonly kind: "problem"; readonly what: string };

/** The step and values of one event; `values` is empty for an event without a summary. */
export interface DecodedEvent {
  readonly step: number;
  readonly values: readonly EventValue[];
}

/** The numeric TensorFlow DataTypes read, by number: name and byte size in tensor_content. */
const DTYPES: ReadonlyMap<number, { readonly name: string; readonly size: number }> = new Map([
  [1, { name: "DT_FLOAT", size: 4 }],
  [2, { name: "DT_DOUBLE", size: 8 }],
  [3, { name: "DT_INT32", size: 4 }],
  [4, { name: "DT_UINT8", size: 1 }],
  [5, { name: "DT_INT16", size: 2 }],
  [6, { name: "DT_INT8", size: 1 }],
  [9, { name: "DT_INT64", size: 8 }],
  [14, { name: "DT_BFLOAT16", size: 2 }],
  [17, { name: "DT_UINT16", size: 2 }],
  [19, { name: "DT_HALF", size: 2 }],
  [22, { name: "DT_UINT32", size: 4 }],
  [23, { name: "DT_UINT64", size: 8 }],
]);

/** The TensorProto value field each dtype's values are in (float_val, double_val, int_val…). */
const VALUE_FIELD: Readonly<Record<number, number>> = {
  1: 5,
  2: 6,
  3: 7,
  4: 7,
  5: 7,
  6: 7,
  17: 7,
  9: 10,
  14: 13,
  19: 13,
  22: 16,
  23: 17,
};

const TWO_53 = 2n ** 53n;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

function expectWire(got: number, want: WireType, field: string): void {
  if (got !== want) throw new Malformed(`${field} has wire type ${got}, not ${want}`);
}

/**
 * Visit the fields of the message that ends at `end`, then check that the last one ended exactly
 * there. Every visit reads at least the tag's byte, so the loop ends.
 */
function fields(
  r: BinaryReader,
  end: number,
  what: string,
  visit: (no: number, wt: number) => void,
): void {
  if (end > r.len) throw new Malformed(`${what} runs past the record`);
  while (r.pos < end) {
    const [no, wt] = r.tag();
    visit(no, wt);
  }
  if (r.pos !== end) throw new Malformed(`a field of ${what} runs past its end`);
}

/** The end of the length-delimited field whose length comes next. */
function sub(r: BinaryReader): number {
  return r.uint32() + r.pos;
}

function text(r: BinaryReader, field: string): string {
  const b = r.bytes();
  try {
    return UTF8.decode(b);
  } catch {
    throw new Malformed(`${field} is not valid UTF-8`);
  }
}

/** An int64 / uint64 within ±2^53 as a number, else a Malformed naming `field`. */
function exact(v: bigint | string, field: string): number {
  const b = typeof v === "bigint" ? v : BigInt(v);
  if (b > TWO_53 || b < -TWO_53) throw new Malformed(`${field} ${b} is beyond ±2^53`);
  return Number(b);
}

/** Metadata of a value: its plugin name and data class (0 when unset). */
interface Metadata {
  plugin: string;
  dataClass: number;
}

function readMetadata(r: BinaryReader, end: number): Metadata {
  const m: Metadata = { plugin: "", dataClass: 0 };
  fields(r, end, "SummaryMetadata", (no, wt) => {
    if (no === 1 && wt === WireType.LengthDelimited) {
      fields(r, sub(r), "SummaryMetadata.plugin_data", (pno, pwt) => {
        if (pno === 1) {
          expectWire(pwt, WireType.LengthDelimited, "PluginData.plugin_name");
          m.plugin = text(r, "PluginData.plugin_name");
        } else r.skip(pwt, pno);
      });
    } else if (no === 4 && wt === WireType.Varint) m.dataClass = r.int32();
    else r.skip(wt, no);
  });
  return m;
}

/** One value field of a TensorProto: how many values it holds, and its first one. */
interface Values {
  count: number;
  first: number | bigint | undefined;
}

/** A TensorProto read far enough to tell a scalar: dtype, rank, content and value fields. */
interface Tensor {
  dtype: number;
  rank: number;
  unknownRank: boolean;
  content: Uint8Array | undefined;
  values: Map<number, Values>;
}

/** The TensorProto value fields read: float, double, int, int64, half, uint32, uint64. */
const VALUE_FIELDS: ReadonlySet<number> = new Set([5, 6, 7, 10, 13, 16, 17]);

/** Count the values of field `no` (packed or not), keeping the first (no array is built). */
function readValueField(r: BinaryReader, no: number, wt: number, into: Values): void {
  const read = (): number | bigint => {
    switch (no) {
      case 5:
        return r.float();
      case 6:
        return r.double();
      case 10: {
        const v = r.int64();
        return typeof v === "bigint" ? v : BigInt(v);
      }
      case 17: {
        const v = r.uint64();
        return typeof v === "bigint" ? v : BigInt(v);
      }
      case 16:
        return r.uint32();
      default:
        return r.int32(); // int_val, half_val
    }
  };
  const take = (): void => {
    const v = read();
    if (into.count++ === 0) into.first = v;
  };
  if (wt === WireType.LengthDelimited) {
    // Packed: values up to the end of the field (each read advances, so the loop ends).
    const end = sub(r);
    if (end > r.len) throw new Malformed(`TensorProto field ${no} runs past the record`);
    while (r.pos < end) take();
    if (r.pos !== end) throw new Malformed(`TensorProto field ${no} ends inside a value`);
    return;
  }
  const want = no === 5 ? WireType.Bit32 : no === 6 ? WireType.Bit64 : WireType.Varint;
  expectWire(wt, want, `TensorProto field ${no}`);
  take();
}

function readTensor(r: BinaryReader, end: number): Tensor {
  const t: Tensor = {
    dtype: 0,
    rank: 0,
    unknownRank: false,
    content: undefined,
    values: new Map(),
  };
  fields(r, end, "TensorProto", (no, wt) => {
    if (no === 1 && wt === WireType.Varint) t.dtype = r.int32();
    else if (no === 2 && wt === WireType.LengthDelimited) {
      fields(r, sub(r), "TensorShapeProto", (sno, swt) => {
        if (sno === 2) t.rank++;
        if (sno === 3 && swt === WireType.Varint) t.unknownRank = r.bool();
        else r.skip(swt, sno);
      });
    } else if (no === 4 && wt === WireType.LengthDelimited) t.content = r.bytes();
    else if (VALUE_FIELDS.has(no)) {
      let v = t.values.get(no);
      if (v === undefined) {
        v = { count: 0, first: undefined };
        t.values.set(no, v);
      }
      readValueField(r, no, wt, v);
    } else r.skip(wt, no);
  });
  return t;
}

/** The scalar a rank-0 tensor holds, `undefined` when it is not a numeric scalar (skipped). */
function tensorScalar(t: Tensor): number | undefined {
  const dt = DTYPES.get(t.dtype);
  if (dt === undefined || t.rank !== 0 || t.unknownRank) return undefined;
  if (t.content !== undefined && t.content.length > 0) {
    const c = t.content;
    if (c.length !== dt.size) {
      throw new Malformed(
        `a rank-0 ${dt.name} tensor_content of ${c.length} bytes, not ${dt.size}`,
      );
    }
    const v = new DataView(c.buffer, c.byteOffset, c.length);
    switch (t.dtype) {
      case 1:
        return v.getFloat32(0, true);
      case 2:
        return v.getFloat64(0, true);
      case 3:
        return v.getInt32(0, true);
      case 4:
        return v.getUint8(0);
      case 5:
        return v.getInt16(0, true);
      case 6:
        return v.getInt8(0);
      case 9:
        return exact(v.getBigInt64(0, true), "a DT_INT64 value");
      case 14:
        return bf16ToNumber(v.getUint16(0, true));
      case 17:
        return v.getUint16(0, true);
      case 19:
        return f16ToNumber(v.getUint16(0, true));
      case 22:
        return v.getUint32(0, true);
      default:
        return exact(v.getBigUint64(0, true), "a DT_UINT64 value");
    }
  }
  const vals = t.values.get(VALUE_FIELD[t.dtype] as number);
  // TensorFlow fills a tensor given no values with zeros.
  if (vals === undefined || vals.count === 0) return 0;
  if (vals.count > 1) throw new Malformed(`a rank-0 ${dt.name} tensor of ${vals.count} values`);
  const x = vals.first as number | bigint;
  if (typeof x === "bigint") return exact(x, `a ${dt.name} value`);
  switch (t.dtype) {
    case 4:
      return x & 0xff;
    case 5:
      return (x << 16) >> 16;
    case 6:
      return (x << 24) >> 24;
    case 17:
      return x & 0xffff;
    case 14:
      return bf16ToNumber(x & 0xffff);
    case 19:
      return f16ToNumber(x & 0xffff);
    default:
      return x;
  }
}

/**
 * Decode one Summary.Value: a scalar (`simple_value`, or a rank-0 numeric `tensor` whose tag is
 * not another plugin's), a skipped value (an image, a histogram, text, audio, a tensor of another
 * plugin or shape), or a problem (no tag, a malformed scalar tensor). `plugins` remembers each
 * tag's plugin from the first metadata seen (writers send it with a tag's first value only).
 */
function readValue(r: BinaryReader, end: number, plugins: Map<string, string>): EventValue {
  let tag = "";
  let nodeName = "";
  let simple: number | undefined;
  let tensor: Tensor | undefined;
  let other = false;
  let meta: Metadata | undefined;
  // simple_value, the histogram/image/audio fields and tensor are one oneof: the last one wins.
  fields(r, end, "Summary.Value", (no, wt) => {
    if (no === 1 || no === 7) {
      expectWire(wt, WireType.LengthDelimited, no === 1 ? "Value.tag" : "Value.node_name");
      if (no === 1) tag = text(r, "Value.tag");
      else nodeName = text(r, "Value.node_name");
    } else if (no === 2) {
      expectWire(wt, WireType.Bit32, "Value.simple_value");
      simple = r.float();
      tensor = undefined;
      other = false;
    } else if (no === 8 && wt === WireType.LengthDelimited) {
      tensor = readTensor(r, sub(r));
      simple = undefined;
      other = false;
    } else if (no === 9 && wt === WireType.LengthDelimited) {
      meta = readMetadata(r, sub(r));
    } else {
      if (no >= 3 && no <= 6) {
        other = true;
        simple = undefined;
        tensor = undefined;
      }
      r.skip(wt, no);
    }
  });
  const name = tag !== "" ? tag : nodeName;
  if (meta !== undefined && !plugins.has(name)) {
    plugins.set(name, meta.dataClass === 1 ? "scalars" : meta.plugin);
  }
  if (other || (simple === undefined && tensor === undefined)) return { kind: "skipped" };
  if (name === "") return { kind: "problem", what: "a Summary.Value without a tag" };
  if (simple !== undefined) return { kind: "scalar", tag: name, value: simple };
  const plugin = plugins.get(name) ?? "";
  if (plugin !== "" && plugin !== "scalars") return { kind: "skipped" };
  try {
    const value = tensorScalar(tensor as Tensor);
    return value === undefined ? { kind: "skipped" } : { kind: "scalar", tag: name, value };
  } catch (e) {
    if (e instanceof Malformed)
      return { kind: "problem", what: `tag ${fmtValue(name)}: ${e.message}` };
    throw e;
  }
}

/**
 * Decode one `Event` (its CRC already checked): the step (an int64 within ±2^53) and the values
 * of its summary. Throws {@link Malformed} on a record that is not a valid Event (the reader
 * lists it and goes on); a wire error of the BinaryReader (an Error or RangeError: a varint
 * past the end, a length past the record, a bad wire type) is turned into one. @internal
 */
export function decodeEvent(data: Uint8Array, plugins: Map<string, string>): DecodedEvent {
  const r = new BinaryReader(data);
  try {
    let step = 0;
    const summaries: [number, number][] = [];
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      if (no === 2) {
        expectWire(wt, WireType.Varint, "Event.step");
        step = exact(r.int64(), "Event.step");
      } else if (no === 5) {
        expectWire(wt, WireType.LengthDelimited, "Event.summary");
        const b = r.bytes();
        summaries.push([b.byteOffset - data.byteOffset, b.length]);
      } else r.skip(wt, no);
    }
    const values: EventValue[] = [];
    // Summary.value (field 1) is repeated: several summary fields concatenate their values.
    for (const [at, length] of summaries) {
      r.pos = at;
      fields(r, at + length, "Summary", (no, wt) => {
        if (no === 1 && wt === WireType.LengthDelimited) values.push(readValue(r, sub(r), plugins));
        else r.skip(wt, no);
      });
    }
    return { step, values };
  } catch (e) {
    if (e instanceof Malformed) throw e;
    // The BinaryReader's own errors: "premature EOF", "invalid varint", "cant skip wire type".
    if (e instanceof Error && (e.constructor === Error || e.constructor === RangeError)) {
      throw new Malformed(`not a valid Event protobuf (${e.message.slice(0, 200)})`);
    }
    throw e;
  }
}
