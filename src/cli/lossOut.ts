/**
 * `polgrad loss --out FILE.safetensors` by row blocks (docs/performance.md#loss---out-by-row-blocks):
 * the kernel runs a block of rows at a time on reused outputs, each block's `[B, T]` fields go
 * straight to their offsets in the tensor file, and the text summary is accumulated as the rows
 * pass, so the result is never held whole. Two sources of rows:
 *
 * - {@link lossOutStreamed}: a safetensors `--batch` file read a block of rows at a time
 *   (docs/performance.md#loss---out-streamed), so the batch is never whole in memory either; the
 *   process holds a few MiB beyond Node's own;
 * - {@link lossOutByRows}: a batch read whole (any other source), run by policyLossBlocks.
 *
 * The file, the JSON document and the text are byte for byte those of the whole-result path
 * (splitTensorsOut), which still runs when the rows meet anything the exact path must judge
 * (an error, an overflow) and for `--threads` above 1.
 */

import type { GlobalNormalizer } from "../aggregate/effectiveTokenWeights.js";
import type { Batch, BatchWarning } from "../io/batch.js";
import type { NameOptions } from "../io/names.js";
import type { PolicyLossConfig } from "../losses/config.js";
import { POLICY_LOSS_FIELDS, type PolicyLossField } from "../losses/fields.js";
import type { PolicyOutputs } from "../losses/kernel/outputs.js";
import type { PolicyLossScalars } from "../losses/policyLoss.js";
import { snakeCase } from "../report/wire.js";
import { type SourceDocument, sourceDocument } from "./batchInput.js";
import type { CommandIO, OptionValues } from "./command.js";
import { fieldsOption } from "./commands/lossOptions.js";
import { writeJson } from "./output.js";
import { type TensorsFileInfo, WIDEST_NUMBER } from "./tensorsOut.js";

/**
 * A loss document with only the result fields `--fields` asks for (all without it) and, with it,
 * `fields`: the names asked for, after `config`. Its other keys (config, source) are kept.
 * @internal
 */
export function pickWireFields(
  doc: object,
  fields: ReadonlySet<PolicyLossField> | undefined,
): Record<string, unknown> {
  if (fields === undefined) return { ...doc };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    if ((POLICY_LOSS_FIELDS as readonly string[]).includes(k) && !fields.has(k as PolicyLossField))
      continue;
    out[k] = v;
    if (k === "config") out.fields = POLICY_LOSS_FIELDS.filter((f) => fields.has(f)).map(snakeCase);
  }
  return out;
}

/** Positions per block: 2^16 (1.7 MB of outputs), rows of at least one. */
const BLOCK_POSITIONS = 1 << 16;

/** A block consumer: rows [b0, b1) of the result and of the mask. */
type OnBlock = (b0: number, b1: number, out: PolicyOutputs, mask: Uint8Array) => void;

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
  const { rows: B, cols: T } = batch.logprobs;
  const mask = batch.responseMask.data;
  return writeByRows(
    values,
    io,
    config,
    source,
    () => sourceDocument(batch.source),
    B,
    T,
    path,
    (onBlock) =>
      policyLossBlocks(
        config,
        batch,
        BLOCK_POSITIONS,
        (b0, b1, out) => onBlock(b0, b1, out, mask.subarray(b0 * T, b1 * T)),
        global,
      ),
  );
}

/**
 * {@link lossOutByRows} on a safetensors `--batch` file read a block of rows at a time: a first
 * pass reads the mask alone and counts the rows' response tokens; the second validates each block
 * as toBatch validates the whole file (the same names, dtypes, shapes, mask values and
 * log-probability signs, block by block), checks that its rows' token counts are pass 1's (so the
 * normaliser is the mask toBatch reads), evaluates it (policyLossRowStream) and writes it.
 * Returns null, with nothing printed, for any other source and whenever a block or the whole
 * would meet an error or anything policyLossRowStream leaves to the whole call: the caller then
 * reads the file whole, and that path reports what it always reports.
 *
 * @enforcedBy test/cli/lossStreamed.test.ts > lossOutStreamed > identity: the streamed file, JSON and text are byte for byte the whole-batch path's, across dtypes, name maps, configs and block sizes
 */
