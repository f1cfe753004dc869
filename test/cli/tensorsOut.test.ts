/**
 * Enforces docs/cli.md#tensor-output: `loss --out FILE.safetensors` writes the [B, T] fields of the
 * result as F64/BOOL tensors under their wire names, bitwise the values the full `--json` prints;
 * `--json` then keeps the scalars and names the file.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { readTensors } from "../../src/io/readTensors.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
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
      const file = `${join(tmp(`out-${args[0]?.slice(2)}`))}.safetensors`;
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
      const text = await runMain(["loss", ...args, "--batch", BATCH, "--out", file, "--wide"]);
      expect(text.stdout).toContain(`written to ${file}`);
    }
  });

  test("identity: by row blocks (the default, from a file or stdin) the file, the document and the text are byte for byte the whole-result path's (--threads 2)", async () => {
    const dir = tmp("rows");
    mkdirSync(dir, { recursive: true });
    // A batch of several blocks: 40 rows of 8192 positions (2^16 positions a block: 8 rows).
    const B = 40;
    const T = 8192;
    const lp = new Float64Array(B * T);
    const old = new Float64Array(B * T);
    const ref = new Float64Array(B * T);
    const mask = new Uint8Array(B * T);
    const adv = new Float64Array(B);
    for (let b = 0; b < B; b++) {
      adv[b] = Math.sin(b + 1);
      const L = 1 + ((b * 977) % T);
      for (let t = 0; t < L; t++) {
        const i = b * T + t;
        mask[i] = t % 97 === 5 ? 0 : 1;
        old[i] = -1 - Math.abs(Math.sin(i));
        lp[i] = old[i] + 0.3 * Math.sin(3 * i);
        ref[i] = old[i] + 0.05 * Math.cos(i);
      }
      mask[b * T] = 1;
    }
    const batch = join(dir, "batch.safetensors");
    const m = (data: Float64Array | Uint8Array, dtype: "F64" | "BOOL") => ({
      dtype,
      shape: [B, T],
      data,
    });
    writeSafetensors(batch, {
      logprobs: m(lp, "F64"),
      old_logprobs: m(old, "F64"),
      ref_logprobs: m(ref, "F64"),
      advantages: { dtype: "F64", shape: [B], data: adv },
      response_mask: m(mask, "BOOL"),
    });
    for (const algo of ["dapo", "grpo", "gspo", "cispo"]) {
      const out = (how: string) => [join(dir, `${algo}-${how}.safetensors`)];
      for (const json of [["--json"], []]) {
        const [a] = out(`rows${json.length}`);
        const [b] = out(`whole${json.length}`);
        const rows = await runMain([
          "loss",
          "--algorithm",
          algo,
          "--batch",
          batch,
          "--out",
          a as string,
          ...json,
        ]);
        const whole = await runMain([
          "loss",
          "--algorithm",
          algo,
          "--batch",
          batch,
          "--out",
          b as string,
          "--threads",
          "2",
          ...json,
        ]);
        expect(rows.code, rows.stderr).toBe(0);
        expect(whole.code, whole.stderr).toBe(0);
        expect(readFileSync(a as string).equals(readFileSync(b as string)), `${algo} file`).toBe(
          true,
        );
        expect(rows.stdout.replaceAll(a as string, "F"), algo).toBe(
          whole.stdout.replaceAll(b as string, "F"),
        );
        // From stdin the batch is read whole, then run by row blocks (lossOutByRows; a file is
        // streamed, test/cli/lossStreamed.test.ts): the same bytes.
        const [c] = out(`stdin${json.length}`);
        const viaStdin = await runMain(
          ["loss", "--algorithm", algo, "--batch", "-", "--out", c as string, ...json],
          { stdin: readFileSync(batch) },
        );
        expect(viaStdin.code, viaStdin.stderr).toBe(0);
        expect(readFileSync(c as string).equals(readFileSync(b as string)), `${algo} stdin`).toBe(
          true,
        );
        expect(
          viaStdin.stdout.replaceAll(c as string, "F").replaceAll("<stdin>", batch),
          algo,
        ).toBe(whole.stdout.replaceAll(b as string, "F"));
      }
    }
    // No partial file is left beside the outputs.
    expect(readdirSync(dir).filter((f) => f.includes("polgrad-partial"))).toEqual([]);
  });

  test("golden: a batch the rows cannot finish (an objective or a KL overflow) gives policyLoss's error and leaves the out file as it was", async () => {
    const dir = tmp("rows-err");
    mkdirSync(dir, { recursive: true });
    // pg on the ratio exp(799) at [0, 1]: the objective overflows; k3 at δ = ref − lp = 719: the KL.
    const pg = '{"ratio":"token","surrogate":"pg","aggregation":"token_mean"}';
    const k3 =
      '{"ratio":"token","surrogate":"pg","aggregation":"token_mean","kl":{"kind":"k3","coef":0.1}}';
    for (const [label, config, old, ref, want] of [
      ["objective", pg, [-1, -800, -1], [-1, -1, -1], "perTokenObjective"],
      ["kl", k3, [-1, -1, -1], [-1, -1, 0], "klLoss"],
    ] as const) {
      const batch = join(dir, `${label}-batch.safetensors`);
      const row = (data: readonly number[]) => ({ dtype: "F64" as const, shape: [1, 3], data });
      writeSafetensors(batch, {
        logprobs: row([-1, -1, -720]),
        old_logprobs: row(old),
        ref_logprobs: row(ref),
        advantages: { dtype: "F64", shape: [1], data: [1] },
        response_mask: { dtype: "BOOL", shape: [1, 3], data: [1, 1, 1] },
      });
      const file = join(dir, `${label}.safetensors`);
      writeFileSync(file, "previous contents");
      const r = await runMain(["loss", "--config", config, "--batch", batch, "--out", file]);
      expect(r.code, label).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr, label).toContain("E_OVERFLOW");
      expect(r.stderr, label).toContain(want);
      expect(readFileSync(file, "utf8"), label).toBe("previous contents");
    }
    expect(readdirSync(dir).filter((f) => f.includes("polgrad-partial"))).toEqual([]);
  });
});
