/**
 * Enforces CONTRIBUTING.md, recipe 1: a per-token surrogate with its own settings is three source
 * files of the library — its table entry (src/losses/config.ts), its point function and kernel
 * entry (src/losses/kernel/points.ts) and its reference case (src/verify/reference/policyLossRef.ts).
 * Measured by where each such surrogate is named: the registered algorithms, the framework models
 * and configs and the coverage claims use the surrogates and are left out.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { SURROGATES } from "../../src/losses/kernel/points.js";
import { sources } from "../_kit/moduleGraph.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const USERS =
  /^src\/(registry\/|conformance\/(frameworkConfig|frameworks|coverage|releases)|testing\/)/;

describe("surrogate recipe", () => {
  test("identity: each per-token surrogate with settings is named in its three source files only", () => {
    const withSettings = Object.entries(SURROGATES)
      .filter(([, e]) => e.constants !== undefined)
      .map(([name]) => name);
    expect(withSettings).toEqual(["sapo", "dro", "dppo", "ipo"]);
    const files = sources(`${root}src`).map((f) => relative(root, f));
    for (const name of withSettings) {
      const word = new RegExp(`\\b${name}\\b`);
      const named = files.filter(
        (f) => !USERS.test(f) && word.test(readFileSync(`${root}${f}`, "utf8")),
      );
      expect(named.sort(), name).toEqual([
        "src/losses/config.ts",
        "src/losses/kernel/points.ts",
        "src/verify/reference/policyLossRef.ts",
      ]);
    }
  });
});
