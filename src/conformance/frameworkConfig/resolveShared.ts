/**
 * Helpers shared by the framework resolvers: typed reads of a merged config, the key-by-key merge
 * of user entries over a release's recorded defaults (unknown loss keys are errors with
 * did-you-mean; keys that do not touch the loss are listed as ignored), and value checks.
 * @internal
 */
import { fmtValue, safeText } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { ConfigError } from "../../errors.js";
import type { RecordedKey, RecordedValue } from "../releases/types.js";
import type { ConfigEntry, ParsedFrameworkConfig } from "./parse.js";
import type { ResolvedSetting, SettingSource } from "./resolution.js";

/** A loss-relevant key a resolver knows: its role in the loss. */
export interface KeyRole {
  readonly key: string;
  readonly role: string;
}

/** The merged view of a config over a release's defaults. */
export class MergedConfig {
  readonly fn: string;
  private readonly user: ReadonlyMap<string, ConfigEntry>;
  private readonly defaults: ReadonlyMap<string, RecordedKey>;
  /** Values a resolver derived or took from the world, by key. */
  private readonly extra = new Map<
    string,
    { value: RecordedValue; source: SettingSource; note?: string }
  >();

  constructor(
    fn: string,
    user: ReadonlyMap<string, ConfigEntry>,
    defaults: ReadonlyMap<string, RecordedKey>,
  ) {
    this.fn = fn;
    this.user = user;
    this.defaults = defaults;
  }

  /** Whether the release defines the key. */
  has(key: string): boolean {
    return this.defaults.has(key) || this.extra.has(key);
  }

  /** Whether the user set the key. */
  isUser(key: string): boolean {
    return this.user.has(key);
  }

  /** The value: the user's, else a derived/world value, else the recorded default (undefined: not defined). */
  raw(key: string): RecordedValue | undefined {
    const u = this.user.get(key);
    if (u !== undefined) return u.value;
    const x = this.extra.get(key);
    if (x !== undefined) return x.value;
    const d = this.defaults.get(key);
    return d === undefined ? undefined : d.default;
  }

  /** Where the value came from. */
  source(key: string): SettingSource {
    if (this.user.has(key)) return "user";
    const x = this.extra.get(key);
    if (x !== undefined) return x.source;
    return "default";
  }

  note(key: string): string | undefined {
    return this.user.has(key) ? undefined : this.extra.get(key)?.note;
  }

  /** Set a derived or world value (a user value still wins). */
  derive(key: string, value: RecordedValue, source: SettingSource, note?: string): void {
    this.extra.set(key, { value, source, ...(note === undefined ? {} : { note }) });
  }

  private bad(key: string, rule: string): never {
    const v = this.raw(key);
    throw new ConfigError(
      this.fn,
      key,
      `${this.fn}: ${safeText(key)} must be ${rule}; got ${fmtValue(v)}${this.isUser(key) ? "" : " (the release's default)"}`,
    );
  }

  /** A finite number (null allowed when `nullable`). */
  num(key: string, o: { nullable: true; min?: number; gt?: number; max?: number }): number | null;
  num(key: string, o?: { nullable?: false; min?: number; gt?: number; max?: number }): number;
  num(
    key: string,
    o: { nullable?: boolean; min?: number; gt?: number; max?: number } = {},
  ): number | null {
    const v = this.raw(key);
    if ((v === null || v === undefined) && o.nullable === true) return null;
    if (typeof v !== "number" || !Number.isFinite(v))
      this.bad(key, `a finite number${o.nullable ? " or null" : ""}`);
    if (o.min !== undefined && v < o.min) this.bad(key, `>= ${o.min}`);
    if (o.gt !== undefined && v <= o.gt) this.bad(key, `> ${o.gt}`);
    if (o.max !== undefined && v > o.max) this.bad(key, `<= ${o.max}`);
    return v;
  }

