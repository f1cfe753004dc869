/** `polgrad loss`: evaluate one policy-loss configuration on a batch file. */

import type { PerceptionJson } from "../../io/configJson.js";
import type { LossConfigOfJson, PolicyLossRun } from "../../io/lossRun.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { PapoConfig } from "../../losses/papoConfig.js";
import type { AlgorithmSpec } from "../../registry/spec.js";
import {
  renderFrameworkLossText,
  renderFrameworkModelLossText,
  renderPapoLossText,
  renderTensorsWrittenText,
} from "../../report/lossCommandText.js";
import { nameOptionsOf, readCliBatch, sourceDocument } from "../batchInput.js";
import type { Command, CommandIO, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";
import { checkOneStdin, readConfigValue } from "./configOption.js";
import { resolveCliFrameworkConfig } from "./frameworkConfigOption.js";
import {
  asFlags,
  checkNoReleaseFlags,
  checkOneSettingsSource,
  fieldsOption,
  globalOption,
  isReleaseRun,
  LOSS_OPTIONS,
  noMaskDtypeWithRelease,
  noPapoForm,
  noSettingsWith,
  papoFormOf,
  policyOnly,
  withMaskDtype,
} from "./lossOptions.js";

const FN = "polgrad loss";

/** What `--config` or a non-PAPO `--algorithm` resolves to, and where it came from. */
type Resolved = LossConfigOfJson & { readonly source: string };

/** `--config` (polgrad's JSON, PAPO with a perception block) or `--algorithm`: exactly one. */
async function resolveConfig(values: OptionValues, io: CommandIO): Promise<Resolved> {
  checkOneSettingsSource(values);
  if (typeof values.algorithm === "string") {
    const { getAlgorithm } = await import("../../registry/index.js");
    const spec = getAlgorithm(values.algorithm);
    return { kind: "policy", config: spec.loss, source: `algorithm ${spec.name}` };
  }
  const { json, source } = await readConfigValue(FN, values.config as string, io);
  const { lossConfigOfJson } = await import("../../io/lossRun.js");
  return { ...lossConfigOfJson(json, source), source };
}

/** The `loss` command. */
export const lossCommand: Command = {
  name: "loss",
  summary: "Evaluate a policy loss and its closed-form gradient on a batch file.",
  usage:
    "loss (--config JSON|@file.json|- | --algorithm NAME | --framework ID [--mask-dtype DTYPE]) --batch FILE|DIR|- [--names MAP] [--norm-len N] [--global-tokens N] [--global-rows N] [--dp-size D] [--threads N] [--out FILE.safetensors] [--json] [--fields F,...]",
  options: LOSS_OPTIONS,
  async run(values, _p, io) {
    checkOneStdin(FN, values);
    if (isReleaseRun(values)) return runFrameworkConfig(values, io);
    checkNoReleaseFlags(values);
    if (typeof values.framework === "string") return runFramework(values, io);
    if (typeof values.algorithm === "string") {
      const { getAlgorithm } = await import("../../registry/index.js");
      const spec = getAlgorithm(values.algorithm);
      if (spec.papo !== undefined) return runPapo(values, io, spec);
    }
    noPapoForm(values);
    const resolved = await resolveConfig(values, io);
    if (resolved.kind === "policy") return runPolicy(values, io, resolved.config, resolved.source);
    return evaluatePapo(values, io, {
      label: `config ${resolved.source}`,
      algorithm: null,
      config: resolved.config,
      perception: resolved.perception,
    });
  },
};

/** A policy loss (`--config` or a registered algorithm): with `--out` by row blocks when it can. */
async function runPolicy(
  values: OptionValues,
  io: CommandIO,
  base: PolicyLossConfig,
  source: string,
): Promise<number> {
  const normLen = intOption(values, "norm-len", "loss");
  const config: PolicyLossConfig = normLen === undefined ? base : { ...base, normLen };
  const threads = intOption(values, "threads", "loss") ?? 1;
  await import("../../node/registerThreads.js");
  const global = globalOption(values);
  const fields = fieldsOption(values);
  const out = threads === 1 && typeof values.out === "string" ? values.out : undefined;
  if (out !== undefined && typeof values.batch === "string" && values.batch !== "-") {
    // A safetensors file never whole in memory: read, evaluated and written by row blocks
    // (src/cli/lossOut.ts); null for any other file, and whenever the whole read must judge.
    const { lossOutStreamed } = await import("../lossOut.js");
    const names = await nameOptionsOf(FN, values);
    const code = await asFlags(() =>
      lossOutStreamed(values, io, config, source, values.batch as string, names, out, global),
    );
    if (code !== null) return code;
  }
  const batch = await readCliBatch(FN, values, io);
  if (out !== undefined) {
    // The result straight to the tensor file by row blocks, never whole (src/cli/lossOut.ts).
    const { lossOutByRows } = await import("../lossOut.js");
    const code = await asFlags(() => lossOutByRows(values, io, config, source, batch, out, global));
    if (code !== null) return code;
  }
  // One thread unless asked (docs/performance.md#threads).
  const { policyLossRun } = await import("../../io/lossRun.js");
  // --fields with --json alone: only those fields are computed. With --out the text summary (and
  // so the whole result) is made, and only the fields asked for are written.
  const computed = typeof values.out === "string" ? undefined : fields;
  const result = await asFlags(async () =>
    policyLossRun(config, batch, { threads, global, fields: computed }),
  );
  const { renderLossText } = await import("../../report/lossText.js");
  const { pickWireFields } = await import("../lossOut.js");
  const doc = { ...pickWireFields(result, fields), source: sourceDocument(batch.source) };
  // The text is printed only without --json: then the result is whole (--fields needs --json or --out).
  return emit(values, io, doc, () =>
    renderLossText(
      config,
      source,
      batch.source.path,
      result as PolicyLossRun,
      batch.responseMask,
      io.width,
    ),
  );
}

/** `--framework ID`: a framework model, its settings frozen at its pin. */
async function runFramework(values: OptionValues, io: CommandIO): Promise<number> {
  noSettingsWith(
    values,
    "takes no --config, --algorithm or --norm-len (a model's settings are frozen at its pin)",
  );
  policyOnly(values, "a framework model");
  const { getFrameworkModel } = await import("../../conformance/frameworks/registry.js");
  const model = getFrameworkModel(await withMaskDtype(values));
  const batch = await readCliBatch(FN, values, io);
  const { frameworkModelLoss } = await import("../../conformance/frameworkLoss.js");
  const doc = { ...frameworkModelLoss(model, batch), source: sourceDocument(batch.source) };
  return emit(values, io, doc, () =>
    renderFrameworkModelLossText(doc.framework, batch.source.path, doc.loss),
  );
}

/** `--framework REF [--framework-config FILE]`: a framework config resolved against a release (docs/conformance/explain.md). */
async function runFrameworkConfig(values: OptionValues, io: CommandIO): Promise<number> {
  noSettingsWith(
    values,
    "with a release takes its settings from --framework-config, not from --config, --algorithm or --norm-len",
  );
  policyOnly(values, "a framework config");
  noMaskDtypeWithRelease(values);
  const res = await resolveCliFrameworkConfig(FN, values, [], io, {
    configOption: "framework-config",
  });
  const batch = await readCliBatch(FN, values, io);
  const { frameworkConfigLoss } = await import("../../conformance/frameworkLoss.js");
  const doc = { ...frameworkConfigLoss(res, batch), source: sourceDocument(batch.source) };
  const config = values["framework-config"];
  const configName = typeof config === "string" ? config : "the release's defaults";
  return emit(values, io, doc, () =>
    renderFrameworkLossText(res, configName, batch.source.path, doc),
  );
}

/**
 * Print a loss result: `--json` (every field, or with `--out FILE.safetensors` the scalars and
 * `tensors_file`), else the text; with `--out` the `[B, T]` fields go to the tensor file.
 */
async function emit(
  values: OptionValues,
  io: CommandIO,
  doc: Readonly<Record<string, unknown>>,
  text: () => string,
): Promise<number> {
  const out = values.out;
  if (typeof out !== "string") {
    if (values.json) writeJson(io, "loss", doc);
    else io.stdout(text());
    return 0;
  }
  const { splitTensorsOut } = await import("../tensorsOut.js");
  const loss = typeof doc.loss === "number" ? String(doc.loss) : "";
  const { kept, file } = await splitTensorsOut(out, doc, { polgrad_command: "loss", loss });
  if (values.json) writeJson(io, "loss", { ...kept, tensorsFile: file });
  else io.stdout(renderTensorsWrittenText(text(), Object.keys(file.tensors), out));
  return 0;
}

/** `--algorithm papo_g|papo_d`: the registered PAPO config, or the parent with a perception block. */
async function runPapo(values: OptionValues, io: CommandIO, spec: AlgorithmSpec): Promise<number> {
  const papo = spec.papo as NonNullable<AlgorithmSpec["papo"]>;
  const form = papoFormOf(values);
  if (typeof values.config === "string") {
    const { json, source } = await readConfigValue(FN, values.config, io);
    const { parseLossConfig } = await import("../../io/configJson.js");
    const parsed = parseLossConfig(json, source, { config: spec.loss, name: spec.name });
    return evaluatePapo(values, io, {
      label: `algorithm ${spec.name} with ${source}`,
      algorithm: spec.name,
      config: parsed.papo as PapoConfig,
      perception: parsed.perception as PerceptionJson,
    });
  }
  const { papoOfRegistry } = await import("../../io/lossRun.js");
  return evaluatePapo(values, io, {
    label: `algorithm ${spec.name}`,
    algorithm: spec.name,
    ...papoOfRegistry(papo[form]),
  });
}

/** Evaluate papoLoss on `--batch` and print the result (text, or the PAPO `--json` shape). */
async function evaluatePapo(
  values: OptionValues,
  io: CommandIO,
  run: {
    readonly label: string;
    readonly algorithm: string | null;
    readonly config: PapoConfig;
    readonly perception: PerceptionJson;
  },
): Promise<number> {
  policyOnly(values, "a PAPO loss");
  const normLen = intOption(values, "norm-len", "loss");
  const config = normLen === undefined ? run.config : { ...run.config, normLen };
  const batch = await readCliBatch(FN, values, io, ["masked_logprobs"]);
  const { papoLossRun } = await import("../../io/lossRun.js");
  const doc = { ...papoLossRun({ ...run, config }, batch), source: sourceDocument(batch.source) };
  const label = `${run.label} (${doc.form} form)`;
  return emit(values, io, doc, () =>
    renderPapoLossText(label, batch.source.path, run.perception, config.kl ?? null, doc),
  );
}
