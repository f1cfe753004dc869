/**
 * Enforces docs/cli.md#fields: `polgrad loss --fields F,...` gives only the result fields asked
 * for, each as the full command gives it: in the `--json` document (computed alone, with
 * `fields` naming them) and in the `--out` tensor file, on all three `--out` paths (a safetensors
 * batch streamed by rows, another format by rows, `--threads 2` whole). Refused by name without
 * --json or --out, for an unknown field (with did-you-mean) and for anything but a policy loss.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { readSafetensors } from "../../src/io/readSafetensors.js";
import { writeSafetensors } from "../../src/io/writeSafetensors.js";
import { POLICY_LOSS_FIELDS } from "../../src/losses/fields.js";
import { snakeCase } from "../../src/report/wire.js";
import { useTmpDir } from "../io/_kit.js";
import { runMain } from "./_run.js";

const tmp = useTmpDir();

/** A ragged 6×40 batch (row lengths 5 … 40) as safetensors and as JSON. */
function writeBatch(): { st: string; json: string } {
  const B = 6;
  const T = 40;
  const lp = new Float64Array(B * T);
  const old = new Float64Array(B * T);
  const mask = new Uint8Array(B * T);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      lp[i] = -0.2 - 0.013 * ((7 * i) % 97);
      old[i] = lp[i] + 0.3 * Math.sin(i);
      mask[i] = t < 5 + 7 * b ? 1 : 0;
    }
  const adv = Float64Array.from({ length: B }, (_, b) => (b % 3) - 1);
  const st = tmp("batch.safetensors");
  writeSafetensors(st, {
    logprobs: { dtype: "F64", shape: [B, T], data: lp },
    old_logprobs: { dtype: "F64", shape: [B, T], data: old },
    advantages: { dtype: "F64", shape: [B], data: adv },
    response_mask: { dtype: "BOOL", shape: [B, T], data: mask },
  });
  const rows = (x: ArrayLike<number>) =>
    Array.from({ length: B }, (_, b) => Array.from(x).slice(b * T, (b + 1) * T));
  const json = tmp("batch.json");
  writeFileSync(
    json,
    JSON.stringify({
      logprobs: rows(lp),
      old_logprobs: rows(old),
      advantages: Array.from(adv),
      response_mask: rows(mask),
    }),
  );
  return { st, json };
}

const { st, json } = writeBatch();
const ALG = ["--algorithm", "dapo"];

describe("polgrad loss --fields", () => {
  test("golden: --json --fields holds exactly the fields asked for, named in fields, each as the full document gives it", async () => {
    const full = await runMain(["loss", ...ALG, "--batch", st, "--json"]);
    expect(full.code).toBe(0);
    const all = JSON.parse(full.stdout).result;
    for (const asked of [
      ["loss", "grad_logprobs"],
      ["ratio"],
      ["kl_loss", "clipped_high", "loss"],
    ]) {
      const r = await runMain([
        "loss",
        ...ALG,
        "--batch",
        st,
        "--json",
        "--fields",
        asked.join(","),
      ]);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout).result;
      const order = POLICY_LOSS_FIELDS.map(snakeCase).filter((f) => asked.includes(f));
      expect(Object.keys(doc)).toEqual(["config", "fields", ...order, "source"]);
      expect(doc.fields).toEqual(order);
      for (const f of asked) expect(JSON.stringify(doc[f]), f).toBe(JSON.stringify(all[f]));
    }
  });

  test("identity: --out --fields writes only the tensors asked for, byte for byte the full file's, on the streamed, by-rows and whole paths", async () => {
    const fullOut = tmp("full.safetensors");
    expect((await runMain(["loss", ...ALG, "--batch", st, "--out", fullOut])).code).toBe(0);
    const full = readSafetensors(fullOut);
    for (const [label, batch, extra] of [
      ["streamed", st, []],
      ["by rows", json, []],
      ["whole", st, ["--threads", "2"]],
    ] as const) {
      const out = tmp(`some-${label.replace(" ", "-")}.safetensors`);
      const lossOut = (...more: string[]) =>
        runMain(["loss", ...ALG, "--batch", batch, ...extra, "--out", out, ...more]);
      const r = await lossOut("--json", "--fields", "ratio,grad_logprobs");
      expect(r.code, `${label}: ${r.stderr}`).toBe(0);
      const doc = JSON.parse(r.stdout).result;
      expect(doc.fields, label).toEqual(["grad_logprobs", "ratio"]);
      expect(doc.loss, label).toBeUndefined();
      expect(Object.keys(doc.tensors_file.tensors), label).toEqual(["grad_logprobs", "ratio"]);
      const some = readSafetensors(out);
      expect([...some.tensors.keys()].sort(), label).toEqual(["grad_logprobs", "ratio"]);
      for (const name of ["grad_logprobs", "ratio"]) {
        const a = some.tensors.get(name)?.data as Float64Array;
        const b = full.tensors.get(name)?.data as Float64Array;
        expect(
          Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
            Buffer.from(b.buffer, b.byteOffset, b.byteLength),
          ),
          `${label} ${name}`,
        ).toBe(true);
      }
      // The text of --out names the tensors written.
      const text = await lossOut("--fields", "ratio");
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout, label).toMatch(/tensors ratio written to /);
    }
    expect(readFileSync(fullOut).length).toBeGreaterThan(0);
  });

  test("rejects: --fields without --json or --out, an unknown field (did-you-mean), and anything but a policy loss, exit 2, nothing on stdout, the error naming --fields", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["loss", ...ALG, "--batch", st, "--fields", "loss"],
        /^polgrad loss: --fields chooses the fields of --json and --out .*; got --fields without either\n/,
      ],
      [
        ["loss", ...ALG, "--batch", st, "--json", "--fields", "loss,grad_logprob"],
        /^polgrad loss: --fields must list result fields \(loss, grad_logprobs, .*\); got "grad_logprob" \(did you mean "grad_logprobs"\?\)$/,
      ],
      [
        [
          "loss",
          "--framework",
          "trl@f2cd5771:grpo:token",
          "--batch",
          st,
          "--json",
          "--fields",
          "loss",
        ],
        /^polgrad loss: --fields applies to a policy loss \(--config or a registered algorithm\); got --fields with /,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await runMain(args);
      expect(r.code, args.join(" ")).toBe(2);
      // Nothing on stdout; with --json the error is the JSON error document on stderr.
      expect(r.stdout).toBe("");
      if (args.includes("--json")) {
        const doc = JSON.parse(r.stderr);
        expect([doc.ok, doc.error.code, doc.error.arg]).toEqual([false, "E_USAGE", "--fields"]);
        expect(doc.error.message).toMatch(message);
      } else {
        expect(r.stderr.replace(/^error\[E_USAGE\]: /, "")).toMatch(message);
      }
    }
  });
});
