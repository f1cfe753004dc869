/** Enforces docs/diagnostics/run.md#a-run: the progress bar is drawn only on a terminal. */
import { describe, expect, test } from "vitest";
import { progressBar } from "../../src/cli/progress.js";

describe("progressBar", () => {
  test("golden: draws in place on a terminal and stays silent otherwise", () => {
    let err = "";
    const io = {
      stdout: () => {},
      stderr: (t: string) => {
        err += t;
      },
      stderrIsTTY: true,
    };
    const bar = progressBar(io, "diagnosing", true);
    bar.tick(1, 2);
    bar.tick(2, 2);
    bar.finish();
    // 30 cells: half filled after step 1 of 2, full after step 2; carriage returns, never a newline.
    expect(err).toContain(`\rdiagnosing [${"#".repeat(15)}${".".repeat(15)}] 1/2`);
    expect(err).toContain(`\rdiagnosing [${"#".repeat(30)}] 2/2`);
    expect(err).not.toContain("\n");
    let quiet = "";
    const off = progressBar(
      {
        stdout: () => {},
        stderr: (t: string) => {
          quiet += t;
        },
      },
      "x",
      false,
    );
    off.tick(1, 1);
    off.finish();
    expect(quiet).toBe("");
  });
});
