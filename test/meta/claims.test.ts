/**
 * Enforces that every claim link resolves: each `@enforcedBy` tag in src/ and each
 * "Enforced by: `…`" reference in docs/ and README.md names a test that vitest collects, by its
 * exact full name. A link to a missing test fails here — proven by the self-test below, which feeds
 * the checker broken links.
 */
import { beforeAll, describe, expect, test } from "vitest";
import {
  checkDerivation,
  checkLink,
  collectDerivations,
  collectLinks,
  collectTestNames,
} from "./claimLinks.js";
import { undocumentedExports } from "./exportsDocumented.js";

// Collected in beforeAll, never at module level: `vitest list` imports this file too, and a
// module-level call would recurse.
let names: Set<string>;
beforeAll(() => {
  names = collectTestNames();
}, 120_000);

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
});
