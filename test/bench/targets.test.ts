/**
 * Enforces docs/performance.md#the-verdicts: bench/targets.mjs judges issue 12's targets from a
 * bench document: each target met only when every measured row passes it, unmeasured (null) when
 * no row measured it, and only the 256x8192 rows count for the loss targets.
 */
import { describe, expect, test } from "vitest";
import { fieldsVerdicts, targetVerdicts } from "../../bench/targets.mjs";

/** A row of the bench document with the fields the verdicts read. */
function row(
  config: string,
  B: number,
  T: number,
  threads: number,
  ratio: number | null,
  nestedOverTyped: number,
  fractionOfExp: number,
) {
  return {
    config,
    B,
    T,
    threads,
    nestedOverTyped,
    typed: { fractionOfExp },
    ratio: ratio === null ? null : { typed: ratio, out: ratio, nested: ratio },
  };
}

describe("targetVerdicts", () => {
  test("golden: a run meeting every target, and one missing each by a little", () => {
    const pass = {
      rows: [
        row("dapo", 256, 8192, 1, 3.0, 1.5, 0.4),
        row("grpo", 256, 8192, 1, 4.2, 1.1, 0.2),
        row("dapo", 256, 8192, 2, 2.0, 1.2, 0.3),
        // Another size never counts: a ratio of 0.5 here leaves the verdicts as they are.
        row("cispo", 64, 4096, 1, 0.5, 3, 0.01),
      ],
      diagnose: { threads: [{ mbPerSecond: 400 }, { mbPerSecond: 512 }] },
      cli: { ratioOut: 2, oursOut: { peakRssOverFile: 2 } },
    };
    expect(targetVerdicts(pass).map((v) => [v.met, v.measured])).toEqual([
      [true, "3.00×–4.20×"],
      [true, "2.00×–2.00×"],
      [true, "1.10–1.50"],
      [true, "40 %–40 %"],
      [true, "400 MB/s–512 MB/s"],
      [true, "2.00×, 2.00× the file"],
    ]);
    const fail = {
      rows: [
        row("dapo", 256, 8192, 1, 2.99, 1.51, 0.399),
        row("dapo", 256, 8192, 2, 1.99, 1.0, 0.5),
      ],
      diagnose: { threads: [{ mbPerSecond: 399 }] },
      cli: { ratioOut: 5, oursOut: { peakRssOverFile: 2.01 } },
    };
    expect(targetVerdicts(fail).map((v) => v.met)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  test("golden: what a run did not measure is null, never met", () => {
    const quick = { rows: [row("dapo", 8, 64, 1, null, 1, 0.1)] };
    expect(targetVerdicts(quick).map((v) => [v.met, v.measured])).toEqual([
      [null, "not measured"],
      [null, "not measured"],
      [null, "not measured"],
      [null, "not measured"],
      [null, "not measured"],
      [null, "not measured"],
    ]);
    // Without the peer, the 256x8192 rows still give the nested and exp verdicts.
    const noPeer = { rows: [row("dapo", 256, 8192, 1, null, 1.2, 0.45)] };
    expect(targetVerdicts(noPeer).map((v) => v.met)).toEqual([null, null, true, true, null, null]);
  });
});

/** A 256x8192 row with the floor pass: torch over the floor's fresh time, and exp and floor times. */
function floored(
  config: string,
  threads: number,
  ratioFloor: number,
  expMs: number,
  floorMs: number,
) {
  return {
    ...row(config, 256, 8192, threads, 1, 1, 0.2),
    ratio: { typed: 1, out: 1, nested: 1, floor: ratioFloor, floorOut: ratioFloor },
    exp: { medianSeconds: expMs / 1e3 },
    floor: { fresh: { medianSeconds: floorMs / 1e3 }, out: { medianSeconds: floorMs / 1e3 } },
    out: { fractionOfExp: 0.33 },
  };
}

describe("targetVerdicts with the floor pass", () => {
  test("golden: a target beyond the floor is unreachable; the floor of GSPO and other targets bound nothing", () => {
    const doc = {
      rows: [
        // One thread: dapo's floor is 3.5× torch, cispo's 1.8×: 3× is beyond the floor for cispo.
        floored("dapo", 1, 3.5, 20, 40),
        floored("cispo", 1, 1.8, 20, 40),
        // GSPO's sequence ratio takes one exp per row: its 0.5 is not a bound and is left out.
        floored("gspo", 1, 0.5, 20, 40),
        // Two threads: the bound is twice the floor's ratio (a perfect split): 2·1.1 = 2.2 ≥ 2.
        floored("dapo", 2, 1.1, 20, 40),
      ],
    };
    const v = targetVerdicts(doc);
    expect(v.map((x) => [x.bound, x.reachable])).toEqual([
      ["1.80×–3.50×", false],
      ["2.20×–2.20×", true],
      [null, null],
      // exp / floor = 20 / 40 = 50 % ≥ 40 %: reachable in this run.
      ["50 %–50 %", true],
      [null, null],
      [null, null],
    ]);
    // The dapo target shows the call with reused outputs beside the fresh one.
    expect(v[3]?.measured).toBe("20 %–20 % (out: 33 %–33 %)");
    // A floor at 39 % of exp: the 40 % target is beyond it.
    const slow = { rows: [floored("dapo", 1, 3.5, 39, 100)] };
    expect(targetVerdicts(slow)[3]).toMatchObject({ bound: "39 %–39 %", reachable: false });
  });

  test("golden: rows without the floor (an older document) give no bound", () => {
    const v = targetVerdicts({ rows: [row("dapo", 256, 8192, 1, 2, 1, 0.2)] });
    expect(v.map((x) => [x.bound, x.reachable])).toEqual(Array(6).fill([null, null]));
  });
});

/**
 * A 256×8192 one-thread row of the fields arms: torch over ours, over ours into out, over the
 * config's floor; ours over the floor (both null: a config bench/floor.mjs has no floor for).
 */
function fieldsRow(
  config: string,
  fields: number,
  fieldsOut: number,
  floorFields: number | null,
  fieldsOverFloor: number | null,
) {
  return {
    config,
    fill: "ragged",
    B: 256,
    T: 8192,
    threads: 1,
    fields: {},
    fieldsOverFloor,
    ratio: { fields, fieldsOut, floorFields },
  };
}

/** A 256×8192 two-thread row: each arm's median over the one-thread arm's, in the same rounds. */
function twoThreadRow(config: string, over: Record<string, number>) {
  return { config, fill: "full", B: 256, T: 8192, threads: 2, overOneThread: over };
}

describe("fieldsVerdicts", () => {
  test("golden: ≥ 2× torch passes; under 2× passes only where the config's floor is under 2.2× torch and ours is ≥ 1.5× within 1.1× of it; a config without a floor is not excused; out ≥ 3×; ours within 1.2× of the floor", () => {
    const verdicts = (...rows: ReturnType<typeof fieldsRow>[]) =>
      fieldsVerdicts({ rows }).map((v) => v.met);
    // 2.0× fresh, 3.0× out, ours 1.2× the floor: every target met.
    expect(verdicts(fieldsRow("dapo", 2.0, 3.0, 2.4, 1.2)).slice(0, 3)).toEqual([true, true, true]);
    // 1.6× with a floor at 2.1× torch (under 2.2×), ours 1.1× the floor: met; 1.11× the floor: not.
    expect(verdicts(fieldsRow("cispo", 1.6, 3.0, 2.1, 1.1))[0]).toBe(true);
    expect(verdicts(fieldsRow("gspo", 1.6, 3.0, 2.1, 1.1))[0]).toBe(true);
    expect(verdicts(fieldsRow("cispo", 1.6, 3.0, 2.1, 1.11))[0]).toBe(false);
    // 1.6× with the floor at 2.2× torch: the floor does not excuse it.
    expect(verdicts(fieldsRow("grpo", 1.6, 3.0, 2.2, 1.05))[0]).toBe(false);
    // Below 1.5× is never met; a config without a floor is not excused at 1.9×.
    expect(verdicts(fieldsRow("dapo", 1.49, 3.0, 1.6, 1.0))[0]).toBe(false);
    expect(verdicts(fieldsRow("ppo", 1.9, 3.0, null, null))[0]).toBe(false);
    // out 2.99×: not met; ours 1.21× the floor: not met (rows without a floor are not judged).
    expect(verdicts(fieldsRow("gspo", 2, 2.99, 2.4, 1.21)).slice(1, 3)).toEqual([false, false]);
    expect(verdicts(fieldsRow("ppo", 2, 3, null, null))[2]).toBe(null);
    // The measured list names each row and its floor.
    expect(fieldsVerdicts({ rows: [fieldsRow("gspo", 2, 3, 2.4, 1)] })[0]?.measured).toBe(
      "gspo ragged 2.00× (floor 2.40×)",
    );
    // No peer: the two torch targets are unmeasured.
    expect(
      fieldsVerdicts({ rows: [{ ...fieldsRow("dapo", 2, 3, 2.4, 1), ratio: null }] }).map(
        (v) => v.met,
      ),
    ).toEqual([null, null, true, null, null]);
  });

  test("golden: the floors bound the torch targets: out ≥ 3× is unreachable where a floor into reused memory is under 3× torch, the fresh target where a floor is under 1.5×; rows without the floors give no bound", () => {
    const withFloors = (floorFields: number, floorFieldsOut: number) => ({
      ...fieldsRow("cispo", 1.6, 2.5, floorFields, 1.1),
      ratio: { fields: 1.6, fieldsOut: 2.5, floorFields, floorFieldsOut },
    });
    const v = fieldsVerdicts({ rows: [withFloors(2.1, 2.9), withFloors(2.4, 3.3)] });
    expect([v[0]?.bound, v[0]?.reachable]).toEqual(["2.10×–2.40×", true]);
    expect([v[1]?.bound, v[1]?.reachable]).toEqual(["2.90×–3.30×", false]);
    expect(fieldsVerdicts({ rows: [withFloors(1.4, 3)] })[0]?.reachable).toBe(false);
    // An older document (no floorFieldsOut) and the targets that bound nothing: null.
    const old = fieldsVerdicts({ rows: [fieldsRow("dapo", 2, 3, 2.4, 1)] });
    expect([old[1]?.bound, old[1]?.reachable]).toEqual([null, null]);
    expect(old.slice(2).map((x) => [x.bound, x.reachable])).toEqual(Array(3).fill([null, null]));
  });

  test("golden: two threads are never slower than one when every arm of every two-thread row is within 1.05× of its one-thread median, or within the run's worst same-code pair (fields, fieldsOut) when that is wider; the worst arm is listed; no two-thread row is unmeasured", () => {
    const v = (...over: Record<string, number>[]) =>
      fieldsVerdicts({ rows: over.map((o) => twoThreadRow("dapo", o)) })[3];
    const fine = { typed: 0.8, out: 0.7, fields: 1.0, fieldsOut: 0.99 };
    expect(v(fine)).toMatchObject({
      met: true,
      measured: "dapo full 1.00×; the same code at both counts within 1.05×",
    });
    expect(v({ ...fine, typed: 1.05 })?.met).toBe(true);
    expect(v(fine, { ...fine, typed: 1.051 })?.met).toBe(false);
    // The same code measured 1.08× apart (or 1/1.08): 1.07× on typed is within the noise.
    expect(v({ ...fine, fields: 1.08, typed: 1.07 })?.met).toBe(true);
    expect(v({ ...fine, fieldsOut: 1 / 1.08, typed: 1.07 })?.met).toBe(true);
    expect(v({ ...fine, fields: 1.08, typed: 1.09 })?.met).toBe(false);
    expect(v(fine, { ...fine, out: 1.2 })?.measured).toBe(
      "dapo full 1.00×, dapo full 1.20×; the same code at both counts within 1.05×",
    );
    expect(v()?.met).toBe(null);
  });

  test("golden: every stored format at ≥ 400 MB/s meets the format target; deflated npz is not judged by it; no diagnosis section is unmeasured", () => {
    const formats = (npz: number, deflated: number) => ({
      rows: [],
      diagnose: {
        formats: [
          { format: "npz (stored)", mbPerSecond: npz },
          { format: "npz (deflated)", mbPerSecond: deflated },
          { format: "npy folders", mbPerSecond: 400 },
          { format: ".pt (torch.save)", mbPerSecond: 401 },
          { format: ".pt (torch.save)", skipped: "no python3" },
        ],
      },
    });
    expect(fieldsVerdicts(formats(400, 50))[4]?.met).toBe(true);
    expect(fieldsVerdicts(formats(399, 900))[4]?.met).toBe(false);
    expect(fieldsVerdicts({ rows: [] })[4]?.met).toBe(null);
  });
});
