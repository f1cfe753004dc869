/**
 * Seeded randomness: the only source of random numbers in polgrad (verification, Monte Carlo,
 * permutation tests, demo data). A generator is an explicit object built from an integer seed;
 * equal seeds give bitwise-equal streams. Uniform bits come from pure-rand's xoroshiro128+ (a
 * maintained PRNG library); normals use the Box–Muller transform on top of it.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { ConfigError, fail } from "../errors.js";
import { fmtValue } from "./message.js";
import { requireString } from "./validate.js";

/** A seeded stream of random numbers. Methods advance the stream in place. */
export interface Rng {
  /** The seed the stream started from. */
  readonly seed: number;
  /** A uniform draw from [0, 1), a multiple of 2^−53. */
  uniform(): number;
  /** A uniform draw from [lo, hi). */
  uniformIn(lo: number, hi: number): number;
  /** A uniform integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number;
  /** A standard normal draw (Box–Muller; pairs are cached, so draws stay in order). */
  normal(): number;
  /** An index drawn with probability `probs[k]` (probs need not be normalised exactly). */
  categorical(probs: ArrayLike<number>): number;
  /** A fresh seed for a sub-stream: a uniform integer in [0, 2^31 − 1], drawn from this stream. */
  childSeed(): number;
}

/**
 * Create a seeded random stream.
 *
 * Formula: xoroshiro128+(fmix32(seed)) after 16 discarded outputs; uniform = 53-bit multiple of 2^−53; normal z = √(−2 ln(1 − u₁))·cos(2πu₂)
 * (and the paired sine), int via pure-rand's unbiased uniformInt.
 *
 * @param seed - An integer seed (|seed| < 2^31 recommended; fractional seeds are rejected).
 * @returns The stream.
 * @throws {ConfigError} E_CONFIG when the seed is not a safe integer.
 * @derivation docs/derivations/verify.md#seeded-randomness
 * @enforcedBy test/core/rng.test.ts > createRng > identity: equal seeds give bitwise-equal streams
 * @since 0.1.0
 */
export function createRng(seed: number): Rng {
  if (!Number.isSafeInteger(seed)) {
    throw fail(ConfigError, "createRng", "seed", "a safe integer", fmtValue(seed));
  }
  // xoroshiro128+ seeded with a small integer starts from a nearly-zero state and its first outputs
  // are close to 2^64 − 1 for every small seed; mixing the seed (MurmurHash3's fmix32 finaliser)
  // and discarding 16 outputs makes consecutive seeds independent-looking from the first draw.
  const g = xoroshiro128plus(fmix32(seed | 0));
  for (let i = 0; i < 16; i++) g.next();
  let spare: number | null = null;
  const rng: Rng = {
    seed,
    uniform: () => uniformFloat64(g),
    uniformIn: (lo, hi) => lo + (hi - lo) * uniformFloat64(g),
    int: (lo, hi) => uniformInt(g, lo, hi),
    normal: () => {
      if (spare !== null) {
        const z = spare;
        spare = null;
        return z;
      }
      const r = Math.sqrt(-2 * Math.log(1 - uniformFloat64(g)));
      const theta = 2 * Math.PI * uniformFloat64(g);
      spare = r * Math.sin(theta);
      return r * Math.cos(theta);
    },
    categorical: (probs) => {
      let total = 0;
      for (let k = 0; k < probs.length; k++) total += probs[k] as number;
      const u = uniformFloat64(g) * total;
      let acc = 0;
      for (let k = 0; k < probs.length; k++) {
        acc += probs[k] as number;
        if (u < acc) return k;
      }
      return probs.length - 1;
    },
    childSeed: () => uniformInt(g, 0, 0x7fffffff),
  };
  return rng;
}

/** MurmurHash3's 32-bit finaliser: a bijection on 32-bit integers with full avalanche. */
function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

const CRC_TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * The seed polgrad derives from a case name: CRC-32/IEEE of the UTF-8 bytes, masked to 31 bits.
 * Written by hand (a 256-entry table) so that it runs in browsers as well as Node.
 *
 * Formula: seed = crc32(utf8(name)) & 0x7FFFFFFF.
 *
 * @param name - The case name, e.g. `"verl:pg_clip_token_mean:0"`.
 * @returns A seed in [0, 2^31 − 1].
 * @derivation docs/derivations/verify.md#seeded-randomness
 * @enforcedBy test/core/rng.test.ts > seedFromName > golden: crc-32 check value and the 31-bit mask
 * @since 0.1.0
 */
export function seedFromName(name: string): number {
  requireString("seedFromName", "name", name);
  let c = 0xffffffff;
  for (const byte of new TextEncoder().encode(name))
    c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return ((c ^ 0xffffffff) >>> 0) & 0x7fffffff;
}
