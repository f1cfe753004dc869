/**
 * Enforces that policyLoss, run with each variant's own snake_case config, reproduces the vLLM
 * importance-sampling corrections recorded from the real upstream code by
 * tools/record-fixtures/isCorrection.py (test/fixtures/frameworks/is-correction.json): OpenRLHF
 * PolicyLoss tis / icepop / seq-mask-tis and TRL's IS-ratio block of
 * GRPOTrainer._generate_and_score_completions (token/sequence × truncate/mask) applied by the real
 * _compute_loss, at the pins of frameworks.py. Loss to 1e-12 and gradient to 1e-12, both relative
 * norm-wise (max|x − x_rec| ≤ 1e-12·max(1, max|x_rec|)). Also checks the provenance names the
 * pins, that every variant has 4 cases, and that its bounds were exercised (the recorded
 * out-of-bounds counts, recomputed here from the inputs).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { parsePolicyLossConfig } from "../../../src/io/configJson.js";
import { policyLoss } from "../../../src/losses/policyLoss.js";

type Rows = number[][];

interface Bounds {
  readonly lower?: number | null;
  readonly cap: number | null;
}

interface VariantConfig {
  readonly is_correction: Bounds & {
    readonly level: string;
    readonly row_mask?: Bounds & { readonly level: string };
  };
  readonly [key: string]: unknown;
}

interface IsCase {
  readonly seed: number;
  readonly shape: readonly [number, number];
  readonly inputs: {
    readonly logprobs: Rows;
    readonly old_logprobs: Rows;
    readonly rollout_logprobs: Rows;
    readonly advantages: number[] | Rows;
    readonly response_mask: boolean[][];
  };
  readonly outputs: { readonly loss: number; readonly grad_logprobs: Rows };
  readonly tokens_outside: number | null;
  readonly rows_outside: number | null;
}

interface IsVariant {
  readonly framework: "openrlhf" | "trl";
  readonly pin: string;
  readonly commit: string;
  readonly name: string;
  readonly setting: unknown;
  readonly config: VariantConfig;
  readonly bounded_level: "token" | "sequence" | "geometric";
  readonly cases: readonly IsCase[];
}

interface IsFixture {
  readonly provenance: {
    readonly tool: string;
    readonly pins: readonly {
      readonly framework: string;
      readonly label: string;
      readonly commit: string;
      readonly files: readonly { readonly path: string; readonly sha256: string }[];
      readonly variants: readonly string[];
    }[];
  };
  readonly variants: readonly IsVariant[];
}

const FIXTURE = JSON.parse(
  readFileSync(
    fileURLToPath(new URL("../../fixtures/frameworks/is-correction.json", import.meta.url)),
    "utf8",
  ),
) as IsFixture;

const PINS = [
  ["openrlhf", "bc71bb19", "bc71bb19464aca306b33080b2d2bb45d154e2f49"],
  ["openrlhf", "3c3be623", "3c3be6234e0cb353e76bb8019947db9dfe99fca7"],
  ["trl", "v1.8.0", "95809b942eb5d11d0b06d749510d88be99230b73"],
  ["trl", "f2cd5771", "f2cd57710ae345ea6428ae95363267fcf38a3dc8"],
] as const;

const TOL = 1e-12;

/** max|a − e| / max(1, max|e|) over all entries. */
function scaledErr(actual: ArrayLike<number>, expected: readonly number[]): number {
  if (actual.length !== expected.length) return Number.POSITIVE_INFINITY;
  let scale = 1;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) {
    scale = Math.max(scale, Math.abs(expected[i] as number));
    diff = Math.max(diff, Math.abs((actual[i] as number) - (expected[i] as number)));
  }
  return diff / scale;
}

