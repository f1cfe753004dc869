/**
 * Enforces docs/conformance/adapters.md#the-contract-language and #checking-a-checkout: the
 * source facts an adapter contract reads (return arities, call-site unpacking), the authors' rules
 * with their failure messages verbatim, polgrad's stricter checks as separate findings, contract
 * files, and `polgrad contract check --contract`. Synthetic sources only (./adapterSources.ts and
 * test/fixtures/python/contract/).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  type AdapterContract,
  adapterContractJson,
  checkAdapterContract,
  evaluateMethod,
  evaluateStricter,
  extractSourceFacts,
  getAdapterContract,
  type MethodRule,
  parseAdapterContract,
  pythonTupleRepr,
} from "../../src/index.js";
import { runMain, validatorOf } from "../cli/_run.js";
import {
  GRPO_PATH,
  grpoSource,
  LOGPS_API,
  PAPO_PATH,
  papoSource,
  writeTree,
} from "./adapterSources.js";

const fx = fileURLToPath(new URL("../fixtures/python/contract/", import.meta.url));
const PAPO = getAdapterContract("papo-g-adapter");
const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("extractSourceFacts", () => {
  test("golden: return arities and call-site unpacking of a synthetic trainer", async () => {
    const src = `class T:
    def a(self, x, /, y, *args, z=1, **kw):
        if x:
            return
        def inner():
            return 1, 2, 3, 4
        return (x, y)

    def b(self):
        return x, *rest

    def c(self):
        p, q = self.a(1, 2, z=3)
        (r,) = self.a(1, y=2)
        s = self.a(1)
        first, *more = self.a(0)
        u, v = other.a(1)
        return p
`;
    const f = await extractSourceFacts(src, "t.py");
    const a = f.functions.get("T.a");
    // `return` is 0 values, `return (x, y)` 2; the nested function's 4-tuple does not count.
    expect(a?.returnArities).toEqual([0, 2]);
    expect(a?.parameters.map((p) => [p.name, p.kind])).toEqual([
      ["self", "positional_only"],
      ["x", "positional_only"],
      ["y", "normal"],
      ["args", "var_positional"],
      ["z", "keyword_only"],
      ["kw", "var_keyword"],
    ]);
    expect(f.functions.get("T.b")?.returnArities).toBeNull();
    expect(f.functions.get("T.c")?.returnArities).toEqual([1]);
    // Four assignments from self.a (other.a is not self's): 2, 1 (a 1-tuple), 1 (no unpacking), 2 with *.
    expect(
      f.unpackings.map((u) => [u.method, u.line, u.targets, u.starred, u.keywords, u.positional]),
    ).toEqual([
      ["a", 13, 2, false, ["z"], 2],
      ["a", 14, 1, false, ["y"], 1],
      ["a", 15, 1, false, [], 1],
      ["a", 16, 2, true, [], 1],
    ]);
  });
});

describe("pythonTupleRepr", () => {
  test("golden: the 0-, 1- and 3-tuple and a quote", () => {
    // As CPython prints repr(()), repr(("self",)), repr(("self", "model", "inputs")), repr(("it's",)).
    expect(pythonTupleRepr([])).toBe("()");
    expect(pythonTupleRepr(["self"])).toBe("('self',)");
    expect(pythonTupleRepr(["self", "model", "inputs"])).toBe("('self', 'model', 'inputs')");
    expect(pythonTupleRepr(["it's", "a\\b"])).toBe(`("it's", 'a\\\\b')`);
  });
});

const facts = async (src: string, name: string) =>
  (await extractSourceFacts(src, "t.py")).functions.get(name);

describe("evaluateMethod", () => {
  test("golden: the authors' two messages, verbatim", async () => {
    const [loss, logps] = PAPO.methods as [MethodRule, MethodRule];
    const extra = grpoSource(LOGPS_API["v1.1.0"].params, 2, ["self", "model", "inputs", "extra"]);
    const v1 = evaluateMethod(loss, await facts(extra, loss.name));
    expect(v1).toMatchObject({ status: "broken" });
    expect(v1.failures).toEqual([
      "unsupported GRPOTrainer._compute_loss signature: ('self', 'model', 'inputs', 'extra')",
    ]);
    const one = grpoSource(LOGPS_API["v1.1.0"].params, 2, ["self"]);
    expect(evaluateMethod(loss, await facts(one, loss.name)).failures).toEqual([
      "unsupported GRPOTrainer._compute_loss signature: ('self',)",
    ]);
    const v2 = evaluateMethod(logps, await facts(extra, logps.name));
    expect(v2.failures).toEqual([
      "unsupported GRPOTrainer log-probability API; missing compute_aux_loss, spatial_shapes",
    ]);
    // Extra parameters are allowed by `requires`: the v1.7.0 list holds, whatever else it has.
    const v17 = grpoSource([...LOGPS_API["v1.7.0"].params, "future_kw"], 3);
    expect(evaluateMethod(logps, await facts(v17, logps.name))).toMatchObject({
      status: "ok",
      failures: [],
    });
    expect(evaluateMethod(logps, undefined)).toMatchObject({
      status: "missing",
      failures: [
        "unsupported GRPOTrainer._get_per_token_logps_and_entropies: not defined in trl/trainer/grpo_trainer.py",
      ],
    });
  });

  test("golden: forbids and return arity", async () => {
    const rule: MethodRule = {
      name: "GRPOTrainer._get_per_token_logps_and_entropies",
      path: GRPO_PATH,
      exact: null,
      requires: null,
      forbids: ["num_tiles", "compute_aux_loss", "nope"],
      returns: 2,
      messages: {},
    };
    const v = evaluateMethod(
      rule,
      await facts(grpoSource(LOGPS_API["v1.7.0"].params, 3), rule.name),
    );
    expect(v.failures).toEqual([
      "unsupported GRPOTrainer._get_per_token_logps_and_entropies API; forbidden compute_aux_loss, num_tiles",
      "unsupported GRPOTrainer._get_per_token_logps_and_entropies return arity: 3; expected 2",
    ]);
    const old = await facts(grpoSource(LOGPS_API["v1.1.0"].params, 2), rule.name);
    expect(evaluateMethod(rule, old).status).toBe("ok");
  });
});

describe("evaluateStricter", () => {
  test("golden: the vendored file unpacks 2 values where the tree returns 3", async () => {
    const caller = {
      source: "tree",
      facts: await extractSourceFacts(papoSource("v0.29.1"), PAPO_PATH),
    };
    const [unpacking, keywords] = PAPO.stricter as [
      NonNullable<(typeof PAPO.stricter)[0]>,
      NonNullable<(typeof PAPO.stricter)[0]>,
    ];
    const fn17 = await facts(grpoSource(LOGPS_API["v1.7.0"].params, 3), unpacking.method);
    expect(evaluateStricter(unpacking, fn17, caller)).toMatchObject({
      status: "mismatch",
      returns: [3],
      unpacks: [2],
      message: "unpacking: the vendored file unpacks 2 values where this tree returns 3",
    });
    const fn11 = await facts(grpoSource(LOGPS_API["v1.1.0"].params, 2), unpacking.method);
    expect(evaluateStricter(unpacking, fn11, caller).status).toBe("ok");
    // The synthetic caller passes compute_entropy, pixel_values, image_grid_thw; drop one.
    const without = grpoSource(
      LOGPS_API["v1.1.0"].params.filter((p) => p !== "pixel_values"),
      2,
    );
    expect(evaluateStricter(keywords, await facts(without, keywords.method), caller)).toMatchObject(
      {
        status: "mismatch",
        unknownKeywords: ["pixel_values"],
      },
    );
    expect(evaluateStricter(unpacking, fn17, null).status).toBe("unknown");
  });
});

describe("parseAdapterContract", () => {
  test("identity: the built-in round-trips through its json form", () => {
    const json = adapterContractJson(PAPO);
    expect(parseAdapterContract(JSON.parse(JSON.stringify(json)))).toEqual(PAPO);
    // The json form is a valid contract file under the documented schema.
    expect(validatorOf("adapter-contract.schema.json")(json)).toBe(true);
    // The authors' contract, verbatim (issue 10).
    expect(PAPO.version).toBe("trl_0.29.1_papo_g_on_trl_1.9.1_v1");
    expect(PAPO.files).toEqual([
      {
        path: "trl/experimental/papo/papo_trainer.py",
        sha256: "9836f4505f7026c90cd5ca5b97151dd14c1bc27bcd2bc5a8fca6626c68279175",
        ref: "v0.29.1",
      },
    ]);
    expect(PAPO.methods.map((m) => [m.name, m.exact, m.requires?.length ?? null])).toEqual([
      ["GRPOTrainer._compute_loss", ["self", "model", "inputs"], null],
      ["GRPOTrainer._get_per_token_logps_and_entropies", null, 11],
    ]);
  });

  test("rejects: an unknown key, an empty rule, a bad hash and a dangling stricter check", () => {
    const ok = adapterContractJson(PAPO) as Record<string, unknown> & {
      methods: object[];
      files: object[];
    };
    const cases: [unknown, string][] = [
      [{ ...ok, extra: 1 }, "contract.extra"],
      [{ ...ok, methods: [{ name: "A.b", path: "x.py" }] }, "methods[0]"],
      [{ ...ok, methods: [] }, "methods"],
      [{ ...ok, files: [{ path: "x.py", sha256: "ABC" }] }, "files[0].sha256"],
      [{ ...ok, files: [{ path: "../x.py", sha256: "0".repeat(64) }] }, "files[0].path"],
      [
        { ...ok, stricter: [{ kind: "unpacking", method: "No.such", caller: PAPO_PATH }] },
        "stricter[0].method",
      ],
      [
        { ...ok, methods: [{ name: "A.b", path: "x.py", requires: ["a", "a"] }] },
        "methods[0].requires",
      ],
      [[], "contract"],
    ];
    const schema = validatorOf("adapter-contract.schema.json");
    for (const [value, arg] of cases) {
      expect(() => parseAdapterContract(value)).toThrow(
        expect.objectContaining({ code: "E_CONFIG", arg }),
      );
      // The schema refuses every one of them too (the stricter check's dangling name is beyond it).
      if (arg !== "stricter[0].method") expect([arg, schema(value)]).toEqual([arg, false]);
    }
  });

  test("rejects: an unknown built-in name suggests the closest one", () => {
    expect(() => getAdapterContract("papo-g-adaptor")).toThrow(
      expect.objectContaining({ code: "E_UNKNOWN_NAME", suggestions: ["papo-g-adapter"] }),
    );
    expect(() => getAdapterContract("__proto__")).toThrow(
      expect.objectContaining({ code: "E_UNKNOWN_NAME" }),
    );
  });
});

/** The built-in with its pin moved to a synthetic file's bytes. */
function pinnedTo(text: string): AdapterContract {
  return { ...PAPO, files: [{ path: PAPO_PATH, sha256: sha(text), ref: "v0.29.1" }] };
}

