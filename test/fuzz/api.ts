/**
 * The functions the fuzz targets (scripts/fuzz/targets.mjs) exercise, taken from src/ (the long
 * campaign, scripts/fuzz.mjs, takes the same names from dist/).
 */

import { lossOutStreamed } from "../../src/cli/lossOut.js";
import { COMMANDS, main } from "../../src/cli/main.js";
import { resolveFrameworkConfig } from "../../src/conformance/frameworkConfig/explain.js";
import { evaluateResolution } from "../../src/conformance/frameworkConfig/resolution.js";
import { extractDefinitions } from "../../src/conformance/python/definitions.js";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { PolgradError } from "../../src/errors.js";
import { parseJsonText } from "../../src/io/_internal/jsonText.js";
import { toBatch } from "../../src/io/batch.js";
import { parsePolicyLossConfig } from "../../src/io/configJson.js";
import { detectMetricLogFormat } from "../../src/io/metricLogs/detect.js";
import { parseJsonlLog } from "../../src/io/metricLogs/jsonl.js";
import { parseTensorboardEvents } from "../../src/io/metricLogs/tensorboard.js";
import { parseTrainerState } from "../../src/io/metricLogs/trainerState.js";
import { parseWandbExport } from "../../src/io/metricLogs/wandb.js";
import { TENSOR_READERS } from "../../src/io/readers.js";
import { tensorsFromJson } from "../../src/io/tensorsFromJson.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { getAlgorithm } from "../../src/registry/index.js";
import { BUILTIN_BATCH } from "../../src/which/index.js";
import { runMain } from "../cli/_run.js";

/** The fuzzed API, from src/; the CLI runs through the shared runner (schemas validated). */
export const SRC_API: Record<string, unknown> = {
  COMMANDS,
  main,
  runCli: runMain,
  extractDefinitions,
  writeDemoRun,
  diagnoseRun,
  PolgradError,
  parseJsonText,
  toBatch,
  parsePolicyLossConfig,
  TENSOR_READERS,
  tensorsFromJson,
  encodeSafetensors,
  policyLoss,
  resolveFrameworkConfig,
  evaluateResolution,
  BUILTIN_BATCH,
  lossOutStreamed,
  getAlgorithm,
  parseJsonlLog,
  parseTrainerState,
  parseWandbExport,
  detectMetricLogFormat,
  parseTensorboardEvents,
};
