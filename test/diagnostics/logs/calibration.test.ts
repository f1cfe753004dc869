/**
 * Enforces docs/diagnostics/log-detectors.md#calibration: the detectors on logged scalars, run as one family
 * at α = 0.05, raise any alarm on at most 5 % of healthy runs (stationary or drifting linearly,
 * with noise), measured over 240 simulated runs of four lengths and three noise levels; and they
 * find an injected entropy collapse at its step.
 */
import { describe, expect, test } from "vitest";
import { createRng } from "../../../src/core/rng.js";
import { LOG_DETECTORS, runLogDetectors } from "../../../src/diagnostics/logs/detectors.js";
import { binomialQuantile99, healthyRun, normal } from "./_runKit.js";

describe("runLogDetectors", () => {
  test("calibration: healthy runs raise any alarm at most alpha of the time (240 runs, lengths 30–1000, three noise levels)", () => {
    const rng = createRng(2026);
    const lengths = [30, 100, 300, 1000];
    const sigmas = [0.01, 0.03, 0.1];
    let runs = 0;
    let alarmed = 0;
    const byDetector: Record<string, number> = {};
    for (const n of lengths)
      for (let k = 0; k < 60; k++) {
        const sigma = sigmas[k % sigmas.length] as number;
        const report = runLogDetectors(healthyRun(rng, n, sigma), { seed: runs + 1 });
        // Every detector ran: the family is the full one.
        expect(report.tests).toBe(LOG_DETECTORS.length);
        const alarms = report.findings.filter((f) => f.alarm);
        if (alarms.length > 0 || report.nonFinite.length > 0) alarmed++;
        for (const a of alarms) byDetector[a.detector] = (byDetector[a.detector] ?? 0) + 1;
        runs++;
      }
    expect(runs).toBe(240);
    // At most the count a true 5 % rate exceeds 1 % of the time (16 of 240).
    expect(alarmed, JSON.stringify(byDetector)).toBeLessThanOrEqual(binomialQuantile99(240, 0.05));
  }, 120_000);

  test("golden: an injected entropy collapse (−0.3 nats after 60 % of the run) is found at its step", () => {
    const rng = createRng(9);
    for (const n of [50, 200, 1000]) {
      const steps = Float64Array.from({ length: n }, (_, i) => i + 1);
      const at = Math.floor(0.6 * n);
      const values = Float64Array.from(
        steps,
        (t) => 0.8 - (0.1 * t) / n - (t > at ? 0.3 : 0) + 0.03 * normal(rng),
      );
      const report = runLogDetectors({ entropy: { metric: "entropy", steps, values } });
      const f = report.findings.find((x) => x.detector === "entropy_collapse");
      expect(f?.alarm, `n = ${n}`).toBe(true);
      // Block means of ⌈n/512⌉ points: the step is found within one block.
      expect(Math.abs((f?.step as number) - at), `n = ${n}`).toBeLessThanOrEqual(
        Math.ceil(n / 512),
      );
      expect(f?.effect as number).toBeCloseTo(-0.3, 1);
    }
  });

  test("golden: a 0.02-nat step is significant but below the minimum effect: no alarm; --min-effect lowers it", () => {
    const rng = createRng(3);
    const n = 300;
    const steps = Float64Array.from({ length: n }, (_, i) => i + 1);
    const values = Float64Array.from(
      steps,
      (t) => 0.8 - (t > 150 ? 0.02 : 0) + 0.002 * normal(rng),
    );
    const series = { entropy: { metric: "entropy", steps, values } };
    const plain = runLogDetectors(series).findings[0];
    expect(plain?.step).not.toBeNull();
    expect(plain?.alarm).toBe(false);
    const low = runLogDetectors(series, { minEffect: { entropy_collapse: 0.01 } }).findings[0];
    expect(low?.alarm).toBe(true);
    expect(low?.step).toBe(150);
  });

  test("golden: --only and --skip choose the family; a missing quantity or a short series is skipped with its reason", () => {
    const rng = createRng(4);
    const run = healthyRun(rng, 100, 0.03);
    const only = runLogDetectors(run, { only: ["entropy_collapse", "dead_groups"] });
    expect(only.findings.map((f) => f.detector)).toEqual(["entropy_collapse", "dead_groups"]);
    expect(only.tests).toBe(2);
    expect(only.findings[0]?.alpha).toBe(0.025);
    const skip = runLogDetectors(run, { skip: ["grad_norm_spike"] });
    expect(skip.tests).toBe(LOG_DETECTORS.length - 1);
    const short = runLogDetectors({
      entropy: { metric: "entropy", steps: [1, 2, 3], values: [0.5, 0.4, 0.3] },
    });
    expect(short.findings[0]?.reason).toBe("3 finite point(s); the test needs 20");
    expect(short.findings[1]?.reason).toBe("no logged metric maps to clip_total");
    expect(short.tests).toBe(0);
  });

  test("golden: a value logged as NaN or ±∞ is reported at its first step", () => {
    const r = runLogDetectors({
      kl_ref: {
        metric: "kl",
        steps: [1, 2, 3, 4],
        values: [0.1, Number.NaN, 0.2, Number.POSITIVE_INFINITY],
      },
    });
    expect(r.nonFinite).toEqual([{ metric: "kl", step: 2, count: 2 }]);
  });

  test("rejects: an unknown detector name, alpha outside (0, 1), a minimum effect that is not positive", () => {
    expect(() => runLogDetectors({}, { only: ["entropy"] })).toThrow(/only must be detector names/);
    expect(() => runLogDetectors({}, { alpha: 1 })).toThrow(/alpha must be in \(0, 1\)/);
    expect(() => runLogDetectors({}, { minEffect: { entropy_collapse: 0 } })).toThrow(
      /minEffect\.entropy_collapse must be a positive finite number/,
    );
  });
});
