/**
 * `polgrad explain`: which loss a framework config computes at a release, the nearest registered
 * algorithm and its differences, the pitfalls, and the loss on a batch; `--diff A B` compares two
 * configs or two releases (docs/cli.md#explain).
 */

import type { FrameworkResolution } from "../../conformance/frameworkConfig/resolution.js";
import { fmtValue } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import { NAME_OPTIONS, readCliBatch } from "../batchInput.js";
import type { Command, CommandIO, OptionValues } from "../command.js";
import { writeJson } from "../output.js";
import { resolveCliFrameworkConfig, WORLD_OPTIONS } from "./frameworkConfigOption.js";

/** What an explanation's loss was computed on: a batch and its loss, or why there is none. */
type Evaluated =
  | {
      readonly batch: string;
      readonly notes: readonly string[];
      readonly loss: number;
      readonly microBatches: readonly {
        readonly rows: readonly [number, number];
        readonly loss: number;
        readonly float32Bound: number;
      }[];
    }
  | { readonly batch: null; readonly notEvaluated: string };

/**
 * The batch the resolutions are evaluated on: the user's --batch, else the built-in batch fitted
 * to them (conformance/frameworkConfig/evaluationBatch.ts), or why there is none.
 */
async function batchFor(
  fn: string,
  values: OptionValues,
  io: CommandIO,
  resolutions: readonly FrameworkResolution[],
): Promise<
  { inputs: PolicyLossInputs; name: string; notes: readonly string[] } | { notEvaluated: string }
> {
  if (typeof values.batch === "string") {
    const inputs = await readCliBatch(fn, values, io);
    const { windowNote } = await import("../../conformance/frameworkConfig/window.js");
    const lp = inputs.logprobs;
    const B = Array.isArray(lp) ? lp.length : (lp as { readonly rows: number }).rows;
    const notes = resolutions.flatMap((r) => windowNote(r, B) ?? []);
    return { inputs, name: values.batch, notes };
  }
  const { builtinBatchFor, MAX_FITTED_ROWS } = await import(
    "../../conformance/frameworkConfig/evaluationBatch.js"
  );
  const { BUILTIN_BATCH } = await import("../../which/index.js");
  const b = builtinBatchFor(BUILTIN_BATCH, resolutions);
  if ("tooLarge" in b)
    return {
      notEvaluated: `the config's micro-batches need B = ${b.tooLarge} rows, more than the built-in batch is tiled to (${MAX_FITTED_ROWS}); give --batch with a multiple of ${b.tooLarge} rows`,
    };
  return { inputs: b.inputs, name: b.name, notes: b.notes };
}

function explanationJson(
  e: import("../../conformance/frameworkConfig/explain.js").Explanation,
  policyLossConfigToJson: (c: import("../../losses/config.js").PolicyLossConfig) => unknown,
  evaluated: Evaluated,
): unknown {
  const r = e.resolution;
  return {
    ref: r.ref,
    framework: r.framework,
    repo: r.repo,
    release: r.release,
    settings: r.settings.map((s) => ({
      key: s.key,
      value: s.value,
      source: s.source,
      effective: s.effective,
      role: s.role,
      note: s.note ?? null,
    })),
    ignored: r.ignored,
    skipped: r.skipped,
    config: policyLossConfigToJson(r.plan.config),
    plan: {
      microBatches: r.plan.microBatches,
      divideBy: r.plan.divideBy,
      onPolicy: r.plan.onPolicy,
      batchMeaning: r.plan.batchMeaning,
    },
    algebra: r.algebra,
    nearest: e.nearest,
    runnersUp: e.runnersUp,
    warnings: r.warnings.map((w) => ({ ...w, deviation: w.deviation ?? null })),
    evaluation: evaluated,
  };
}

