/**
 * Enforces docs/io.md#warnings: polgrad 0.2.0's own batches (its README builds
 * `old = logprobs + 0.1·randn`, so some old log-probabilities are above 0, as in the built-in
 * `which` batch) are read by the CLI as given, with one warning line, and agree with polgrad's
 * recorded numbers; `--strict` refuses them as before; the built-in batch round-trips through
 * every format a user writes (safetensors, JSON, a folder of .npy files, .npz) and evaluates
 * bitwise as in memory.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parsePolicyLossConfig } from "../../src/io/configJson.js";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { policyLoss } from "../../src/losses/policyLoss.js";
import { BUILTIN_BATCH } from "../../src/which/index.js";
import { loadPolgradFixture, relErr } from "../_kit/polgradFixtures.js";
import { useTmpDir } from "../io/_kit.js";
import { npyBytes, npzBytes } from "../io/_writers.js";
import { contractViolations, runBin, runMain } from "./_run.js";

const tmp = useTmpDir();

interface WhichFixture {
  readonly polgrad_rows: readonly {
    readonly key: string;
    readonly config: Record<string, unknown>;
    readonly loss: number;
  }[];
}
const fx = loadPolgradFixture<WhichFixture>("which_example.json");

// The built-in batch is nested rows (its type admits matrices too).
const LP = BUILTIN_BATCH.logprobs as readonly (readonly number[])[];
const OLD = BUILTIN_BATCH.oldLogprobs as readonly (readonly number[])[];
const MASK = BUILTIN_BATCH.responseMask as readonly (readonly boolean[])[];
const B = LP.length;
const T = (LP[0] as readonly number[]).length;
const flat = (x: readonly (readonly number[])[]) => x.flat();
const maskFlat = MASK.flat().map((m) => (m ? 1 : 0));
const advantages = [...(BUILTIN_BATCH.advantages as readonly number[])];

/** The built-in batch written in one format; returns the path `--batch` takes. */
function writeBuiltin(format: "safetensors" | "json" | "npy-folder" | "npz"): string {
  const lp = flat(LP);
  const old = flat(OLD);
  if (format === "safetensors") {
    const path = `${tmp("builtin")}.safetensors`;
    writeFileSync(
      path,
      encodeSafetensors({
        logprobs: { dtype: "F64", shape: [B, T], data: lp },
        old_logprobs: { dtype: "F64", shape: [B, T], data: old },
        advantages: { dtype: "F64", shape: [B], data: advantages },
        response_mask: { dtype: "BOOL", shape: [B, T], data: maskFlat },
      }),
    );
    return path;
  }
  if (format === "json") {
    const path = `${tmp("builtin")}.json`;
    writeFileSync(
      path,
      JSON.stringify({
        logprobs: LP,
        old_logprobs: OLD,
        advantages,
        response_mask: MASK,
      }),
    );
    return path;
  }
  const arrays = {
    logprobs: { descr: "<f8" as const, shape: [B, T], data: lp },
    old_logprobs: { descr: "<f8" as const, shape: [B, T], data: old },
    advantages: { descr: "<f8" as const, shape: [B], data: advantages },
    response_mask: { descr: "|b1" as const, shape: [B, T], data: maskFlat },
  };
  if (format === "npz") {
    const path = `${tmp("builtin")}.npz`;
    writeFileSync(path, npzBytes(arrays));
    return path;
  }
  const dir = tmp("builtin-npy");
  mkdirSync(dir, { recursive: true });
  for (const [name, a] of Object.entries(arrays))
    writeFileSync(join(dir, `${name}.npy`), npyBytes(a.descr, a.shape, a.data));
  return dir;
}

// The built-in batch's old log-probabilities above 0 at response positions (lengths 2, 4, 6, 8):
// (1, 1) 0.2406492423880674, (2, 4) 0.10005089515942645, (3, 5) 0.34811806835866455.
const WARNING =
  "polgrad loss: warning: old_logprobs: 3 value(s) > 0, first 0.2406492423880674 at (1, 1): probabilities or logits stored by mistake? (--strict makes this an error)\n";

describe("polgrad-style batches", () => {
  test("golden: the built-in batch, positive old log-probs included, evaluates through the binary with one warning line and agrees with polgrad", () => {
    const file = writeBuiltin("safetensors");
    for (const row of fx.polgrad_rows) {
      const run = runBin([
        "loss",
        "--config",
        JSON.stringify(row.config),
        "--batch",
        file,
        "--json",
      ]);
      expect(contractViolations(run, 0), row.key).toEqual([]);
      expect(run.stderr, row.key).toBe(WARNING);
      const doc = JSON.parse(run.stdout) as {
        result: { loss: number; source: { warnings: { count: number; first_at: number[] }[] } };
      };
      // polgrad 0.2.0's autograd on the same batch (examples/which_grpo_am_i_running.py).
      expect(relErr(doc.result.loss, row.loss), row.key).toBeLessThanOrEqual(1e-12);
      expect(doc.result.source.warnings.map((w) => [w.count, w.first_at])).toEqual([[3, [1, 1]]]);
    }
  });

  test("rejects: --strict refuses a positive log-probability as before, one line, empty stdout", () => {
    const file = writeBuiltin("safetensors");
    const run = runBin(["loss", "--algorithm", "dapo", "--batch", file, "--strict"]);
    expect(contractViolations(run, 2)).toEqual([]);
    expect(run.stderr).toContain(
      "old_logprobs must be a log-probability (≤ 0) at every response position (strict); got 0.2406492423880674 at (1, 1) (3 value(s) > 0)",
    );
  });

  test("identity: the built-in batch round-trips through safetensors, json, an npy folder and npz and evaluates bitwise as in memory", async () => {
    const inMemory = await runMain(["which", "--json"]);
    expect(inMemory.code).toBe(0);
    const rowsOf = (stdout: string) => JSON.stringify(JSON.parse(stdout).result.rows);
    const dapo = parsePolicyLossConfig(
      {
        ratio: "token",
        surrogate: "pg_clip",
        clip: { eps_low: 0.2, eps_high: 0.28 },
        aggregation: "token_mean",
      },
      "test",
    );
    const direct = policyLoss(dapo, BUILTIN_BATCH);
    for (const format of ["safetensors", "json", "npy-folder", "npz"] as const) {
      const path = writeBuiltin(format);
      const which = await runMain(["which", "--batch", path, "--json"]);
      expect(which.code, `${format}: ${which.stderr}`).toBe(0);
      expect(rowsOf(which.stdout), format).toBe(rowsOf(inMemory.stdout));
      const loss = await runMain(["loss", "--algorithm", "dapo", "--batch", path, "--json"]);
      expect(loss.code, format).toBe(0);
      const r = JSON.parse(loss.stdout).result as { loss: number; grad_logprobs: number[][] };
      expect(Object.is(r.loss, direct.loss), format).toBe(true);
      expect(r.grad_logprobs.flat(), format).toEqual([...direct.gradLogprobs.data]);
    }
  });
});
