/**
 * `polgrad explain`: which loss a framework config computes at a release, the nearest registered
 * algorithm and its differences, the pitfalls, and the loss on a batch; `--diff A B` compares two
 * configs or two releases (docs/cli.md#explain).
 */
import { fmtValue } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { PolicyLossInputs } from "../../losses/policyLoss.js";
import { NAME_OPTIONS, readCliBatch } from "../batchInput.js";
import type { Command, CommandIO, OptionValues } from "../command.js";
import { writeJson } from "../output.js";
import { resolveCliFrameworkConfig, WORLD_OPTIONS } from "./frameworkConfigOption.js";

/** The built-in batch with a reference: ref_logprobs := old_logprobs (a first step: the reference is the sampling policy). */
async function builtinWithRef(): Promise<PolicyLossInputs> {
  const { BUILTIN_BATCH } = await import("../../which/index.js");
  return { ...BUILTIN_BATCH, refLogprobs: BUILTIN_BATCH.oldLogprobs };
}

/** The batch an invocation evaluates on, and its name. */
async function batchOf(
  fn: string,
  values: OptionValues,
  io: CommandIO,
): Promise<{ inputs: PolicyLossInputs; name: string }> {
  if (typeof values.batch === "string")
    return { inputs: await readCliBatch(fn, values, io), name: values.batch };
  return {
    inputs: await builtinWithRef(),
    name: "the built-in batch (ref_logprobs = old_logprobs)",
  };
}

function explanationJson(
  e: import("../../conformance/frameworkConfig/explain.js").Explanation,
  policyLossConfigToJson: (c: import("../../losses/config.js").PolicyLossConfig) => unknown,
  evaluated: {
    batch: string;
    loss: number;
    microBatches: readonly {
      rows: readonly [number, number];
      loss: number;
      float32Bound: number;
    }[];
  } | null,
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
    const { inputs, name } = await batchOf(fn, values, io);
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
        const res = await resolveCliFrameworkConfig(fn, values, [], io, {
          configOption: "config",
          ...(ref === undefined ? {} : { ref }),
          ...(configPath === undefined ? {} : { configPath }),
        });
        return { e: nearestOf(res), loss: evaluateResolution(res, inputs).loss };
      };
      const [a0, b0] = positionals as [string, string];
      const a = await side(a0);
      const b = await side(b0);
      const { diffExplanations } = await import("../../conformance/frameworkConfig/diff.js");
      const d = diffExplanations(a.e, b.e, { a: a0, b: b0 }, { batch: name, a: a.loss, b: b.loss });
      if (values.json) writeJson(io, "explain", { diff: d });
      else {
        const { renderDiffText } = await import("../../report/explainText.js");
        io.stdout(renderDiffText(d));
      }
      return 0;
    }
    const res = await resolveCliFrameworkConfig(fn, values, passThrough, io, {
      configOption: "config",
    });
    const e = nearestOf(res);
    const out = evaluateResolution(res, inputs);
    const evaluated = { batch: name, loss: out.loss, microBatches: out.microBatches };
    if (values.json)
      writeJson(io, "explain", explanationJson(e, policyLossConfigToJson, evaluated));
    else {
      const { renderExplainText } = await import("../../report/explainText.js");
      io.stdout(
        renderExplainText(e, {
          batch: name,
          loss: out.loss,
          microBatches: out.microBatches.length,
        }),
      );
    }
    return 0;
  },
};
