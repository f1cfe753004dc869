/**
 * Name lookup for string-valued modes and registries: membership checks that throw
 * {@link UnknownNameError} with the closest registered names ("did you mean").
 */
import { UnknownNameError } from "../errors.js";
import { fmtValue, mustBe } from "./message.js";

/** snake_case → camelCase (`old_logprobs` → `oldLogprobs`; the TypeScript spelling of a wire name). */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Levenshtein edit distance between two strings (small inputs only: names and modes). */
export function editDistance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] as number;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      prev[j] = Math.min(up + 1, (prev[j - 1] as number) + 1, diag + cost);
      diag = up;
    }
  }
  return prev[b.length] as number;
}

/**
 * Longest name that gets a did-you-mean: a longer one is no typo of a registered name, and the
 * edit distance costs O(len · |known name|) per name (a 1 MB tensor name took seconds).
 */
export const MAX_SUGGEST_LENGTH = 64;

/**
 * The registered names closest to `name` (edit distance ≤ max(2, ⌊len/3⌋)), best first; none for
 * a name longer than {@link MAX_SUGGEST_LENGTH} characters.
 */
export function closestNames(name: string, known: readonly string[]): string[] {
  if (typeof name !== "string" || name.length > MAX_SUGGEST_LENGTH) return [];
  const limit = Math.max(2, Math.floor(name.length / 3));
  return known
    .map((k) => ({ k, d: editDistance(name.toLowerCase(), k.toLowerCase()) }))
    .filter(({ d }) => d <= limit)
    .sort((x, y) => x.d - y.d || (x.k < y.k ? -1 : 1))
    .map(({ k }) => k);
}

/** The message suffix naming the closest known names: ` (did you mean "a" or "b"?)`, or "". */
export function didYouMean(suggestions: readonly string[]): string {
  return suggestions.length > 0
    ? ` (did you mean ${suggestions.map((s) => `"${s}"`).join(" or ")}?)`
    : "";
}

/**
 * Return `value` typed as one of `known`, or throw {@link UnknownNameError} naming the known values
 * and the closest ones.
 */
export function oneOf<T extends string>(
  fn: string,
  arg: string,
  value: unknown,
  known: readonly T[],
): T {
  if (typeof value === "string" && (known as readonly string[]).includes(value)) return value as T;
  const suggestions = typeof value === "string" ? closestNames(value, known) : [];
  const hint = didYouMean(suggestions);
  throw new UnknownNameError(
    fn,
    arg,
    `${mustBe(fn, arg, `one of ${known.map((k) => `"${k}"`).join(", ")}`, fmtValue(value))}${hint}`,
    suggestions,
  );
}
