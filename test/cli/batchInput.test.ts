/**
 * Enforces docs/cli.md#batch-input: `--batch -` and `--config -` read standard input (format
 * sniffed from the magic bytes), a folder of tensor files is a batch, and the name options are
 * checked as usage errors.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { encodeSafetensors } from "../../src/io/writeSafetensors.js";
import { useTmpDir } from "../io/_kit.js";
import { npzBytes } from "../io/_writers.js";
import { contractViolations, runBin, runMain, withoutSource } from "./_run.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/io/frameworks/", import.meta.url));
const canonical = JSON.parse(readFileSync(join(FIXTURES, "canonical.json"), "utf8")) as Record<
  string,
  number[] | number[][]
>;
const tmp = useTmpDir();
const flat = (k: string) => (canonical[k] as number[][]).flat();
const shape = [3, 5];

const FORMATS: Record<string, Uint8Array> = {
  json: new Uint8Array(readFileSync(join(FIXTURES, "canonical.json"))),
  safetensors: encodeSafetensors({
    logprobs: { dtype: "F64", shape, data: flat("logprobs") },
    old_logprobs: { dtype: "F64", shape, data: flat("old_logprobs") },
    advantages: { dtype: "F64", shape: [3], data: canonical.advantages as number[] },
    response_mask: { dtype: "U8", shape, data: flat("response_mask") },
  }),
  npz: npzBytes({
    logprobs: { descr: "<f8", shape, data: flat("logprobs") },
    old_logprobs: { descr: "<f8", shape, data: flat("old_logprobs") },
    advantages: { descr: "<f8", shape: [3], data: canonical.advantages as number[] },
    response_mask: { descr: "|u1", shape, data: flat("response_mask") },
  }),
  pt: new Uint8Array(readFileSync(join(FIXTURES, "trl.pt"))),
};

describe("batch input", () => {
  test("golden: a batch piped on stdin in each format gives the loss of the file", async () => {
    for (const [format, bytes] of Object.entries(FORMATS)) {
      const file =
        join(tmp(`stdin-${format}`)) + (format === "safetensors" ? ".safetensors" : `.${format}`);
      writeFileSync(file, bytes);
      const fromFile = await runMain(["loss", "--algorithm", "dapo", "--batch", file, "--json"]);
      expect(fromFile.code, fromFile.stderr).toBe(0);
      const piped = await runMain(["loss", "--algorithm", "dapo", "--batch", "-", "--json"], {
        stdin: bytes,
      });
      expect([
        format,
        piped.code,
        withoutSource(piped.stdout) === withoutSource(fromFile.stdout),
      ]).toEqual([format, 0, true]);
    }
    // The process reads its real stdin the same way (the built binary, a pipe).
    const bin = runBin(["loss", "--algorithm", "dapo", "--batch", "-", "--json"], {
      input: FORMATS.npz,
    });
    expect(contractViolations(bin, 0)).toEqual([]);
    // diagnose - reads a batch too.
    const d = await runMain(["diagnose", "-", "--json"], { stdin: FORMATS.json });
    expect([0, 1]).toContain(d.code);
  });

  test("golden: --config - reads the config from stdin", async () => {
    const config = new TextEncoder().encode(
      '{"ratio": "token", "surrogate": "pg_clip", "clip": {"eps_low": 0.2, "eps_high": 0.28, "ratio_cap": null}, "aggregation": "token_mean", "norm_len": null, "is_correction": null, "kl": null}',
    );
    const file = join(FIXTURES, "canonical.json");
    const viaStdin = await runMain(["loss", "--config", "-", "--batch", file, "--json"], {
      stdin: config,
    });
    const inline = await runMain([
      "loss",
      "--config",
      new TextDecoder().decode(config),
      "--batch",
      file,
      "--json",
    ]);
    expect(viaStdin.code, viaStdin.stderr).toBe(0);
    expect(viaStdin.stdout).toBe(inline.stdout);
  });

  test("golden: --names FILE.json reads a user's spelling like polgrad's names", async () => {
    const mine: Record<string, unknown> = {
      lp: canonical.logprobs,
      behaviour: canonical.old_logprobs,
      adv: canonical.advantages,
      m: canonical.response_mask,
    };
    const batch = `${join(tmp("mine"))}.json`;
    writeFileSync(batch, JSON.stringify(mine));
    const map = `${join(tmp("map"))}.json`;
    writeFileSync(
      map,
      JSON.stringify({
        logprobs: "lp",
        old_logprobs: "behaviour",
        advantages: "adv",
        response_mask: "m",
      }),
    );
    const reference = await runMain([
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      join(FIXTURES, "canonical.json"),
      "--json",
    ]);
    const r = await runMain([
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      batch,
      "--names",
      map,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(withoutSource(r.stdout)).toBe(withoutSource(reference.stdout));
    expect(r.stderr).toContain("read custom names (given): lp → logprobs");
    // A map keyed by something other than polgrad names is an input error.
    writeFileSync(map, JSON.stringify({ logprob: "lp" }));
    const bad = await runMain(["loss", "--algorithm", "dapo", "--batch", batch, "--names", map]);
    expect([bad.code, bad.stdout]).toEqual([2, ""]);
    expect(bad.stderr).toContain('did you mean "logprobs"');
  });

  test("rejects: both inputs on stdin, a malformed --name or --response-slice, an unknown --names", async () => {
    const file = join(FIXTURES, "canonical.json");
    const cases: [readonly string[], string][] = [
      [
        ["loss", "--config", "-", "--batch", "-"],
        "--config must be a JSON text or @file.json when --batch is -",
      ],
      [
        ["loss", "--algorithm", "dapo", "--batch", file, "--name", "logprobs"],
        "--name must be OURS=THEIRS",
      ],
      [
        ["loss", "--algorithm", "dapo", "--batch", file, "--response-slice", "5:2"],
        "--response-slice must be last or START:END",
      ],
      [["loss", "--algorithm", "dapo", "--batch", file, "--names", "verll"], 'did you mean "verl"'],
      [
        ["loss", "--algorithm", "dapo", "--batch", file, "--name", "logprob=x"],
        'did you mean "logprobs"',
      ],
    ];
    for (const [args, text] of cases) {
      const r = await runMain(args, { stdin: new Uint8Array(0) });
      expect([args.join(" "), r.code, r.stdout]).toEqual([args.join(" "), 2, ""]);
      expect(r.stderr).toContain(text);
    }
    // An empty stdin is no batch.
    const empty = await runMain(["loss", "--algorithm", "dapo", "--batch", "-"], {
      stdin: new Uint8Array(0),
    });
    expect(empty.code).toBe(2);
  });
});
