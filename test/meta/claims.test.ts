/**
 * Enforces that every claim link resolves: each `@enforcedBy` tag in src/ and each
 * "Enforced by: `…`" reference in docs/ and README.md names a test file that exists and contains
 * the named describe blocks and test title (as string literals). A link to a missing test fails
 * here — proven by the self-test below, which feeds the checker a broken link.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

function walk(dir: string, ext: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === "node_modules" || name === "fixtures" || name.startsWith(".")) continue;
    if (statSync(p).isDirectory()) walk(p, ext, out);
    else if (p.endsWith(ext)) out.push(p);
  }
  return out;
}

/** Every claim link in the repository: `{ where, ref }` with ref = "file > describe… > title". */
export function collectLinks(): { where: string; ref: string }[] {
  const links: { where: string; ref: string }[] = [];
  for (const file of walk(join(root, "src"), ".ts")) {
    for (const m of readFileSync(file, "utf8").matchAll(/@enforcedBy\s+(.+)$/gm)) {
      links.push({ where: relative(root, file), ref: (m[1] as string).trim() });
    }
  }
  for (const file of [...walk(join(root, "docs"), ".md"), join(root, "README.md")]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const m of text.matchAll(/`(test\/[^`]+\.test\.ts > [^`]+)`/g)) links.push({ where: relative(root, file), ref: m[1] as string });
  }
  return links;
}

function literalTitles(source: string, fn: "describe" | "test"): Set<string> {
  const titles = new Set<string>();
  const re = new RegExp(`\\b${fn}(?:\\.each\\([^)]*\\))?\\(\\s*(["'\`])((?:\\\\.|(?!\\1).)*)\\1`, "g");
  for (const m of source.matchAll(re)) titles.add((m[2] as string).replace(/\\(.)/g, "$1"));
  return titles;
}

/** Why `ref` does not resolve, or null when it does. */
export function checkLink(ref: string): string | null {
  const parts = ref.split(" > ");
  if (parts.length < 3) return `"${ref}" is not of the form "file > describe > test title"`;
  const [file, ...names] = parts as [string, ...string[]];
  let source: string;
  try {
    source = readFileSync(join(root, file), "utf8");
  } catch {
    return `test file ${file} does not exist`;
  }
  const title = names.pop() as string;
  const describes = literalTitles(source, "describe");
  for (const d of names) if (!describes.has(d)) return `${file} has no describe("${d}")`;
  if (!literalTitles(source, "test").has(title)) return `${file} has no test("${title}")`;
  return null;
}

describe("claims", () => {
  test("identity: every claim link names an existing test", () => {
    const links = collectLinks();
    expect(links.length).toBeGreaterThan(20);
    const broken = links.map((l) => ({ ...l, why: checkLink(l.ref) })).filter((l) => l.why !== null);
    expect(broken).toEqual([]);
  });

  test("rejects: a broken link is reported", () => {
    expect(checkLink("test/aggregate/aggregate.test.ts > aggregate > golden: a test that does not exist")).toMatch(/has no test/);
    expect(checkLink("test/nope.test.ts > x > y")).toMatch(/does not exist/);
    expect(checkLink("test/aggregate/aggregate.test.ts > agregate > golden: the four modes on x = [[1, 2], [3, pad]]")).toMatch(/has no describe/);
    expect(checkLink("test/aggregate/aggregate.test.ts > aggregate > golden: the four modes on x = [[1, 2], [3, pad]]")).toBeNull();
  });
});
