/**
 * Enforces that every claim link resolves: each `@enforcedBy` tag in src/ and each
 * "Enforced by: `…`" reference in docs/ and README.md names a test that vitest collects, by its
 * exact full name. A link to a missing test fails here — proven by the self-test below, which feeds
 * the checker broken links.
 */
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import {
  checkDerivation,
  checkLink,
  collectDerivations,
  collectLinks,
  collectTestNames,
  type TestNames,
} from "./claimLinks.js";
import { undocumentedExports } from "./exportsDocumented.js";
import { staticTestNames } from "./testNames.js";

// Test names are read statically (TypeScript's parser over test/**/*.test.ts, in well under a
// second); `vitest list` gives the same set but imports every test file (~20 s), so the full
// cross-check below runs only with POLGRAD_FULL_META=1.
const root = fileURLToPath(new URL("../../", import.meta.url));
let names: TestNames;
beforeAll(() => {
  names = staticTestNames(root);
});

describe("claims", () => {
  test("identity: every claim link names an existing test", () => {
    const links = collectLinks();
    expect(links.length).toBeGreaterThan(100);
    const broken = links
      .map((l) => ({ ...l, why: checkLink(l.ref, names) }))
      .filter((l) => l.why !== null);
    expect(broken).toEqual([]);
  });

  test("identity: every exported function links its derivation page and an enforcing test", () => {
    expect(undocumentedExports(["@derivation", "@enforcedBy"])).toEqual([]);
  });

  test("identity: every derivation tag names an existing page and heading", () => {
    const refs = collectDerivations();
    expect(refs.length).toBeGreaterThan(50);
    expect(
      refs.map((r) => ({ ...r, why: checkDerivation(r.ref) })).filter((r) => r.why !== null),
    ).toEqual([]);
    expect(checkDerivation("docs/derivations/aggregation.md#no-such-heading")).toMatch(
      /no heading/,
    );
  });

  test("rejects: a broken link is reported", () => {
    const ok =
      "test/aggregate/aggregate.test.ts > aggregate > golden: the four modes on x = [[1, 2], [3, pad]]";
    expect(checkLink(ok, names)).toBeNull();
    expect(
      checkLink(
        "test/aggregate/aggregate.test.ts > aggregate > golden: a test that does not exist",
        names,
      ),
    ).toMatch(/has no test/);
    expect(checkLink("test/nope.test.ts > x > y", names)).toMatch(/does not exist/);
    expect(
      checkLink(
        "test/aggregate/aggregate.test.ts > agregate > golden: the four modes on x = [[1, 2], [3, pad]]",
        names,
      ),
    ).toMatch(/has no describe/);
  });

  test.skipIf(process.env.POLGRAD_FULL_META !== "1")(
    "identity: the static test names equal the names vitest itself collects (POLGRAD_FULL_META=1)",
    () => {
      const full = collectTestNames();
      for (const n of full) expect(checkLink(n, names), n).toBeNull();
      for (const n of names.exact) expect(full.has(n), n).toBe(true);
    },
    180_000,
  );
});
