/** `polgrad diagnose PATH`: every detector on one batch file or a whole run directory. */
import { statSync } from "node:fs";
import { fmtValue, mustBe, safeText } from "../../core/message.js";
import { UsageError } from "../../errors.js";
import type { ClipConfig } from "../../losses/config.js";
import { NAME_OPTIONS, nameNotice, nameOptionsOf, readBatchTensors } from "../batchInput.js";
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
    "Run every pathology detector whose inputs are present on a batch file, a step folder or a run folder (step_N, global_step_N/, iter_N, any format).",
  usage:
    "diagnose PATH|- [--names MAP] [--clip LO,HI[,CAP]] [--agg MODE] [--norm-len N] [--window N] [--seed N] [--json]",
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
    ...NAME_OPTIONS,
    json: {
      type: "boolean",
      description: "print one JSON document (ok: true iff no alarm fired)",
    },
  },
  async run(values, positionals, io) {
    const fn = "polgrad diagnose";
    const path = positionals[0];
    if (path === undefined || positionals.length > 1) {
      throw new UsageError(
        fn,
        "PATH",
        `${fn}: PATH must be exactly one batch file, step folder, run folder or - (stdin); got ${positionals.length} arguments`,
      );
    }
    const { checkAggregation } = await import("../../aggregate/aggregation.js");
    const names = await nameOptionsOf(fn, values);
    const options = {
      ...(values.clip !== undefined ? { clip: clipOption(values) as ClipConfig } : {}),
      ...(values.agg !== undefined
        ? { aggregation: checkAggregation(fn, "--agg", values.agg) }
        : {}),
      normLen: intOption(values, "norm-len", "diagnose") ?? null,
    };
    if (path !== "-" && (await isRunFolder(path))) {
      const { diagnoseRun } = await import("../../diagnostics/diagnoseRun.js");
      const bar = progressBar(io, "diagnosing", io.stderrIsTTY === true && !values.json);
      const window = intOption(values, "window", "diagnose");
      const d = diagnoseRun(
        path,
        {
          ...options,
          ...names,
          ...(window !== undefined ? { window } : {}),
          seed: intOption(values, "seed", "diagnose", 0) ?? 1,
        },
        bar.tick,
      );
      bar.finish();
      const notice = runNotice(fn, d);
      if (notice !== "") (io.notice ?? io.stderr)(notice);
      if (values.json) writeJson(io, "diagnose", d, d.alarms.length === 0);
      else {
        const { renderRunDiagnosisText } = await import("../../report/diagnoseText.js");
        io.stdout(renderRunDiagnosisText(d));
      }
      return d.alarms.length > 0 ? 1 : 0;
    }
    const { toPartialBatch } = await import("../../io/batch.js");
    const { diagnoseBatch } = await import("../../diagnostics/diagnoseBatch.js");
    const batch = toPartialBatch(await readBatchTensors(fn, path, io), names);
    const notice = nameNotice(fn, batch.source.names);
    if (notice !== "") (io.notice ?? io.stderr)(notice);
    const d = diagnoseBatch(batch, options);
    if (values.json) writeJson(io, "diagnose", d, d.alarms.length === 0);
    else {
      const { renderBatchDiagnosisText } = await import("../../report/diagnoseText.js");
      io.stdout(renderBatchDiagnosisText(d, path === "-" ? "<stdin>" : path));
    }
    return d.alarms.length > 0 ? 1 : 0;
  },
};

/**
 * A folder is a run when it holds step entries (step_N, global_step_N/, …) or no tensor file of
 * its own; a folder of tensor files (one `.npy` per tensor) is one batch.
 */
async function isRunFolder(path: string): Promise<boolean> {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    return false; // the batch reader reports the missing path with its own message
  }
  if (!isDir) return false;
  const { scanRunFolder } = await import("../../io/runFolder.js");
  const scan = scanRunFolder(path, "polgrad diagnose");
  if (scan.steps.length > 0 || scan.problems.length > 0) return true;
  const { tensorFilesOf } = await import("../../io/readTensors.js");
  return tensorFilesOf("polgrad diagnose", path).length === 0;
}

/** The run's one stderr notice: the names read and the tensors set aside, over all steps. */
function runNotice(fn: string, d: import("../../diagnostics/diagnoseRun.js").RunDiagnosis): string {
  const parts: string[] = [];
  const maps = d.names.maps.filter((m) => m.map !== "polgrad");
  if (maps.length > 0)
    parts.push(
      `read ${maps.map((m) => `${m.map} names (${m.detected ? "detected" : "given"}) on ${m.steps} step(s)`).join(", ")}`,
    );
  for (const n of d.names.notes) parts.push(n);
  if (d.names.ignored.length > 0) {
    const list = d.names.ignored.slice(0, 20).map((i) => safeText(i.name, 60));
    parts.push(
      `ignored ${d.names.ignored.length} tensor name(s) the batch does not use: ${list.join(", ")}${d.names.ignored.length > 20 ? ", …" : ""} (--strict makes this an error)`,
    );
  }
  return parts.length === 0 ? "" : `${fn}: ${parts.join("; ")}\n`;
}
