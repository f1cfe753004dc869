/**
 * Enforces docs/cli.md#tensor-output: `loss --out FILE.safetensors` writes the [B, T] fields of the
 * result as F64/BOOL tensors under their wire names, bitwise the values the full `--json` prints;
 * `--json` then keeps the scalars and names the file.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { readTensors } from "../../src/io/readTensors.js";
import { useTmpDir } from "../io/_kit.js";
import { runMain } from "./_run.js";

const BATCH = fileURLToPath(new URL("../fixtures/io/frameworks/canonical.json", import.meta.url));
const tmp = useTmpDir();

describe("loss --out", () => {
  test("identity: the tensor file holds bitwise the matrices of the full json and the document its scalars", async () => {
    for (const args of [
      ["--algorithm", "grpo"],
      ["--framework", "verl@1dda039b:seq-mean-token-mean"],
    ]) {
      const full = await runMain(["loss", ...args, "--batch", BATCH, "--json"]);
      expect(full.code, full.stderr).toBe(0);
      const fullDoc = JSON.parse(full.stdout) as { result: Record<string, unknown> };
      const file = join(tmp(`out-${args[0]?.slice(2)}`)) + ".safetensors";
      const split = await runMain(["loss", ...args, "--batch", BATCH, "--out", file, "--json"]);
      expect(split.code, split.stderr).toBe(0);
      const doc = JSON.parse(split.stdout) as { result: Record<string, unknown> };
      const info = doc.result.tensors_file as {
        path: string;
        tensors: Record<string, { dtype: string; shape: number[] }>;
      };
      expect(info.path).toBe(file);
      const set = readTensors(file);
      expect([...set.tensors.keys()].sort()).toEqual(Object.keys(info.tensors).sort());
      expect(set.metadata).toMatchObject({
        polgrad_command: "loss",
        loss: String(fullDoc.result.loss),
      });
      for (const [name, t] of set.tensors) {
        // The json's nested rows, flattened, are the tensor's values (booleans as 0/1).
        const rows = fullDoc.result[name] as (number | boolean)[][];
        expect([name, Array.from(t.data)]).toEqual([name, rows.flat().map((v) => Number(v))]);
        expect(doc.result[name]).toBeUndefined();
      }
      expect(doc.result.loss).toBe(fullDoc.result.loss);
      // Text mode names the file instead of pointing to --json.
      const text = await runMain(["loss", ...args, "--batch", BATCH, "--out", file]);
      expect(text.stdout).toContain(`written to ${file}`);
    }
  });
});