export async function lossOutStreamed(
  values: OptionValues,
  io: CommandIO,
  config: PolicyLossConfig,
  source: string,
  batchPath: string,
  names: NameOptions,
  path: string,
  global?: GlobalNormalizer,
  positions: number = BLOCK_POSITIONS,
): Promise<number | null> {
  const fn = "polgrad loss";
  const { openSafetensorsRowReader } = await import("../io/readSafetensors.js");
  const reader = openSafetensorsRowReader(fn, batchPath);
  if (reader === null) return null;
  try {
    const { resolveNames } = await import("../io/names.js");
    const { toBatchAs, mergeBatchWarnings } = await import("../io/batch.js");
    const { nameNotice, warningLines } = await import("./batchInput.js");
    const { policyLossRowStream } = await import("../losses/policyLoss.js");
    // [B, T] from the header: the tensor the names read as logprobs; the mask's name in the file.
    let resolved: ReturnType<typeof resolveNames>;
    try {
      resolved = resolveNames(fn, reader.shapes, names);
    } catch {
      return null;
    }
    const lp = resolved.set.tensors.get("logprobs");
    if (lp === undefined || lp.shape.length !== 2) return null;
    const [B = 0, T = 0] = lp.shape;
    if (B < 1 || T < 1) return null;
    // A mask cut out of a wider one (--response-slice): pass 1 reads whole blocks.
    const maskName =
      names.responseSlice === undefined && resolved.set.tensors.has("response_mask")
        ? (resolved.names.renamed.response_mask ?? "response_mask")
        : undefined;
    const rows = Math.max(1, Math.min(B, Math.floor(positions / T)));
    const block = (b0: number, b1: number): Batch | null => {
      try {
        const b = toBatchAs(fn, reader.rows(B, b0, b1), names);
        return b.logprobs.rows === b1 - b0 && b.logprobs.cols === T ? b : null;
      } catch {
        return null;
      }
    };
    // Pass 1: the rows' response tokens, from the mask alone (each block is validated whole, as
    // toBatch validates the file, in pass 2; a mask value other than 0/1 is the whole path's to
    // name).
    const lengths = new Int32Array(B);
    for (let b0 = 0; b0 < B; b0 += rows) {
      const b1 = Math.min(B, b0 + rows);
      let m: ArrayLike<number>;
      if (maskName === undefined) {
        const b = block(b0, b1);
        if (b === null) return null;
        m = b.responseMask.data;
      } else {
        let t: { readonly shape: readonly number[]; readonly data: ArrayLike<number> } | undefined;
        try {
          t = reader.rows(B, b0, b1, maskName).tensors.get(maskName);
        } catch {
          return null;
        }
        if (t === undefined || t.shape.length !== 2 || t.shape[1] !== T) return null;
        m = t.data;
      }
      if (!rowCounts(m, b1 - b0, T, lengths, b0)) return null;
    }
    let tokens = 0;
    let emptyRows = 0;
    for (const n of lengths) {
      tokens += n;
      if (n === 0) emptyRows++;
    }
    const again = new Int32Array(rows);
    let notice = "";
    let format = "safetensors";
    // Each block's warnings (a log-probability above 0), merged as one read of the file gives them.
    const blockWarnings: { rowOffset: number; warnings: readonly BatchWarning[] }[] = [];
    let merged: BatchWarning[] | null = null;
    const warnings = (): BatchWarning[] => {
      merged ??= mergeBatchWarnings(blockWarnings);
      return merged;
    };
    // Pass 2: each block evaluated and written.
    const code = await writeByRows(
      values,
      io,
      config,
      source,
      () => ({ path: batchPath, format, warnings: warnings() }),
      B,
      T,
      path,
      (onBlock) => {
        let mask: Uint8Array = new Uint8Array(0);
        return policyLossRowStream(
          config,
          B,
          T,
          { tokens, emptyRows },
          (b0, b1) => {
            const b = block(b0, b1);
            if (b === null) return null;
            if (b0 === 0) {
              notice = nameNotice(fn, b.source.names);
              format = b.source.format;
            }
            if (b.source.warnings.length > 0)
              blockWarnings.push({ rowOffset: b0, warnings: b.source.warnings });
            mask = b.responseMask.data;
            // The mask pass 1 counted must be the one toBatch reads: each row's count again.
            if (!rowCounts(mask, b1 - b0, T, again, 0)) return null;
            for (let r = 0; r < b1 - b0; r++) if (again[r] !== lengths[b0 + r]) return null;
            return b;
          },
          positions,
          (b0, b1, out) => onBlock(b0, b1, out, mask),
          global,
        );
      },
      () => {
        const text = notice + warningLines(fn, warnings());
        if (text !== "") (io.notice ?? io.stderr)(text);
      },
    );
    return code;
  } finally {
    reader.close();
  }
}

