/** Enforces docs/conformance/drift.md#signature-contracts: how two parameter lists are compared. */
import { describe, expect, test } from "vitest";
import type { PythonParameter } from "../../../src/conformance/python/index.js";
import { diffParameters, formatParameter } from "../../../src/conformance/python/signatureDiff.js";

/** Parse `a, b=1, *args, c, **kw` (no annotations) into parameters. */
function params(spec: string): PythonParameter[] {
  let afterStar = false;
  return spec.split(",").map((raw) => {
    const s = raw.trim();
    if (s.startsWith("**"))
      return { name: s.slice(2), kind: "var_keyword", default: null, annotation: null };
    if (s.startsWith("*")) {
      afterStar = true;
      return { name: s.slice(1), kind: "var_positional", default: null, annotation: null };
    }
    const [name, def] = s.split("=") as [string, string | undefined];
    return {
      name,
      kind: afterStar ? "keyword_only" : "normal",
      default: def ?? null,
      annotation: null,
    };
  });
}

describe("diffParameters", () => {
  test("identity: equal lists have no difference", () => {
    const p = params("self, x, y=None");
    expect(diffParameters(p, p)).toEqual({
      added: [],
      removed: [],
      renamed: [],
      changed: [],
      reordered: false,
    });
  });

  test("golden: an insertion shifts later parameters without renaming them", () => {
    const d = diffParameters(
      params("self, a, b=None, c=None"),
      params("self, a, flag=False, b=None, c=None"),
    );
    expect(d.added.map((p) => [p.name, p.index])).toEqual([["flag", 2]]);
    expect([d.removed, d.renamed, d.changed, d.reordered]).toEqual([[], [], [], false]);
  });

  test("golden: a rename is the same position, a different name and the same default", () => {
    const d = diffParameters(params("self, a, old=None"), params("self, a, new=None"));
    expect(d.renamed).toEqual([{ from: "old", to: "new", pinnedIndex: 2, index: 2 }]);
    expect([d.added, d.removed]).toEqual([[], []]);
    // A different default at the same position is a removal plus an addition.
    const e = diffParameters(params("self, a, old=None"), params("self, a, new=0"));
    expect([e.renamed, e.removed.map((p) => p.name), e.added.map((p) => p.name)]).toEqual([
      [],
      ["old"],
      ["new"],
    ]);
  });

  test("golden: a rename is recognised after an insertion before it", () => {
    // Position = after the same surviving neighbour, at the same offset.
    const d = diffParameters(
      params("self, a, x=None, old=None"),
      params("self, extra=1, a, x=None, new=None"),
    );
    expect(d.renamed).toEqual([{ from: "old", to: "new", pinnedIndex: 3, index: 4 }]);
    expect(d.added.map((p) => p.name)).toEqual(["extra"]);
  });

  test("golden: changed default or kind, and reordering", () => {
    const d = diffParameters(params("self, a=1, b=2"), params("self, b=2, *rest, a=3"));
    expect(d.changed).toEqual([
      {
        name: "a",
        pinned: { name: "a", kind: "normal", default: "1", annotation: null },
        checkout: { name: "a", kind: "keyword_only", default: "3", annotation: null },
      },
    ]);
    expect(d.reordered).toBe(true);
    expect(d.added.map((p) => p.name)).toEqual(["rest"]);
  });

  test("golden: Python spelling of parameters", () => {
    expect(params("x, y=None, *args, k=1, **kw").map(formatParameter)).toEqual([
      "x",
      "y=None",
      "*args",
      "k=1",
      "**kw",
    ]);
    expect(
      formatParameter({ name: "t", kind: "normal", default: "None", annotation: "Tensor | None" }),
    ).toBe("t: Tensor | None = None");
  });
});
