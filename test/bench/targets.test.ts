/**
 * Enforces docs/performance.md#the-verdicts: bench/targets.mjs judges issue 12's targets from a
 * bench document: each target met only when every measured row passes it, unmeasured (null) when
 * no row measured it, and only the 256x8192 rows count for the loss targets.
 */
import { describe, expect, test } from "vitest";
import { targetVerdicts } from "../../bench/targets.mjs";

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