  /** A positive integer (null allowed when `nullable`). */
  int(key: string, o: { nullable: true; min?: number }): number | null;
  int(key: string, o?: { nullable?: false; min?: number }): number;
  int(key: string, o: { nullable?: boolean; min?: number } = {}): number | null {
    const v = this.raw(key);
    if ((v === null || v === undefined) && o.nullable === true) return null;
    const min = o.min ?? 1;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min)
      this.bad(key, `an integer >= ${min}${o.nullable ? " or null" : ""}`);
    return v;
  }

  /** A boolean (YAML true/false; also the strings "true"/"false"). */
  bool(key: string): boolean {
    const v = this.raw(key);
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "True") return true;
    if (v === "false" || v === "False") return false;
    this.bad(key, "true or false");
  }

  /** A string among `choices` (null allowed when `nullable`). */
  str<T extends string>(key: string, choices: readonly T[], o: { nullable: true }): T | null;
  str<T extends string>(key: string, choices: readonly T[], o?: { nullable?: false }): T;
  str<T extends string>(
    key: string,
    choices: readonly T[],
    o: { nullable?: boolean } = {},
  ): T | null {
    const v = this.raw(key);
    if ((v === null || v === undefined) && o.nullable === true) return null;
    if (typeof v !== "string" || !(choices as readonly string[]).includes(v)) {
      const hint = typeof v === "string" ? didYouMean(closestNames(v, choices)) : "";
      this.bad(key, `one of ${choices.map((c) => `"${c}"`).join(", ")} at this release${hint}`);
    }
    return v as T;
  }

  /** The resolved setting of a key, for the report. */
  setting(key: string, role: string, effective = true): ResolvedSetting {
    const note = this.note(key);
    return {
      key,
      value: this.raw(key) ?? null,
      source: this.source(key),
      role,
      effective,
      ...(note === undefined ? {} : { note }),
    };
  }
}

/**
 * Merge a parsed config over a release's keys. A user key the release defines is kept; a key in
 * `worldKeys` is kept (the trainer's world: processes, accumulation, batch sizes); a key that is
 * loss-relevant at another release, or within edit distance of a loss-relevant key here, is an
 * error with did-you-mean against this release's real key names; any other key is ignored (it
 * does not touch the loss) and listed.
 */
export function mergeConfig(
  fn: string,
  ref: string,
  parsed: ParsedFrameworkConfig,
  releaseKeys: ReadonlyMap<string, RecordedKey>,
  o: {
    /** Loss-relevant keys at this release. */
    readonly lossKeys: ReadonlySet<string>;
    /** Loss-relevant keys at any release of the framework. */
    readonly anyReleaseLossKeys: ReadonlySet<string>;
    /** Keys outside the recorded config that the resolver reads (world sizes). */
    readonly worldKeys: ReadonlySet<string>;
  },
): {
  merged: MergedConfig;
  ignored: { key: string; value: RecordedValue }[];
} {
  const user = new Map<string, ConfigEntry>();
  const ignored: { key: string; value: RecordedValue }[] = [];
  const lossHere = [...o.lossKeys].filter((k) => releaseKeys.has(k) || o.worldKeys.has(k));
  for (const e of parsed.entries) {
    if (releaseKeys.has(e.key) || o.worldKeys.has(e.key)) {
      user.set(e.key, e);
      continue;
    }
    // verl's +key=value adds a key the release's config lacks: no code reads it from the config
    // unless it asks for it by name (listed as ignored, with a warning: keyClasses.ts).
    if (e.plus === true) {
      ignored.push({ key: e.key, value: e.value });
      continue;
    }
    // A typo of a loss key: within closestNames' edit limit (a third of its length); keys under
    // four characters are never taken for typos.
    const near = closestNames(e.key, lossHere).filter((k) => k !== e.key && e.key.length >= 4);
    if (o.anyReleaseLossKeys.has(e.key) || near.length > 0) {
      const why = o.anyReleaseLossKeys.has(e.key)
        ? `a key that affects the loss at other releases but is not defined at ${ref}`
        : `not a key of ${ref}`;
      throw new ConfigError(
        fn,
        e.key,
        `${fn}: ${safeText(e.key)} in ${safeText(parsed.source)} is ${why}; it must be one of the release's loss keys${didYouMean(near.slice(0, 3))}`,
      );
    }
    ignored.push({ key: e.key, value: e.value });
  }
  return { merged: new MergedConfig(fn, user, releaseKeys), ignored };
}
