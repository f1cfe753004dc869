/**
 * Enforces docs/derivations/advantages.md#gae and docs/derivations/kl.md#adaptive-kl-controller
 * against upstream: verl's compute_gae_advantage_return and OpenRLHF's get_advantages_and_returns
 * (right-padded and interior masks, three (γ, λ)), and both frameworks' adaptive and fixed KL
 * controllers over multi-step runs, recorded at both pins by tools/record-fixtures/gaeAndKlControl.py
 * (test/fixtures/frameworks/gae-kl-control.json). GAE: 1e-12 relative per response position
 * (verl's returns at padding hold A + junk, and its whitened advantages are unmasked: padding is
 * not compared); verl's own whitening (int64 mask: a float32 Bessel factor) at 2 float32 ulps.
 * Controllers: bitwise, step by step.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { gae, whiten } from "../../../src/advantages/index.js";
import { adaptiveKlCoef } from "../../../src/kl/index.js";

type Num = number | string;
interface Variant {
  readonly name: string;
  readonly framework: "verl" | "openrlhf";
  readonly pin: string;
  readonly setting: Record<string, unknown>;
  readonly cases: readonly { inputs: Record<string, unknown>; outputs: Record<string, unknown> }[];
}
const FX = JSON.parse(
  readFileSync(new URL("../../fixtures/frameworks/gae-kl-control.json", import.meta.url), "utf8"),
) as { readonly variants: readonly Variant[] };
const num = (v: Num): number => (typeof v === "number" ? v : Number(v === "NaN" ? Number.NaN : v));
const mat = (x: unknown): number[][] => (x as Num[][]).map((r) => r.map(num));
const U32 = 2 ** -24;

function expectClose(
  actual: ArrayLike<number>,
  expected: readonly number[],
  at: (i: number) => boolean,
  tol: (i: number) => number,
  what: string,
): void {
  const bad: string[] = [];
  for (let i = 0; i < expected.length; i++) {
    if (!at(i)) continue;
    const a = actual[i] as number;
    const e = expected[i] as number;
    if (!(Math.abs(a - e) <= tol(i))) bad.push(`[${i}] ${a} vs ${e}`);
  }
  expect(bad, what).toEqual([]);
}

const label = (v: Variant): string => {
  const g = v.setting.gamma as number;
  const l = (v.setting.lam ?? v.setting.lambd) as number;
  return `${v.framework}@${v.pin} gae ${v.setting.mask_kind} (${g}, ${l})`;
};

describe("gae and kl controllers vs verl and OpenRLHF", () => {
  for (const v of FX.variants.filter((x) => x.name.startsWith("gae:"))) {
    test(`conformance: ${label(v)} replays to 1e-12`, () => {
      const gamma = v.setting.gamma as number;
      const lam = (v.setting.lam ?? v.setting.lambd) as number;
      const verl = v.framework === "verl";
      for (const [k, c] of v.cases.entries()) {
        const mask = (
          c.inputs[verl ? "response_mask" : "action_mask"] as (boolean | number)[][]
        ).map((r) => r.map(Boolean));
        const m = mask.flat();
        const r = mat(c.inputs[verl ? "token_level_rewards" : "rewards"]);
        const out = gae(r, mat(c.inputs.values), { gamma, lam }, mask, {
          masked: verl ? "carry" : "zero",
        });
        const at = (i: number) => m[i] === true;
        const f64 = (e: readonly number[]) => (i: number) =>
          1e-12 * Math.abs(e[i] as number) + 1e-15;
        const adv = mat(verl ? c.outputs.advantages_before_whiten : c.outputs.advantages).flat();
        const ret = mat(c.outputs.returns).flat();
        expectClose(out.advantages.data, adv, at, f64(adv), `case ${k}: advantages`);
        expectClose(out.returns.data, ret, at, f64(ret), `case ${k}: returns`);
        if (verl) {
          // verl whitens inside the function: its masked_whiten with the int64 mask.
          const w = whiten(out.advantages, mask).data;
          const e = mat(c.outputs.advantages).flat();
          expectClose(
            w,
            e,
            at,
            (i) => 2 * U32 * Math.abs(e[i] as number) + 1e-14,
            `case ${k}: whitened`,
          );
        }
      }
    });
  }

  for (const v of FX.variants.filter((x) => x.name.endsWith("kl_controller"))) {
    test(`conformance: ${v.framework}@${v.pin} ${v.name} replays bitwise`, () => {
      for (const c of v.cases) {
        const I = c.inputs as Record<string, unknown>;
        const adaptive = v.name.startsWith("adaptive");
        let coef = num((I.init_kl_coef ?? I.init_coef ?? I.kl_coef) as Num);
        expect(coef).toBe(num(c.outputs.value_after_init as Num));
        const steps = I.steps as { current_kl?: number; current?: number; n_steps: number }[];
        const expected = (c.outputs.values_after_update as Num[]).map(num);
        steps.forEach((s, j) => {
          if (adaptive) {
            coef = adaptiveKlCoef(coef, s.current_kl ?? (s.current as number), s.n_steps, {
              target: num((I.target_kl ?? I.target) as Num),
              horizon: num(I.horizon as Num),
            });
          }
          expect(coef, `step ${j}`).toBe(expected[j]);
        });
      }
    });
  }
});
