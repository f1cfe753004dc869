/**
 * Every key of a framework config is classified (docs/conformance/explain.md#every-key): a key the
 * resolution reads is a setting; a key the release's recorded config holds but the loss does not
 * read is listed as ignored; a key that changes the loss in a way polgrad does not model is
 * refused by name when set (UNMODELLED); any other key is not the framework's (an error with
 * did-you-mean, as the framework's own parser refuses it), except verl's `+key=value`, which Hydra
 * adds to the config whatever it is (a warning: no code of the release reads it from the config).
 * Browser-safe.
 */
import { fmtValue, safeText } from "../../core/message.js";
import { closestNames, didYouMean } from "../../core/names.js";
import { ConfigError } from "../../errors.js";
import type { RecordedValue } from "../releases/types.js";
import type { ConfigFramework, ParsedFrameworkConfig } from "./parse.js";
import { keysOf, type ReleaseRef } from "./releases.js";
import type { FrameworkResolution } from "./resolution.js";

/** A loss-affecting key polgrad does not model, refused by name when `when` holds. */
export interface UnmodelledKey {
  readonly key: string;
  /** The first release where the key has this effect (absent: every recorded release). */
  readonly from?: string;
  readonly when: (value: RecordedValue) => boolean;
  /** What the key does upstream, and why that is not resolved. */
  readonly why: string;
}

const truthy = (v: RecordedValue) => v === true || v === "true" || v === "True";

/** The keys each framework refuses by name when set (read from each framework's source). */
export const UNMODELLED: Readonly<Record<ConfigFramework, readonly UnmodelledKey[]>> = {
  verl: [
    {
      key: "actor_rollout_ref.actor.strategy",
      when: (v) => v !== "fsdp" && v !== "fsdp2",
      why: "selects another actor engine (main_ppo's add_actor_rollout_worker); polgrad models the FSDP actor's loss",
    },
    {
      key: "model_engine",
      when: (v) => v !== "dp",
      why: "selects another engine's actor, ref and critic configs (ppo_trainer.yaml's defaults list); polgrad models the FSDP (dp) actor's loss",
    },
    {
      key: "distillation.enabled",
      when: truthy,
      why: "on-policy distillation adds a teacher's loss to the actor's update; polgrad does not model it",
    },
  ],
  trl: [
    {
      key: "use_liger_kernel",
      from: "v0.25.0",
      when: truthy,
      why: "GRPOTrainer then computes the loss with Liger's fused linear GRPO loss (grpo_trainer.py, `if self.use_liger_kernel`), not the path polgrad resolves",
    },
  ],
  openrlhf: [],
};

/** Who refuses an unknown key upstream. */
const REFUSER: Readonly<Record<ConfigFramework, string>> = {
  verl: "Hydra refuses a key verl's config lacks unless it is added with +key=",
  trl: "TRL's argument parser refuses it",
  openrlhf: "OpenRLHF's argparse refuses it",
};

/** The release index of a label, for `from`. */
function indexOf(r: ReleaseRef, label: string): number {
  const i = r.facts.releases.findIndex((x) => x.label === label);
  return i < 0 ? Number.POSITIVE_INFINITY : i;
}

/**
 * Refuse a config that sets a key of UNMODELLED, naming the key, its value and what it does.
 *
 * @throws {ConfigError} E_CONFIG naming the framework's key.
 */
export function refuseUnmodelled(fn: string, r: ReleaseRef, parsed: ParsedFrameworkConfig): void {
  const defaults = keysOf(r.release);
  for (const u of UNMODELLED[r.framework]) {
    if (u.from !== undefined && r.index < indexOf(r, u.from)) continue;
    const e = parsed.entries.find((x) => x.key === u.key);
    // A named config's default counts as the run's own (verl --config-name ppo_megatron_trainer).
    const d = e === undefined ? defaults.get(u.key) : undefined;
    const value = e !== undefined ? e.value : d?.default;
    if (value === undefined || !u.when(value)) continue;
    const where =
      e !== undefined
        ? `in ${safeText(parsed.source)}`
        : `(the default of --config-name ${safeText(parsed.configName ?? "")}, in ${safeText(parsed.source)})`;
    throw new ConfigError(
      fn,
      u.key,
      `${fn}: ${safeText(u.key)} = ${fmtValue(value)} ${where}: ${u.why}, so it cannot say which loss this run computes at ${r.ref}`,
    );
  }
}

/** Whether a prefix of the dotted key is a recorded mapping (`engine_kwargs.vllm: {}`), whose entries are free-form. */
function underOpenMapping(
  key: string,
  recorded: ReadonlyMap<string, { readonly default: RecordedValue }>,
): boolean {
  const parts = key.split(".");
  for (let n = parts.length - 1; n > 0; n--) {
    const d = recorded.get(parts.slice(0, n).join("."))?.default;
    if (d !== undefined && d !== null && typeof d === "object" && !Array.isArray(d)) return true;
  }
  return false;
}

/**
 * A resolution with every user key classified: the recorded keys the loss does not read are
 * added to `ignored`; a key that is no key of the release is an error with did-you-mean, except
 * verl's `+key` (ignored, with the warning `verl-plus-key-unread`).
 *
 * @param known - Further keys the framework's parser accepts beside the recorded config.
 * @param strict - Whether a key outside the recorded config and `known` is an error.
 * @throws {ConfigError} E_CONFIG naming the unknown key.
 */
export function classifyKeys(
  fn: string,
  r: ReleaseRef,
  parsed: ParsedFrameworkConfig,
  res: FrameworkResolution,
  o: { readonly known?: ReadonlySet<string>; readonly strict: boolean },
): FrameworkResolution {
  const known = o.known ?? new Set<string>();
  const recorded = keysOf(r.release);
  const read = new Set(res.settings.map((s) => s.key));
  const listed = new Set(res.ignored.map((x) => x.key));
  const ignored = [...res.ignored];
  const warnings = [...res.warnings];
  for (const e of parsed.entries) {
    if (read.has(e.key)) continue;
    if (recorded.has(e.key) || known.has(e.key) || underOpenMapping(e.key, recorded)) {
      if (!listed.has(e.key)) ignored.push({ key: e.key, value: e.value });
      continue;
    }
    if (!listed.has(e.key) || !o.strict) continue; // the resolver took it (a world key), or not strict
    if (r.framework === "verl" && e.plus === true) {
      warnings.push({
        code: "verl-plus-key-unread",
        message: `+${e.key} adds a key ${r.ref}'s config does not have; verl reads it only where its code asks for it by name, which polgrad does not model: listed as ignored`,
      });
      continue;
    }
    if (r.framework === "trl" && e.key === "config")
      throw new ConfigError(
        fn,
        "config",
        `${fn}: config ${fmtValue(e.value)} in ${safeText(parsed.source)} names a file whose keys TRL reads as the defaults; the library cannot read it: give that file (polgrad explain --config reads a config FILE it names, beside it or in the working folder)`,
      );
    // The framework's own parser refuses it (Hydra's struct config, argparse, HfArgumentParser).
    const all = [...new Set([...recorded.keys(), ...known])];
    const near = closestNames(e.key, all).slice(0, 3);
    throw new ConfigError(
      fn,
      e.key,
      `${fn}: ${safeText(e.key)} in ${safeText(parsed.source)} is not a key of ${r.ref} (${REFUSER[r.framework]})${didYouMean(near)}`,
    );
  }
  for (const w of parsed.warnings ?? [])
    warnings.push({ code: "config-duplicate-key", message: w });
  return { ...res, ignored, warnings };
}