describe("checkAdapterContract", () => {
  test("golden: the v1.7.0 fixture holds, the v0.29.1 fixture breaks with the authors' message", async () => {
    const a = await checkAdapterContract(PAPO, join(fx, "v1.7.0"));
    expect(a).toMatchObject({ ok: true, failures: [] });
    // The fixture has no papo_trainer.py: reported as missing, not deciding.
    expect(a.files[0]).toMatchObject({ tree: "missing", vendored: null });
    const b = await checkAdapterContract(PAPO, join(fx, "v0.29.1"));
    expect(b.ok).toBe(false);
    expect(b.failures).toEqual([
      "unsupported GRPOTrainer log-probability API; missing compute_aux_loss, image_position_ids, spatial_shapes",
    ]);
    // Its stand-in PAPO file is not the pinned bytes: changed, still not deciding.
    expect(b.files[0]?.tree).toBe("changed");
  });

  test("golden: a vendored copy decides the pin, the tree's own file does not", async () => {
    const pinned = papoSource("v0.29.1");
    const contract = pinnedTo(pinned);
    const tree = writeTree({ [GRPO_PATH]: grpoSource(LOGPS_API["v1.7.0"].params, 3) });
    const good = writeTree({ "papo_trainer.py": pinned });
    const bad = writeTree({ "papo_trainer.py": `${pinned}# edited\n` });
    const a = await checkAdapterContract(contract, tree, {
      vendored: join(good, "papo_trainer.py"),
    });
    expect(a.ok).toBe(true);
    expect(a.files[0]).toMatchObject({ tree: "missing", vendored: { status: "identical" } });
    // Ours, beside it: the vendored file unpacks 2 where v1.7.0 returns 3.
    expect(a.stricterOk).toBe(false);
    expect(a.stricter[0]).toMatchObject({ kind: "unpacking", status: "mismatch" });
    const b = await checkAdapterContract(contract, tree, {
      vendored: join(bad, "papo_trainer.py"),
    });
    expect(b.ok).toBe(false);
    expect(b.failures).toEqual([
      `vendored ${PAPO_PATH} changed: sha256 ${sha(`${pinned}# edited\n`)} where the pin is ${sha(pinned)}`,
    ]);
    await expect(
      checkAdapterContract(contract, tree, { vendored: join(good, "absent.py") }),
    ).rejects.toMatchObject({ code: "E_IO", arg: "vendored" });
  });
});

