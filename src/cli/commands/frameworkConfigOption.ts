/**
 * The framework-config options shared by `explain`, `loss`, `which`: `--framework REF` (a
 * recorded release), `--framework-config FILE|-` (YAML, JSON or arguments), the framework's own
 * arguments after `--`, and the world (`--num-processes`, `--num-items-in-batch`)
 * (docs/cli.md#explain).
 */

import type { ParsedFrameworkConfig } from "../../conformance/frameworkConfig/parse.js";
import type { FrameworkResolution } from "../../conformance/frameworkConfig/resolution.js";
import { fmtValue } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { CommandIO, OptionSpec, OptionValues } from "../command.js";
import { intOption } from "../output.js";

/** Largest framework config read. */
const MAX_CONFIG_BYTES = 4 * 2 ** 20;

/** The world options. */
export const WORLD_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  "num-processes": {
    type: "string",
    argument: "N",
    description: "the launcher's process count (TRL: accelerate's num_processes)",
    default: "1",
  },
  "num-items-in-batch": {
    type: "string",
    argument: "N",
    description: "TRL's num_items_in_batch (the generation batch's tokens over all processes)",
    default: "num-processes × the batch's tokens",
  },
};

/** Read a config file (or stdin for `-`) as UTF-8 text. */
export async function readConfigText(
  fn: string,
  arg: string,
  path: string,
  io: CommandIO,
): Promise<{ text: string; source: string }> {
  const { decodeUtf8, readFileBytes } = await import("../../io/_internal/files.js");
  if (path === "-") {
    if (io.readStdin === undefined) throw fail(UsageError, fn, arg, "a file here (no stdin)", "-");
    return {
      text: decodeUtf8(fn, "<stdin>", arg, io.readStdin(MAX_CONFIG_BYTES)),
      source: "<stdin>",
    };
  }
  return {
    text: decodeUtf8(fn, path, arg, readFileBytes(fn, path, MAX_CONFIG_BYTES)),
    source: path,
  };
}

/**
 * Resolve the framework config an invocation names: `--framework REF`, the config text from
 * `configOption` (a file) and/or the arguments after `--` (appended after the file's entries, so
 * they win).
 */
export async function resolveCliFrameworkConfig(
  fn: string,
  values: OptionValues,
  positionals: readonly string[],
  io: CommandIO,
  o: {
    readonly refOption?: string;
    readonly configOption: string;
    readonly ref?: string;
    readonly configPath?: string | null;
  },
): Promise<FrameworkResolution> {
  const refOpt = o.refOption ?? "framework";
  const ref = o.ref ?? values[refOpt];
  if (typeof ref !== "string")
    throw fail(
      UsageError,
      fn,
      `--${refOpt}`,
      "given (a release: trl@v1.9.0, verl@1dda039b, openrlhf@v0.11.0)",
      "nothing",
    );
  const { findRelease } = await import("../../conformance/frameworkConfig/releases.js");
  const { parseFrameworkConfig } = await import("../../conformance/frameworkConfig/parse.js");
  const { resolveFrameworkConfig } = await import("../../conformance/frameworkConfig/explain.js");
  const r = findRelease(ref, fn, `--${refOpt}`);
  const path = o.configPath !== undefined ? o.configPath : values[o.configOption];
  const { laterOver } = await import("../../conformance/frameworkConfig/parse.js");
  let parsed: ParsedFrameworkConfig = {
    framework: r.framework,
    form: "args",
    entries: [],
    skipped: [],
    source: "the release's defaults",
  };
  if (typeof path === "string") {
    const { text, source: s } = await readConfigText(fn, `--${o.configOption}`, path, io);
    // Named as the file was given (a launch script's reader adds its line).
    parsed = { ...parseFrameworkConfig(r.framework, text, { source: s }), source: s };
  }
  if (positionals.length > 0) {
    const p = parseFrameworkConfig(r.framework, positionals.map(quote).join(" "), {
      source: "the arguments after --",
      form: "args",
    });
    const source =
      typeof path === "string"
        ? `${parsed.source} and the arguments after --`
        : "the arguments after --";
    parsed = laterOver(parsed, p, source);
  }
  if (r.framework === "trl") {
    const nested = await trlConfigFile(
      fn,
      parsed.entries,
      typeof path === "string" ? path : null,
      io,
    );
    if (nested !== null)
      parsed = {
        ...parsed,
        entries: nested.entries,
        source: `${parsed.source} (with ${nested.source})`,
        warnings: [...(parsed.warnings ?? []), ...nested.warnings],
      };
  }
  const numProcesses = intOption(values, "num-processes", fn.replace(/^polgrad /, ""));
  const numItems = intOption(values, "num-items-in-batch", fn.replace(/^polgrad /, ""));
  return resolveFrameworkConfig(
    r.ref,
    { ...parsed, form: "args" },
    {
      ...(numProcesses === undefined || numProcesses === null ? {} : { numProcesses }),
      ...(numItems === undefined || numItems === null ? {} : { numItemsInBatch: numItems }),
    },
  );
}

