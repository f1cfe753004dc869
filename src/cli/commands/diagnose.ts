/** `polgrad diagnose PATH`: every detector on one batch file or a whole run directory. */
import { statSync } from "node:fs";
import { fmtValue, mustBe, safeText } from "../../core/message.js";
import { IoError, UsageError } from "../../errors.js";
import type { ClipConfig } from "../../losses/config.js";
import type { Command, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";
import { progressBar } from "../progress.js";

/** A decimal number as written on a command line (no empty item: `Number("")` would be 0). */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function clipOption(values: OptionValues): ClipConfig | undefined {
  const raw = values.clip;
  if (raw === undefined) return undefined;
  const items = String(raw)
    .split(",")
    .map((x) => x.trim());
  const parts = items.map((x) => (NUMBER.test(x) ? Number(x) : Number.NaN));
  if (parts.length < 2 || parts.length > 3 || parts.some((x) => !Number.isFinite(x))) {
    throw new UsageError(
      "polgrad diagnose",
      "--clip",
      mustBe(
        "polgrad diagnose",
        "--clip",
        "EPS_LOW,EPS_HIGH[,RATIO_CAP] (two or three finite numbers, none empty)",
        fmtValue(raw),
      ),
    );
  }
  return { epsLow: parts[0] as number, epsHigh: parts[1] as number, ratioCap: parts[2] ?? null };
}

/** The `diagnose` command. */
export const diagnoseCommand: Command = {
  name: "diagnose",
  summary:
    "Run every pathology detector whose inputs are present on a batch file or a run directory of step files.",
  usage:
    "diagnose PATH [--clip LO,HI[,CAP]] [--agg MODE] [--norm-len N] [--window N] [--seed N] [--json]",
  positionals: 1,
  options: {
    clip: {
      type: "string",
      argument: "LO,HI[,CAP]",
      description: "clip band of the PPO census",
      default: "0.2,0.2,3",
    },
    agg: {
      type: "string",
      argument: "MODE",
      description: "aggregation weighing tokens in the length-bias probe",
      default: "seq_mean_token_mean",
    },
    "norm-len": { type: "string", argument: "N", description: "budget for --agg token_sum_norm" },
    window: {
      type: "string",
      argument: "N",
      description: "trailing window of the entropy changepoint test (runs)",
      default: "60% of the steps",
    },
    seed: {
      type: "string",
      argument: "N",
      description: "seed of the permutation test (runs)",
      default: "1",
    },
    json: { type: "boolean", description: "print one JSON document" },
  },
  async run(values, positionals, io) {
    const path = positionals[0];
    if (path === undefined || positionals.length > 1) {
      throw new UsageError(
        "polgrad diagnose",
        "PATH",
        `polgrad diagnose: PATH must be exactly one batch file or run directory; got ${positionals.length} arguments`,
      );
    }
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      // Not found: readTensors reports the missing file below with its own message.
    }
    const { checkAggregation } = await import("../../aggregate/aggregation.js");
    const options = {
      ...(values.clip !== undefined ? { clip: clipOption(values) as ClipConfig } : {}),
      ...(values.agg !== undefined
        ? { aggregation: checkAggregation("polgrad diagnose", "--agg", values.agg) }
        : {}),
      normLen: intOption(values, "norm-len", "diagnose") ?? null,
    };
    if (isDir) {
      const { diagnoseRun, listRunSteps } = await import("../../diagnostics/diagnoseRun.js");
      const bar = progressBar(io, "diagnosing", io.stderrIsTTY === true && !values.json);
      const window = intOption(values, "window", "diagnose");
      const d = diagnoseRun(
        path,
        {
          ...options,
          ...(window !== undefined ? { window } : {}),
          seed: intOption(values, "seed", "diagnose", 0) ?? 1,
        },
        bar.tick,
      );
      bar.finish();
      if (d.steps.length === 0) {
        // Nothing was diagnosed: an input error (exit 2), never a clean report.
        const unreadable = listRunSteps(path).files.length;
        throw new IoError(
          "polgrad diagnose",
          "PATH",
          mustBe(
            "polgrad diagnose",
            "PATH",
            "a run directory with at least one readable step file",
            `${unreadable} step file(s), every one unreadable or invalid, in ${safeText(path)}`,
          ),
          path,
        );
      }
      if (values.json) writeJson(io, "diagnose", d);
      else {
        const { renderRunDiagnosisText } = await import("../../report/diagnoseText.js");
        io.stdout(renderRunDiagnosisText(d));
      }
      return d.alarms.length > 0 ? 1 : 0;
    }
    const { readTensors } = await import("../../io/readTensors.js");
    const { toPartialBatch } = await import("../../io/batch.js");
    const { diagnoseBatch } = await import("../../diagnostics/diagnoseBatch.js");
    const d = diagnoseBatch(toPartialBatch(readTensors(path)), options);
    if (values.json) writeJson(io, "diagnose", d);
    else {
      const { renderBatchDiagnosisText } = await import("../../report/diagnoseText.js");
      io.stdout(renderBatchDiagnosisText(d, path));
    }
    // A mismatch KL that overflows (a gap beyond 709 nats) is catastrophic by any threshold.
    const alarm =
      (d.mismatch?.catastrophicCount ?? 0) > 0 ||
      d.skipped.some((s) => s.detector === "mismatch" && s.code === "E_OVERFLOW") ||
      (d.lengthBias !== null && (d.lengthBias.ciLow > 0 || d.lengthBias.ciHigh < 0));
    return alarm ? 1 : 0;
  },
};