/** Response tokens (token level) or rows (sequence: product, geometric: mean) outside the bounds. */
function countOutside(v: IsVariant, c: IsCase): number {
  const is = v.config.is_correction;
  const b: Bounds = is.row_mask ?? is;
  const lo = b.lower ?? Number.NEGATIVE_INFINITY;
  const hi = b.cap ?? Number.POSITIVE_INFINITY;
  const out = (w: number): number => (w < lo || w > hi ? 1 : 0);
  const { old_logprobs: old, rollout_logprobs: roll, response_mask: mask } = c.inputs;
  let n = 0;
  mask.forEach((row, r) => {
    let sum = 0;
    let len = 0;
    row.forEach((on, t) => {
      if (!on) return;
      const d = (old[r] as number[])[t]! - (roll[r] as number[])[t]!;
      sum += d;
      len++;
      if (v.bounded_level === "token") n += out(Math.exp(d));
    });
    if (v.bounded_level === "sequence") n += out(Math.exp(sum));
    if (v.bounded_level === "geometric") n += out(Math.exp(sum / len));
  });
  return n;
}

const label = (v: IsVariant): string => `${v.framework}@${v.pin} ${v.name}`;

describe("vLLM IS-correction fixtures", () => {
  test("identity: the provenance names the four pins and every variant belongs to one", () => {
    expect(FIXTURE.provenance.tool).toBe("tools/record-fixtures/isCorrection.py");
    expect(FIXTURE.provenance.pins.map((p) => [p.framework, p.label, p.commit])).toEqual(
      PINS.map((p) => [...p]),
    );
    for (const p of FIXTURE.provenance.pins) {
      expect(p.files.length).toBeGreaterThan(0);
      for (const f of p.files) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
      const mine = FIXTURE.variants.filter((v) => v.framework === p.framework && v.pin === p.label);
      expect(mine.map((v) => v.name)).toEqual([...p.variants]);
      for (const v of mine) expect(v.commit).toBe(p.commit);
    }
    expect(FIXTURE.variants.length).toBe(
      FIXTURE.provenance.pins.reduce((n, p) => n + p.variants.length, 0),
    );
  });

  test("identity: every variant has 4 cases and exercises its bounds (recorded counts match the inputs)", () => {
    const bad: string[] = [];
    for (const v of FIXTURE.variants) {
      if (v.cases.length !== 4) bad.push(`${label(v)}: ${v.cases.length} cases`);
      let exercised = false;
      for (const c of v.cases) {
        const recorded = v.bounded_level === "token" ? c.tokens_outside : c.rows_outside;
        const other = v.bounded_level === "token" ? c.rows_outside : c.tokens_outside;
        if (recorded === null || other !== null || recorded !== countOutside(v, c))
          bad.push(
            `${label(v)} seed ${c.seed}: recorded ${recorded}, inputs ${countOutside(v, c)}`,
          );
        if ((recorded ?? 0) > 0) exercised = true;
      }
      if (!exercised) bad.push(`${label(v)}: no case has a token or row outside the bounds`);
    }
    expect(bad).toEqual([]);
  });

  test.each(FIXTURE.variants.map((v) => [label(v), v] as const))(
    "conformance: policyLoss reproduces %s (loss and gradient 1e-12 relative, norm-wise)",
    (name, v) => {
      const config = parsePolicyLossConfig(v.config, `is-correction.json ${name}`);
      const bad: string[] = [];
      for (const c of v.cases) {
        const r = policyLoss(config, {
          logprobs: c.inputs.logprobs,
          oldLogprobs: c.inputs.old_logprobs,
          rolloutLogprobs: c.inputs.rollout_logprobs,
          advantages: c.inputs.advantages,
          responseMask: c.inputs.response_mask,
        });
        const loss = scaledErr([r.loss], [c.outputs.loss]);
        const grad = scaledErr(r.gradLogprobs.data, c.outputs.grad_logprobs.flat());
        if (!(loss <= TOL && grad <= TOL))
          bad.push(
            `seed ${c.seed}: loss ${loss.toExponential(2)} (${r.loss} vs ${c.outputs.loss}), grad ${grad.toExponential(2)}`,
          );
      }
      expect(bad).toEqual([]);
    },
  );
});