/**
 * TRL's `--config FILE` (`trl grpo --config recipe.yaml`, `accelerate launch … grpo.py --config
 * FILE`): TRL's parser reads FILE's keys as the defaults and the other arguments override them.
 * FILE is looked for beside the config that names it, then in the working folder; a missing file
 * is an error naming both places. Returns the merged entries, or null without `config`.
 */
async function trlConfigFile(
  fn: string,
  entries: readonly import("../../conformance/frameworkConfig/parse.js").ConfigEntry[],
  namedIn: string | null,
  io: CommandIO,
): Promise<{
  entries: import("../../conformance/frameworkConfig/parse.js").ConfigEntry[];
  source: string;
  warnings: readonly string[];
} | null> {
  const e = entries.find((x) => x.key === "config");
  if (e === undefined) return null;
  if (typeof e.value !== "string" || e.value === "")
    throw fail(UsageError, fn, "config", "a file name (TRL's --config FILE)", fmtValue(e.value));
  const { existsSync } = await import("node:fs");
  const { fsPath } = await import("../../platform/fsPath.js");
  const { dirname, isAbsolute, join } = await import("node:path");
  const file = e.value;
  const places =
    isAbsolute(file) || namedIn === null || namedIn === "-"
      ? [file]
      : [join(dirname(namedIn), file), file];
  const found = places.find((p) => existsSync(fsPath(p)));
  if (found === undefined)
    throw fail(
      UsageError,
      fn,
      "config",
      `a readable file (TRL's --config, looked for ${places.map((p) => fmtValue(p)).join(" and ")})`,
      "no such file",
    );
  const { parseFrameworkConfig } = await import("../../conformance/frameworkConfig/parse.js");
  const { text, source } = await readConfigText(fn, "config", found, io);
  const inner = parseFrameworkConfig("trl", text, { source, form: "mapping" });
  const rest = entries.filter((x) => x.key !== "config");
  const set = new Set(rest.map((x) => x.key));
  return {
    entries: [...inner.entries.filter((x) => !set.has(x.key)), ...rest],
    source,
    warnings: inner.warnings ?? [],
  };
}

function quote(t: string): string {
  return /[\s#"'\\]/.test(t) ? `'${t.replaceAll("'", "")}'` : t;
}

/** A which-table row: a framework config resolved at a release, evaluated on the batch. */
export interface FrameworkConfigRow {
  readonly key: string;
  readonly label: string;
  /** The resolution the row evaluates. */
  readonly resolution: FrameworkResolution;
  readonly evaluate: (
    b: import("../../losses/policyLoss.js").PolicyLossInputs,
  ) => import("../../conformance/frameworkConfig/resolution.js").ResolutionResult;
}

/**
 * The `--framework REF [--framework-config FILE]` row of `which` and `report`, or null when neither
 * option is given. On the built-in batch, which has no reference, ref_logprobs := old_logprobs (a
 * first step), as `explain` takes it.
 */
export async function frameworkConfigRow(
  fn: string,
  values: OptionValues,
  io: CommandIO,
  builtin: boolean,
): Promise<FrameworkConfigRow | null> {
  if (typeof values.framework !== "string" && values["framework-config"] === undefined) return null;
  const { evaluateResolution } = await import("../../conformance/frameworkConfig/resolution.js");
  const res = await resolveCliFrameworkConfig(fn, values, [], io, {
    configOption: "framework-config",
  });
  const cfg = values["framework-config"];
  return {
    resolution: res,
    key: `${res.ref}${typeof cfg === "string" ? `:${cfg}` : ""}`,
    label: `your config (${res.ref}${typeof cfg === "string" ? `, ${cfg}` : ", defaults"}${builtin && res.plan.config.kl != null ? "; ref = old" : ""})`,
    evaluate: (b) =>
      evaluateResolution(
        res,
        builtin && b.refLogprobs == null ? { ...b, refLogprobs: b.oldLogprobs } : b,
      ),
  };
}