/**
 * Count the 1s of each of `rows` mask rows of width T into `into[at + r]`; false when a value is
 * neither 0 nor 1 (the whole read names it).
 */
function rowCounts(
  m: ArrayLike<number>,
  rows: number,
  T: number,
  into: Int32Array,
  at: number,
): boolean {
  for (let r = 0; r < rows; r++) {
    let n = 0;
    for (let i = r * T; i < (r + 1) * T; i++) {
      const v = m[i] as number;
      if (v === 1) n++;
      else if (v !== 0) return false;
    }
    into[at + r] = n;
  }
  return true;
}

/**
 * Run `evaluate` (which hands each block to its callback in row order) into the tensor file at
 * `path`, then print the result; `before` runs just before anything is printed. Null when
 * `evaluate` stops (the file removed, nothing printed).
 */
async function writeByRows(
  values: OptionValues,
  io: CommandIO,
  config: PolicyLossConfig,
  source: string,
  batchSource: () => SourceDocument,
  B: number,
  T: number,
  path: string,
  evaluate: (onBlock: OnBlock) => PolicyLossScalars | null,
  before?: () => void,
): Promise<number | null> {
  const { openSafetensorsRows } = await import("../io/writeSafetensors.js");
  const { LossTextSummary, renderLossSummary } = await import("../report/lossText.js");
  const shape = [B, T] as const;
  const fields = fieldsOption(values);
  const all = {
    grad_logprobs: { dtype: "F64", shape },
    per_token_objective: { dtype: "F64", shape },
    ratio: { dtype: "F64", shape },
    clipped_low: { dtype: "BOOL", shape },
    clipped_high: { dtype: "BOOL", shape },
  } as const;
  // --fields: only the tensors asked for are written.
  const wire = fields === undefined ? null : new Set([...fields].map(snakeCase));
  const asked = (name: keyof typeof all): boolean => wire === null || wire.has(name);
  const layout = Object.fromEntries(
    Object.entries(all).filter(([name]) => asked(name as keyof typeof all)),
  ) as Partial<typeof all>;
  const metadata = (loss: string) => ({ polgrad_command: "loss", loss });
  const summary = new LossTextSummary(B, T);
  // A holder, not a `let`: TypeScript does not see the callback assign it.
  const open: { writer: ReturnType<typeof openSafetensorsRows> | null } = { writer: null };
  let result: PolicyLossScalars | null;
  try {
    result = evaluate((b0, _b1, out, mask) => {
      // Opened at the first block: structural errors (thrown before it) leave no file behind.
      open.writer ??= openSafetensorsRows(path, layout, metadata(WIDEST_NUMBER));
      const writer = open.writer;
      if (asked("grad_logprobs")) writer.writeRows("grad_logprobs", b0, out.grad);
      if (asked("per_token_objective")) writer.writeRows("per_token_objective", b0, out.objective);
      if (asked("ratio")) writer.writeRows("ratio", b0, out.ratio);
      if (asked("clipped_low")) writer.writeRows("clipped_low", b0, out.low);
      if (asked("clipped_high")) writer.writeRows("clipped_high", b0, out.high);
      if (!values.json) summary.addRows(b0, mask, out.ratio, out.low, out.high, out.grad);
    });
  } catch (e) {
    open.writer?.abort();
    throw e;
  }
  if (result === null || open.writer === null) {
    open.writer?.abort();
    return null;
  }
  open.writer.finish(metadata(String(result.loss)));
  before?.();
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
      // The entropy bonus takes the whole-result path (the row paths return null with one).
      entropyLoss: null,
      gradEntropies: null,
      source: batchSource(),
    };
    writeJson(io, "loss", { ...pickWireFields(kept, fields), tensorsFile: file });
  } else {
    const { safeText } = await import("../core/message.js");
    const text = renderLossSummary(config, source, batchSource().path, result, summary, io.width);
    io.stdout(
      `${text.replace(/\(use --json[^)]*\)\n$/, "")}tensors ${Object.keys(tensors).join(", ")} written to ${safeText(path)}\n`,
    );
  }
  return 0;
}
