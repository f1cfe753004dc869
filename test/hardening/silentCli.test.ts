/**
 * Enforces issue 31 point 9 on the command line (docs/hardening.md#issue-31-silent-or-untyped):
 * a stray positional argument, a loss with no response tokens, an unknown polgrad name and a
 * file name that is not UTF-8 are each answered, never passed over in silence.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import {
  ALGORITHM_NAMES,
  ALGORITHMS,
  FRAMEWORK_MODEL_IDS,
  IoError,
  policyLossConfigToJson,
  tensorsFromJson,
  toBatch,
} from "../../src/index.js";
import { runMain } from "../cli/_run.js";

const dir = mkdtempSync(join(tmpdir(), "polgrad-silent-"));

/** The positionals each command takes with no option given (the stray one comes after them). */
function takenPositionals(cmd: (typeof COMMANDS)[number]): number {
  const p = cmd.positionals ?? 0;
  return typeof p === "number" ? p : p({}).max;
}

describe("stray arguments", () => {
  test("regression: explain with a stray positional is a usage error suggesting --config FILE, not the defaults explained", async () => {
    const r = await runMain(["explain", "--framework", "trl@v1.9.0", "cfg.yaml"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^error\[E_USAGE\]: polgrad explain: arguments must be none/);
    expect(r.stderr).toContain('"cfg.yaml"');
    expect(r.stderr).toContain("--config FILE");
    // With --diff, two and no more; the framework's own arguments still go after --.
    const d = await runMain(["explain", "--diff", "trl@v0.19.0", "trl@v1.9.0", "x.yaml"]);
    expect([d.code, d.stdout]).toEqual([2, ""]);
    expect(d.stderr).toContain('the stray argument "x.yaml"');
    const ok = await runMain([
      "explain",
      "--framework",
      "trl@v1.9.0",
      "--json",
      "--",
      "--beta",
      "0.1",
    ]);
    expect(ok.code).toBe(0);
    const beta = JSON.parse(ok.stdout).result.settings.find(
      (s: { key: string }) => s.key === "beta",
    );
    expect(beta).toMatchObject({ value: 0.1, source: "user" });
  });

  test("rejects: every command refuses a positional past the ones it takes, naming it", async () => {
    for (const cmd of COMMANDS) {
      const args = [cmd.name, ...Array.from({ length: takenPositionals(cmd) }, (_, i) => `p${i}`)];
      const r = await runMain([...args, "stray-arg"]);
      expect([r.code, r.stdout], cmd.name).toEqual([2, ""]);
      expect(r.stderr, cmd.name).toMatch(/^error\[E_USAGE\]: polgrad [a-z-]+: arguments must be /);
      expect(r.stderr, cmd.name).toContain('"stray-arg"');
    }
  });
});

describe("a batch without response tokens", () => {
  // Every stream a loss may read, over a mask with no response token at all.
  const rows = (v: number) => [
    [v, v - 0.5],
    [v - 0.25, v],
  ];
  const empty = join(dir, "no-response.json");
  writeFileSync(
    empty,
    JSON.stringify({
      logprobs: rows(-0.2),
      old_logprobs: rows(-0.5),
      ref_logprobs: rows(-0.4),
      rollout_logprobs: rows(-0.6),
      masked_logprobs: rows(-0.3),
      entropies: rows(0.7),
      masked_entropies: rows(0.9),
      values: rows(0.1),
      old_values: rows(0.2),
      returns: rows(0.3),
      advantages: [1.5, -0.8],
      response_mask: [
        [false, false],
        [false, false],
      ],
    }),
  );

  test("regression: gmpo's text and json have a finite loss and no Infinity when there is no response token", async () => {
    const text = await runMain(["loss", "--algorithm", "gmpo", "--batch", empty]);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/Infinity|NaN/);
    expect(text.stdout).toContain("ratio         none (no response tokens: loss 0, gradient 0)");
    const json = await runMain(["loss", "--algorithm", "gmpo", "--batch", empty, "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).result.loss).toBe(0);
  });

  test("property: every algorithm and framework model either refuses the batch with a typed error or prints finite text and json", async () => {
    const runs = [
      ...ALGORITHM_NAMES.map((a) => ["--algorithm", a, "--norm-len", "2"]),
      ...FRAMEWORK_MODEL_IDS.map((id) => ["--framework", id]),
      // Each algorithm's configuration with rows of no token counted (gmpo's policy).
      ...ALGORITHM_NAMES.map((a) => [
        "--config",
        JSON.stringify({
          ...policyLossConfigToJson({ ...ALGORITHMS[a].loss, emptyRows: "count" }),
          norm_len: 2,
        }),
      ]),
    ];
    for (const how of runs) {
      for (const json of [false, true]) {
        const r = await runMain(["loss", ...how, "--batch", empty, ...(json ? ["--json"] : [])]);
        const where = `${how.join(" ")}${json ? " --json" : ""}`;
        if (r.code === 2) {
          expect(r.stdout, where).toBe("");
          expect(r.stderr, where).toMatch(/error\[E_[A-Z]+\]|"ok":false/);
          continue;
        }
        expect(r.code, where).toBe(0);
        expect(r.stdout, where).not.toMatch(/Infinity|NaN/);
        // JSON.stringify writes a non-finite number as null: the loss must be a number.
        if (json) expect(Number.isFinite(JSON.parse(r.stdout).result.loss), where).toBe(true);
      }
    }
  });
});

describe("unknown polgrad names", () => {
  const batch = {
    logprobs: [
      [-0.2, -1.0],
      [-0.5, -0.3],
    ],
    old_logprobs: [
      [-0.5, -0.7],
      [-0.6, -0.2],
    ],
    advantages: [1.5, -0.8],
    response_mask: [
      [true, true],
      [true, false],
    ],
    my_lp: [
      [-0.1, -0.1],
      [-0.1, -0.1],
    ],
  };
  const file = join(dir, "names-batch.json");
  writeFileSync(file, JSON.stringify(batch));
  const OBJECT_KEYS = ["__proto__", "constructor", "toString", "hasOwnProperty", "bogus"];

  test("regression: --name __proto__=THEIRS is the usage error of any unknown name, never dropped", async () => {
    for (const ours of OBJECT_KEYS) {
      const r = await runMain([
        "loss",
        "--algorithm",
        "grpo",
        "--batch",
        file,
        "--name",
        `${ours}=my_lp`,
      ]);
      expect([r.code, r.stdout], ours).toEqual([2, ""]);
      expect(r.stderr, ours).toMatch(
        /^error\[E_USAGE\]: polgrad loss: --name must be OURS=THEIRS with OURS a polgrad batch name/,
      );
      expect(r.stderr, ours).toContain(`got "${ours}"`);
    }
    const near = await runMain([
      "loss",
      "--algorithm",
      "grpo",
      "--batch",
      file,
      "--name",
      "logprob=my_lp",
    ]);
    expect(near.stderr).toContain('got "logprob" (did you mean "logprobs"?)');
  });

  test("rejects: a --names FILE.json keyed by __proto__, constructor or an unknown name, in that file", async () => {
    for (const json of [
      '{"__proto__": "my_lp"}',
      '{"__proto__": {"logprobs": "my_lp"}}',
      '{"constructor": "my_lp"}',
      '{"logprob": "my_lp"}',
    ]) {
      const map = join(dir, "names-map.json");
      writeFileSync(map, json);
      const r = await runMain(["loss", "--algorithm", "grpo", "--batch", file, "--names", map]);
      expect([r.code, r.stdout], json).toEqual([2, ""]);
      expect(r.stderr, json).toMatch(
        /^error\[E_IO\]: polgrad loss: --names must be keyed by polgrad batch names/,
      );
      expect(r.stderr, json).toContain(`(in ${map})`);
    }
  });

  test("rejects: the library's names and rename objects with an own __proto__ key, a Map, or an unknown map id", () => {
    const set = tensorsFromJson(batch, "batch.json");
    const bad: [string, object | string][] = [
      ["rename", { ["__proto__"]: "my_lp" }],
      ["rename", JSON.parse('{"constructor": "my_lp"}')],
      ["names", JSON.parse('{"__proto__": "my_lp"}')],
      ["names", new Map([["logprobs", "my_lp"]])],
      ["names", "constructor"],
      ["names", "__proto__"],
    ];
    for (const [arg, value] of bad) {
      let err: unknown;
      try {
        toBatch(set, { [arg]: value });
      } catch (e) {
        err = e;
      }
      expect(err, `${arg} ${String(value)}`).toBeInstanceOf(IoError);
      expect(err).toMatchObject({ arg });
    }
  });
});
