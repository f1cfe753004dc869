/** Enforces docs/cli.md#outputs: the text rendering of the which table. */
import { describe, expect, test } from "vitest";
import { BUILTIN_BATCH, whichTable } from "../../src/index.js";
import { renderWhichText } from "../../src/report/whichText.js";

describe("renderWhichText", () => {
  test("golden: built-in table lines", () => {
    // Losses to 8 decimals and masses to 5, as polgrad's example prints them.
    const lines = renderWhichText(whichTable(BUILTIN_BATCH)).split("\n");
    const row = (prefix: string) =>
      (lines.find((l) => l.startsWith(prefix)) ?? "").split(/\s{2,}/).slice(1);
    expect(row("seq-mean-token-mean")).toEqual([
      "0.24038972",
      "0.19568",
      "0.08222",
      "0.02878",
      "0.29263",
    ]);
    expect(row("token-mean")).toEqual(["0.51717388", "0.07827", "0.06578", "0.03454", "0.46821"]);
    expect(row("token-sum-norm")).toEqual([
      "0.32323368",
      "0.04892",
      "0.04111",
      "0.02159",
      "0.29263",
    ]);
    expect(row("GSPO")).toEqual(["0.15429390", "0.19550", "0.00000", "0.00000", "0.00000"]);
  });
});
