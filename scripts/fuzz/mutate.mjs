/**
 * The mutation strategies of the fuzzer (docs/fuzz.md), split out of targets.mjs: a seeded PRNG
 * and byte-level mutations (bit flips, truncation, splices, boundary length fields, huge numbers,
 * deep nesting, control characters, long names). Every draw comes from the `rand` passed in, so
 * the same seed gives the same inputs.
 */

/** A small seeded PRNG (mulberry32): `rand()` is uniform on [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element of `xs`, uniformly. */
export const pick = (rand, xs) => xs[Math.floor(rand() * xs.length)];
/** An integer uniform on [0, n). */
export const int = (rand, n) => Math.floor(rand() * n);
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: false });

/** Largest input a mutation may produce (the 1 GB allocation bound is for inputs under 1 MB). */
export const MAX_INPUT_BYTES = 1_000_000;

const HUGE_NUMBERS = [
  "1e309",
  "-1e309",
  "1e308",
  "1.7976931348623157e308",
  "-1e4",
  "745.2",
  "-745.2",
  "710",
  "1e-320",
  "4e-324",
  "123456789012345678901234567890",
  "9007199254740993",
  "-0",
  "1e300",
];
const CONTROL = ["\u0000", "\n", "\r", "\u001b[2J", "\u0007", "\u2028", "\ud800", "\t"];

/** The mutation strategies (docs/fuzz.md): each maps bytes to bytes. */
export const MUTATIONS = {
  bitFlip(rand, b) {
    const out = b.slice();
    for (let k = 1 + int(rand, 8); k > 0 && out.length > 0; k--)
      out[int(rand, out.length)] ^= 1 << int(rand, 8);
    return out;
  },
  truncate(rand, b) {
    return b.slice(0, int(rand, b.length + 1));
  },
  splice(rand, b, other) {
    const src = other ?? b;
    const from = int(rand, src.length + 1);
    const chunk = src.slice(from, from + int(rand, 256));
    const at = int(rand, b.length + 1);
    return concat(b.slice(0, at), chunk, b.slice(at + int(rand, 64)));
  },
  lengthField(rand, b) {
    // Overwrite a little-endian u64 (a safetensors header length at offset 0, or an offset
    // pair inside the header) with a boundary value.
    const out = b.length >= 8 ? b.slice() : concat(b, new Uint8Array(8 - b.length));
    const at = rand() < 0.5 ? 0 : int(rand, Math.max(1, out.length - 7));
    const v = pick(rand, [
      0n,
      1n,
      2n,
      7n,
      BigInt(b.length),
      BigInt(b.length) - 9n,
      2n ** 31n,
      2n ** 32n,
      2n ** 53n + 1n,
      2n ** 63n,
      2n ** 64n - 1n,
      100_000_001n,
    ]);
    new DataView(out.buffer, out.byteOffset).setBigUint64(at, BigInt.asUintN(64, v), true);
    return out;
  },
  hugeNumber(rand, b) {
    const text = dec.decode(b);
    const m = [...text.matchAll(/-?\d+(\.\d+)?([eE][-+]?\d+)?/g)];
    if (m.length === 0) return insertText(rand, b, pick(rand, HUGE_NUMBERS));
    const hit = pick(rand, m);
    return enc.encode(
      text.slice(0, hit.index) + pick(rand, HUGE_NUMBERS) + text.slice(hit.index + hit[0].length),
    );
  },
  deepNesting(rand, b) {
    const n = pick(rand, [100, 1000, 60_000, 100_000]);
    const open = pick(rand, ["[", '{"a":', "(", "if x:\n", "f("]);
    const close = { "[": "]", '{"a":': "}", "(": ")", "f(": ")" }[open] ?? "";
    const body =
      open === "if x:\n"
        ? Array.from({ length: Math.min(n, 2000) }, (_, i) => `${" ".repeat(i)}if x:\n`).join("")
        : open.repeat(n) + (rand() < 0.5 ? close.repeat(n) : "");
    return insertText(rand, b, body);
  },
  controlCharacters(rand, b) {
    return insertText(
      rand,
      b,
      Array.from({ length: 1 + int(rand, 4) }, () => pick(rand, CONTROL)).join(""),
    );
  },
  longName(rand, b) {
    const name = pick(rand, ["a", "é", "\u{1F600}", "logprobs"]).repeat(
      pick(rand, [300, 10_000, 200_000]),
    );
    const text = dec.decode(b);
    const q = text.indexOf('"');
    if (q >= 0 && rand() < 0.7)
      return enc.encode(`${text.slice(0, q + 1)}${name}${text.slice(q + 1)}`);
    return insertText(rand, b, name);
  },
};

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function insertText(rand, b, s) {
  const at = int(rand, b.length + 1);
  return concat(b.slice(0, at), enc.encode(s), b.slice(at));
}

/** Apply 1–3 random mutations to `bytes`; the result stays under {@link MAX_INPUT_BYTES}. */
export function mutateBytes(rand, bytes, corpus) {
  // Every mutation returns a new array and never writes into `bytes` or the corpus; a Node
  // Buffer (whose slice() is a view, not a copy) is copied first so that this holds for it too.
  let b = Buffer.isBuffer(bytes) ? new Uint8Array(bytes) : bytes;
  const names = Object.keys(MUTATIONS);
  for (let k = 1 + int(rand, 3); k > 0; k--) {
    const m = pick(rand, names);
    b = MUTATIONS[m](rand, b, corpus.length > 0 ? pick(rand, corpus) : undefined);
    if (b.length > MAX_INPUT_BYTES) b = b.slice(0, MAX_INPUT_BYTES);
  }
  return b;
}
