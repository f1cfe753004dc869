/**
 * The claim-link checker used by test/meta/claims.test.ts: collects every `@enforcedBy` tag in
 * src/ and every backticked "file > describe > test" reference in docs/ and README.md, and checks
 * each against the exact full names vitest itself collects (`vitest list --json`), so
 * parametrised describe/test titles resolve exactly as the runner names them.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

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
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/@enforcedBy\s+(.+)$/gm)) {
      links.push({ where: relative(root, file), ref: (m[1] as string).trim() });
    }
    // Registry entries name their demonstrating test as `demonstratedBy: "test/… > … > …"`.
    for (const m of text.matchAll(/demonstratedBy:\s*\n?\s*"(test\/[^"]+)"/g)) {
      links.push({ where: relative(root, file), ref: m[1] as string });
    }
  }
  const docs = [...walk(join(root, "docs"), ".md"), join(root, "README.md")].filter((f) =>
    existsSync(f),
  );
  for (const file of docs) {
    for (const m of readFileSync(file, "utf8").matchAll(/`(test\/[^`]+\.test\.ts > [^`]+)`/g)) {
      links.push({ where: relative(root, file), ref: m[1] as string });
    }
  }
  return links;
}

/** The full names of every test vitest collects: "test/x.test.ts > describe > title". */
export function collectTestNames(): Set<string> {
  const out = join(mkdtempSync(join(tmpdir(), "polgrad-list-")), "list.json");
  const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
  // A clean environment: the VITEST_* variables of the calling worker would confuse the child.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("VITEST") && k !== "NODE_OPTIONS" && k !== "TEST",
    ),
  );
  const r = spawnSync(process.execPath, [vitest, "list", `--json=${out}`], {
    cwd: root,
    encoding: "utf8",
    env,
    timeout: 120_000,
  });
  if (r.status !== 0 || !existsSync(out))
    throw new Error(`vitest list failed (${r.status}): ${r.stderr}`);
  const list = JSON.parse(readFileSync(out, "utf8")) as { name: string; file: string }[];
  return new Set(list.map((t) => `${relative(root, t.file)} > ${t.name}`));
}

/** Test names as exact strings plus patterns for parametrised titles. */
export interface TestNames {
  readonly exact: ReadonlySet<string>;
  readonly patterns: readonly RegExp[];
}

/** Why `ref` does not resolve against `names`, or null when it does. */
export function checkLink(ref: string, testNames: TestNames | ReadonlySet<string>): string | null {
  const { exact, patterns } =
    testNames instanceof Set ? { exact: testNames, patterns: [] } : (testNames as TestNames);
  const names = exact;
  if (names.has(ref) || patterns.some((p) => p.test(ref))) return null;
  const parts = ref.split(" > ");
  if (parts.length < 3) return `"${ref}" is not of the form "file > describe > test title"`;
  const file = parts[0] as string;
  if (!existsSync(join(root, file))) return `test file ${file} does not exist`;
  const prefix = parts.slice(0, -1).join(" > ");
  if (
    ![...names].some((n) => n.startsWith(`${prefix} > `)) &&
    !patterns.some((p) =>
      p.source.startsWith(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} > `),
    )
  )
    return `${file} has no describe path "${parts.slice(1, -1).join(" > ")}"`;
  return `${file} has no test "${parts.at(-1)}" under "${parts.slice(1, -1).join(" > ")}"`;
}

/** GitHub's heading anchor: lower-case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every `@derivation` tag in src/: `{ where, ref }` with ref = "docs/page.md#anchor" (anchor optional). */
export function collectDerivations(): { where: string; ref: string }[] {
  const out: { where: string; ref: string }[] = [];
  for (const file of walk(join(root, "src"), ".ts")) {
    for (const m of readFileSync(file, "utf8").matchAll(/@derivation\s+(\S+)/g))
      out.push({ where: relative(root, file), ref: m[1] as string });
  }
  return out;
}

/** Why a derivation reference does not resolve to a page and heading, or null. */
export function checkDerivation(ref: string): string | null {
  const [page, anchor] = ref.split("#") as [string, string | undefined];
  const path = join(root, page);
  if (!existsSync(path)) return `page ${page} does not exist`;
  if (anchor === undefined) return null;
  const anchors = new Set(
    [...readFileSync(path, "utf8").matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] as string)),
  );
  return anchors.has(anchor) ? null : `${page} has no heading with anchor #${anchor}`;
}
