/**
 * assertConforms works from node:test as well as vitest (issue 15): `node --test` runs
 * test/testing/node/conforms.node.mjs, which imports the built package's `polgrad/testing` export
 * by name (package self-reference), and both of its tests pass.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const built = existsSync(`${root}dist/testing/index.js`);
if (!built) console.log("skipped: dist/testing is not built (npm test builds it first)");

test.skipIf(!built)(
  "conformance: node --test runs assertConforms from polgrad/testing (a pass and a diagnosed failure)",
  () => {
    const r = spawnSync(process.execPath, ["--test", "test/testing/node/conforms.node.mjs"], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(r.stderr + r.stdout).toMatch(/# pass 2/);
    expect(r.stdout).toMatch(/# fail 0/);
    expect(r.status).toBe(0);
  },
);
