/** `polgrad verify`: check closed-form gradients against the exact reference and finite differences. */
import { fmtValue, safeText } from "../../core/message.js";
import { fail, UsageError } from "../../errors.js";
import type { PolicyLossConfig } from "../../losses/config.js";
import type { Command, CommandIO, OptionValues } from "../command.js";
import { intOption, writeJson } from "../output.js";

const FN = "polgrad verify";

function usage(arg: string, rule: string, got: unknown): UsageError {
  return fail(UsageError, FN, arg, rule, fmtValue(got));
}

/** `SEED:BxT`, with B, T and B·T within the verifiers' caps (docs/cli.md#bounds). */
async function parseReplay(
  raw: unknown,
): Promise<{ seed: number; shape: [number, number] } | undefined> {
  if (raw === undefined) return undefined;
  const m = typeof raw === "string" ? /^(\d{1,16}):(\d{1,16})x(\d{1,16})$/.exec(raw.trim()) : null;
  const seed = m ? Number(m[1]) : Number.NaN;
  if (!m || !Number.isSafeInteger(seed))
    throw usage("--replay", "SEED:BxT as printed by a failure (e.g. 123:3x5)", raw);
  const { MAX_VERIFY_CELLS, MAX_VERIFY_DIM } = await import("../../verify/budget.js");
  const B = Number(m[2]);
  const T = Number(m[3]);
  if (B < 1 || T < 1 || B > MAX_VERIFY_DIM || T > MAX_VERIFY_DIM || B * T > MAX_VERIFY_CELLS) {
    throw usage(
      "--replay",
      `SEED:BxT with 1 <= B, T <= ${MAX_VERIFY_DIM} and B·T <= ${MAX_VERIFY_CELLS}`,
      raw,
    );
  }
  return { seed, shape: [B, T] };
}

async function targets(
  values: OptionValues,
  io: CommandIO,
): Promise<{ name: string; config: PolicyLossConfig; flag: string }[]> {
  const given = ["config", "algorithm", "all"].filter((k) => values[k] !== undefined);
  if (given.length !== 1) {
    throw new UsageError(
      "polgrad verify",
      "--algorithm",
      `${FN}: exactly one of --config, --algorithm and --all must be given; got ${given.length === 0 ? "none" : given.map((g) => `--${g}`).join(" and ")}`,
    );
  }
  const normLen = intOption(values, "norm-len", "verify");
  const { ALGORITHMS, getAlgorithm } = await import("../../registry/index.js");
  const withNorm = (c: PolicyLossConfig): PolicyLossConfig =>
    normLen !== undefined
      ? { ...c, normLen }
      : c.aggregation === "token_sum_norm" && c.normLen == null
        ? { ...c, normLen: 8 }
        : c;
  if (values.all)
    return Object.values(ALGORITHMS).map((s) => ({
      // An extension's `loss` is its parent; PAPO's own terms are verified in test/losses/papo*.
      name: s.papo !== undefined ? `${s.name} (parent)` : s.name,
      config: withNorm(s.loss),
      flag: `--algorithm ${s.name}`,
    }));
  if (typeof values.algorithm === "string") {
    const s = getAlgorithm(values.algorithm);
    return [{ name: s.name, config: withNorm(s.loss), flag: `--algorithm ${s.name}` }];
  }
  const raw = values.config as string;
  const { readConfigOption } = await import("./configOption.js");
  const { config } = await readConfigOption("polgrad verify", raw, io);
  return [{ name: "config", config: withNorm(config), flag: `--config '${safeText(raw)}'` }];
}

/** The `verify` command. */
export const verifyCommand: Command = {
  name: "verify",
  summary:
    "Check closed-form gradients against an exact autodiff reference and central finite differences on seeded batches.",
  usage:
    "verify (--config JSON|@file.json | --algorithm NAME | --all) [--seed N] [--cases N] [--replay SEED:BxT] [--norm-len N] [--json]",
  options: {
    config: {
      type: "string",
      role: "input",
      argument: "JSON|@file.json",
      description: "policy-loss config in polgrad's snake_case JSON",
    },
    algorithm: { type: "string", argument: "NAME", description: "a registered algorithm" },
    all: { type: "boolean", description: "every registered algorithm" },
    seed: {
      type: "string",
      argument: "N",
      description: "master seed of the drawn batches",
      default: "0",
    },
    cases: {
      type: "string",
      argument: "N",
      description: "batches per check (at most 1000)",
      default: "6",
    },
    replay: {
      type: "string",
      argument: "SEED:BxT",
      description: "replay one failing case as printed by a failure (B, T <= 1024, B·T <= 4096)",
    },
    "norm-len": {
      type: "string",
      argument: "N",
      description: "norm_len for token_sum_norm configs",
      default: "8 when the config has none",
    },
    json: { type: "boolean", description: "print one JSON document" },
  },
  async run(values, _p, io) {
    const { checkAgainstReference } = await import("../../verify/referenceCheck.js");
    const { gradcheckLoss } = await import("../../verify/gradcheckLoss.js");
    const { VerificationError } = await import("../../errors.js");
    const seed = intOption(values, "seed", "verify", 0) ?? 0;
    const cases = intOption(values, "cases", "verify") ?? 6;
    const { MAX_VERIFY_CASES } = await import("../../verify/budget.js");
    if (cases > MAX_VERIFY_CASES)
      throw usage("--cases", `a positive integer <= ${MAX_VERIFY_CASES}`, values.cases);
    const replay = await parseReplay(values.replay);
    const results: { name: string; reference: unknown; gradcheck: unknown; ok: boolean }[] = [];
    const failures: string[] = [];
    for (const t of await targets(values, io)) {
      const cmd = `polgrad verify ${t.flag} --replay {seed}:{B}x{T}`;
      const run = <R>(f: () => R): R | { ok: false; error: string; seed: number | null } => {
        try {
          return f();
        } catch (e) {
          if (!(e instanceof VerificationError)) throw e;
          failures.push(e.message);
          return { ok: false, error: e.message.split("\n")[0] as string, seed: e.seed ?? null };
        }
      };
      const opts = { seed, cases, replayCommand: cmd, ...(replay ? { replay } : {}) };
      const reference = run(() => checkAgainstReference(t.config, opts));
      const margin = t.config.clip && (t.config.clip.epsHigh ?? 1) < 1e-2 ? 1e-5 : 1e-3;
      const gc = run(() =>
        gradcheckLoss(t.config, { ...opts, margin, maxAttempts: 256, label: t.name }),
      );
      results.push({ name: t.name, reference, gradcheck: gc, ok: reference.ok && gc.ok });
    }
    const ok = results.every((r) => r.ok);
    if (values.json) writeJson(io, "verify", { ok, seed, results }, ok);
    else {
      const { renderVerifyText } = await import("../../report/verifyText.js");
      io.stdout(renderVerifyText(results as Parameters<typeof renderVerifyText>[0]));
    }
    for (const f of failures) io.stderr(`${f}\n`);
    return ok ? 0 : 1;
  },
};