/** The `explain` command. */
export const explainCommand: Command = {
  name: "explain",
  summary:
    "Explain which loss a framework config computes at a release (TRL, verl, OpenRLHF): its settings and their sources, the loss in polgrad's algebra, the nearest paper algorithm, pitfalls, and its loss on a batch.",
  usage:
    "explain --framework REF [--config FILE|-] [--batch FILE] [--num-processes N] [--json] [-- FRAMEWORK ARGS...]\n       explain --diff A B [--framework REF] [--config FILE] [--batch FILE] [--json]   (A, B: releases like trl@v0.19.0, or config files)",
  positionals: (values) =>
    values.diff === true
      ? { max: 2, rule: "two with --diff (A B, each a release or a config file)" }
      : {
          max: 0,
          rule: "none without --diff (the config file is --config FILE; the framework's own arguments go after --)",
        },
  passThrough: true,
  options: {
    framework: {
      type: "string",
      argument: "REF",
      description:
        "the release: trl@v1.9.0, trl@f2cd5771, verl@1dda039b, openrlhf@v0.11.0 (see 'polgrad history')",
    },
    config: {
      type: "string",
      role: "input",
      argument: "FILE|-",
      description:
        "the framework's config: YAML/JSON (TRL GRPOConfig fields; verl Hydra YAML, nested or dotted; OpenRLHF flag → value) or an arguments file; arguments after -- are added last",
    },
    diff: {
      type: "boolean",
      description:
        "compare two configs (files) or two releases (refs) given as the first two arguments",
    },
    batch: {
      type: "string",
      role: "input",
      argument: "FILE|DIR|-",
      description: "evaluate on this batch",
      default: "the built-in batch with ref_logprobs = old_logprobs",
    },
    ...NAME_OPTIONS,
    ...WORLD_OPTIONS,
    json: { type: "boolean", description: "print one JSON document" },
  },
  async run(values, positionals, io, passThrough = []) {
    const fn = "polgrad explain";
    const { evaluateResolution } = await import("../../conformance/frameworkConfig/resolution.js");
    const { policyLossConfigToJson } = await import("../../io/configJson.js");
    const { explainResolution } = await import("../../conformance/frameworkConfig/explain.js");
    const nearestOf = explainResolution;
    if (values.diff === true) {
      if (passThrough.length > 0)
        throw fail(
          UsageError,
          fn,
          "--diff",
          "given without arguments after -- (put each side's settings in its config file)",
          `the argument ${fmtValue(passThrough[0])} after --`,
        );
      if (positionals.length !== 2)
        throw fail(
          UsageError,
          fn,
          "--diff",
          "followed by two arguments, each a release (trl@v0.19.0) or a config file",
          `${positionals.length} argument(s)`,
        );
      const isRef = (s: string) => /^(trl|verl|openrlhf)@/i.test(s);
      const side = async (s: string) => {
        const ref = isRef(s) ? s : undefined;
        const configPath = isRef(s) ? undefined : s;
        if (ref === undefined && typeof values.framework !== "string")
          throw fail(
            UsageError,
            fn,
            "--framework",
            "given when a --diff side is a config file",
            fmtValue(s),
          );
        return resolveCliFrameworkConfig(fn, values, [], io, {
          configOption: "config",
          ...(ref === undefined ? {} : { ref }),
          ...(configPath === undefined ? {} : { configPath }),
        });
      };
      const [a0, b0] = positionals as [string, string];
      const ra = await side(a0);
      const rb = await side(b0);
      // One batch for both sides, fitted to both: the losses are comparable.
      const batch = await batchFor(fn, values, io, [ra, rb]);
      const { diffExplanations } = await import("../../conformance/frameworkConfig/diff.js");
      const lossOn =
        "notEvaluated" in batch
          ? null
          : {
              batch: batch.name,
              a: evaluateResolution(ra, batch.inputs).loss,
              b: evaluateResolution(rb, batch.inputs).loss,
            };
      const d = diffExplanations(nearestOf(ra), nearestOf(rb), { a: a0, b: b0 }, lossOn);
      const notes = "notEvaluated" in batch ? [batch.notEvaluated] : batch.notes;
      if (values.json) writeJson(io, "explain", { diff: d, batchNotes: notes });
      else {
        const { renderDiffText } = await import("../../report/explainText.js");
        io.stdout(renderDiffText(d, notes));
      }
      return 0;
    }
    const res = await resolveCliFrameworkConfig(fn, values, passThrough, io, {
      configOption: "config",
    });
    const e = nearestOf(res);
    const batch = await batchFor(fn, values, io, [res]);
    let evaluated: Evaluated;
    if ("notEvaluated" in batch) evaluated = { batch: null, notEvaluated: batch.notEvaluated };
    else {
      const out = evaluateResolution(res, batch.inputs);
      evaluated = {
        batch: batch.name,
        notes: batch.notes,
        loss: out.loss,
        microBatches: out.microBatches,
      };
    }
    if (values.json)
      writeJson(io, "explain", explanationJson(e, policyLossConfigToJson, evaluated));
    else {
      const { renderExplainText } = await import("../../report/explainText.js");
      io.stdout(
        renderExplainText(
          e,
          evaluated.batch === null
            ? { notEvaluated: evaluated.notEvaluated }
            : {
                batch: evaluated.batch,
                notes: evaluated.notes,
                loss: evaluated.loss,
                microBatches: evaluated.microBatches.length,
              },
        ),
      );
    }
    return 0;
  },
};
