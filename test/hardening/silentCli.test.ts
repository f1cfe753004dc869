/**
 * Enforces issue 31 point 9 on the command line (docs/hardening.md#issue-31-silent-or-untyped):
 * a stray positional argument, a loss with no response tokens, an unknown polgrad name and a
 * file name that is not UTF-8 are each answered, never passed over in silence.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";
import {
  ALGORITHM_NAMES,
  ALGORITHMS,
  diagnoseRun,
  FRAMEWORK_MODEL_IDS,
  IoError,
  policyLossConfigToJson,
  tensorsFromJson,
  toBatch,
} from "../../src/index.js";
import { decodeFsName, fsPath } from "../../src/platform/fsPath.js";
import { FC_PARAMS } from "../_kit/index.js";
import { BIN, runMain } from "../cli/_run.js";

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

describe("file names that are not utf-8", () => {
  const root = join(dir, "bytes");
  mkdirSync(root);
  const batch = JSON.stringify({
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
  });
  /** A name of raw bytes inside `root` (the test's own fs calls take the Buffer). */
  const at = (...parts: (string | number[])[]): Buffer =>
    Buffer.concat([
      Buffer.from(`${root}/`),
      ...parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))),
    ]);
  writeFileSync(at("bad", [0xff], "name.json"), batch);
  writeFileSync(at("plain.json"), batch);
  mkdirSync(at("run"));
  writeFileSync(at("run/step_1.json"), batch);
  writeFileSync(at("run/x", [0xff], "_step_2.json"), batch);
  mkdirSync(at("run/global_step_3"));
  writeFileSync(at("run/global_step_3/batch", [0xfe, 0x80], ".json"), batch);

  /** Run the binary through sh, so that printf puts the raw bytes into argv. */
  const viaShell = (args: string): { code: number | null; stdout: string; stderr: string } => {
    const r = spawnSync("/bin/sh", ["-c", `exec "$0" "$1" ${args}`, process.execPath, BIN], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  test("regression: loss --batch with a name holding byte 0xff reads that file, through the binary", () => {
    const bad = viaShell(`loss --algorithm ppo --batch "$(printf 'bad\\377name.json')" --json`);
    expect(bad.stderr).toBe("");
    expect(bad.code).toBe(0);
    const plain = viaShell("loss --algorithm ppo --batch plain.json --json");
    const b = JSON.parse(bad.stdout).result;
    expect(b.source.path).toBe("bad\udcffname.json");
    expect(b.loss).toBe(JSON.parse(plain.stdout).result.loss);
    // A missing name of such bytes is named by its bytes, not by another file's name.
    const missing = viaShell(`loss --algorithm ppo --batch "$(printf 'bad\\376name.json')"`);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error\[E_IO\]: readTensors: path must be an existing file/);
    expect(missing.stderr).toContain("(in bad\\xfename.json)");
  });

  test("regression: a run folder whose step file and step-folder file names hold 0xff is diagnosed whole, by the binary and the library", () => {
    const r = viaShell("diagnose run --json");
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout).result;
    expect(d.steps.map((s: { step: number; file: string }) => [s.step, s.file])).toEqual([
      [1, "step_1.json"],
      [2, "x\udcff_step_2.json"],
      [3, "global_step_3/"],
    ]);
    expect(d.problems).toEqual([]);
    const lib = diagnoseRun(join(root, "run"));
    expect(lib.steps.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(lib.problems).toEqual([]);
  });

  test("rejects: a name whose bytes were lost to U+FFFD is an io error saying so, not a bare no such file", async () => {
    const r = await runMain([
      "loss",
      "--algorithm",
      "ppo",
      "--batch",
      join(root, "bad\ufffdname.json"),
    ]);
    expect([r.code, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toMatch(/^error\[E_IO\]: readTensors: path must be an existing file/);
    expect(r.stderr).toContain("U+FFFD, the mark of bytes that were not UTF-8");
  });

  test("property: decodeFsName and fsPath round-trip any bytes, and leave UTF-8 names as they are", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const name = decodeFsName(bytes);
        expect(Buffer.from(fsPath(name) as string | Buffer)).toEqual(Buffer.from(bytes));
      }),
      FC_PARAMS,
    );
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 20 }), (s) => {
        expect(fsPath(s)).toBe(s);
        expect(decodeFsName(Buffer.from(s))).toBe(s);
      }),
      FC_PARAMS,
    );
    // Names listed by the test's own Buffer readdir decode to what polgrad lists.
    const raw = readdirSync(at("run"), { encoding: "buffer" });
    expect(raw.map(decodeFsName).sort()).toEqual([
      "global_step_3",
      "step_1.json",
      "x\udcff_step_2.json",
    ]);
    expect(readFileSync(fsPath(join(root, "bad\udcffname.json"))).toString()).toBe(batch);
  });

  test("identity: every node:fs call on a path in src goes through fsPath (or reads /proc)", () => {
    const src = new URL("../../src/", import.meta.url);
    const calls =
      /\b(statSync|lstatSync|openSync|readdirSync|realpathSync|readFileSync|writeFileSync|mkdirSync|renameSync|unlinkSync|rmSync|existsSync|readlinkSync|accessSync|rmdirSync|opendirSync|mkdtempSync|createReadStream|createWriteStream)\((?!fsPath\(|"\/proc\/|`\/proc\/)/g;
    const offenders: string[] = [];
    const walk = (rel: string): void => {
      for (const e of readdirSync(new URL(rel, src), { withFileTypes: true })) {
        const p = `${rel}${e.name}`;
        if (e.isDirectory()) {
          if (p !== "conformance/releases") walk(`${p}/`);
        } else if (p.endsWith(".ts") && p !== "diagnostics/logs/metricNames.ts") {
          // metricNames.ts, like conformance/releases, reads the package's own data file by URL.
          const text = readFileSync(new URL(p, src), "utf8");
          for (const m of text.matchAll(calls)) offenders.push(`src/${p}: ${m[0]}`);
        }
      }
    };
    walk("");
    expect(offenders).toEqual([]);
  });
});