describe("contract check --contract", () => {
  test("golden: the authors' messages on the v1.1.0 fixture, exit 1", async () => {
    const r = await runMain([
      "contract",
      "check",
      "--contract",
      "papo-g-adapter",
      "--checkout",
      join(fx, "v1.1.0"),
      "--wide",
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "    unsupported GRPOTrainer log-probability API; missing compute_aux_loss, spatial_shapes\n",
    );
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(
      "CONTRACT BROKEN: 1 failure: unsupported GRPOTrainer log-probability API; missing compute_aux_loss, spatial_shapes",
    );
    const ok = await runMain([
      "contract",
      "check",
      "--contract",
      "papo-g-adapter",
      "--checkout",
      join(fx, "v1.7.0"),
      "--json",
    ]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).result).toMatchObject({
      contract: "papo-g-adapter",
      ok: true,
      stricter_ok: false,
    });
  });

  test("golden: a contract file and a vendored copy, exit 0 then 1", async () => {
    const pinned = papoSource("v0.29.1");
    const dir = mkdtempSync(join(tmpdir(), "polgrad-contract-file-"));
    const file = join(dir, "contract.json");
    writeFileSync(file, JSON.stringify(adapterContractJson(pinnedTo(pinned))));
    writeFileSync(join(dir, "good.py"), pinned);
    writeFileSync(join(dir, "bad.py"), `${pinned}\n`);
    const tree = join(fx, "v1.7.0");
    const args = ["contract", "check", "--contract", file, "--checkout", tree, "--vendored"];
    expect((await runMain([...args, join(dir, "good.py"), "--json"])).code).toBe(0);
    const bad = await runMain([...args, join(dir, "bad.py"), "--wide"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`vendored ${join(dir, "bad.py")}: CHANGED (deciding)`);
    expect(JSON.parse(readFileSync(file, "utf8")).name).toBe("papo-g-adapter");
  });

  test("rejects: --pin with --contract, --vendored without it, an unknown name or a bad file, exit 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "polgrad-contract-bad-"));
    writeFileSync(join(dir, "bad.json"), '{"name": "x"}');
    const tree = join(fx, "v1.7.0");
    for (const [args, code] of [
      [["--contract", "papo-g-adapter", "--pin", "trl@v0.29.1"], "E_USAGE"],
      [["--vendored", join(dir, "bad.json")], "E_USAGE"],
      [["--contract", "papo-g"], "E_UNKNOWN_NAME"],
      [["--contract", join(dir, "bad.json")], "E_CONFIG"],
      [["--contract", join(dir, "absent.json")], "E_IO"],
    ] as const) {
      const r = await runMain(["contract", "check", "--checkout", tree, ...args, "--json"]);
      expect([args.join(" "), r.code, r.stdout]).toEqual([args.join(" "), 2, ""]);
      expect(JSON.parse(r.stderr).error.code).toBe(code);
    }
  });
});
