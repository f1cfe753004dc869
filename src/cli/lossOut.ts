/**
 * `polgrad loss --out FILE.safetensors` by row blocks (docs/performance.md#loss---out-by-row-blocks):
 * the kernel runs a block of rows at a time on reused outputs (policyLossBlocks), each block's
 * `[B, T]` fields go straight to their offsets in the tensor file, and the text summary is
 * accumulated as the rows pass, so the result is never held whole: the process holds the batch and
 * a few MiB. The file, the JSON document and the text are byte for byte those of the whole-result
 * path (splitTensorsOut), which still runs when the rows meet anything the exact path must judge
 * (an error, an overflow) and for `--threads` above 1.
 */

import type { GlobalNormalizer } from "../aggregate/effectiveTokenWeights.js";
import type { Batch } from "../io/batch.js";
import type { PolicyLossConfig } from "../losses/config.js";
import type { PolicyOutputs } from "../losses/kernel/outputs.js";
import type { CommandIO, OptionValues } from "./command.js";
import { writeJson } from "./output.js";
import { type TensorsFileInfo, WIDEST_NUMBER } from "./tensorsOut.js";

/** Positions per block: 2^17 (3.4 MB of outputs), rows of at least one. */
const BLOCK_POSITIONS = 1 << 17;

/**
 * Evaluate `config` on `batch` into `path` by row blocks and print the result as the whole-result
 * path would. Returns the exit code, or null (nothing printed, `path` as it was) when the caller
 * must take the whole-result path.
 */
export async function lossOutByRows(
  values: OptionValues,
  io: CommandIO,
  config: PolicyLossConfig,
  source: string,
  batch: Batch,
  path: string,
  global?: GlobalNormalizer,
): Promise<number | null> {
  const { policyLossBlocks } = await import("../losses/policyLoss.js");
  const { openSafetensorsRows } = await import("../io/writeSafetensors.js");
  const { LossTextSummary, renderLossSummary } = await import("../report/lossText.js");
  const { rows: B, cols: T } = batch.logprobs;
  const shape = [B, T] as const;
  const layout = {
    grad_logprobs: { dtype: "F64", shape },
    per_token_objective: { dtype: "F64", shape },
    ratio: { dtype: "F64", shape },
    clipped_low: { dtype: "BOOL", shape },
    clipped_high: { dtype: "BOOL", shape },
  } as const;
  const metadata = (loss: string) => ({ polgrad_command: "loss", loss });
  const summary = new LossTextSummary(B, T);
  const mask = batch.responseMask.data;
  // A holder, not a `let`: TypeScript does not see the callback assign it.
  const open: { writer: ReturnType<typeof openSafetensorsRows> | null } = { writer: null };
  let result: Awaited<ReturnType<typeof policyLossBlocks>>;
  try {
    result = policyLossBlocks(
      config,
      batch,
      BLOCK_POSITIONS,
      (b0, b1, out: PolicyOutputs) => {
        // Opened at the first block: structural errors (thrown before it) leave no file behind.
        open.writer ??= openSafetensorsRows(path, layout, metadata(WIDEST_NUMBER));
        const writer = open.writer;
        writer.writeRows("grad_logprobs", b0, out.grad);
        writer.writeRows("per_token_objective", b0, out.objective);
        writer.writeRows("ratio", b0, out.ratio);
        writer.writeRows("clipped_low", b0, out.low);
        writer.writeRows("clipped_high", b0, out.high);
        if (!values.json) {
          const m = mask.subarray(b0 * T, b1 * T);
          summary.addRows(b0, m, out.ratio, out.low, out.high, out.grad);
        }
      },
      global,
    );
  } catch (e) {
    open.writer?.abort();
    throw e;
  }
  if (result === null || open.writer === null) {
    open.writer?.abort();
    return null;
  }
  open.writer.finish(metadata(String(result.loss)));
  const tensors: TensorsFileInfo["tensors"] = Object.fromEntries(
    Object.entries(layout).map(([name, t]) => [name, { dtype: t.dtype, shape: [B, T] }]),
  );
  const file: TensorsFileInfo = { path, tensors };
  const { policyLossConfigToJson } = await import("../io/configJson.js");
  if (values.json) {
    const kept = {
      config: policyLossConfigToJson(config),
      loss: result.loss,
      klLoss: result.klLoss,
      // The entropy bonus takes the whole-result path (policyLossBlocks returns null with one).
      entropyLoss: null,
      gradEntropies: null,
    };
    writeJson(io, "loss", { ...kept, tensorsFile: file });
  } else {
    const { safeText } = await import("../core/message.js");
    const text = renderLossSummary(config, source, batch.source.path, result, summary);
    io.stdout(
      `${text.replace(/\(use --json[^)]*\)\n$/, "")}tensors ${Object.keys(tensors).join(", ")} written to ${safeText(path)}\n`,
    );
  }
  return 0;
}
