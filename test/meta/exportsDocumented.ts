/**
 * Finds the doc comment of every value exported from src/index.ts (functions and constants) and
 * reports which lack an `@enforcedBy` link or a `@derivation` page. Used by
 * test/meta/claims.test.ts.
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { sources } from "../_kit/moduleGraph.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The public entry points: the package root and its subpath exports. */
export const ENTRY_POINTS: readonly string[] = ["src/index.ts", "src/verify/index.ts"];

/** Names of the runtime values the entry points export (type-only exports excluded). */
export function exportedValues(): string[] {
  const names: string[] = [];
  for (const entry of ENTRY_POINTS)
    names.push(...valuesOf(readFileSync(join(root, entry), "utf8")));
  return [...new Set(names)];
}

function valuesOf(index: string): string[] {
  const names: string[] = [];
  for (const block of index.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const raw of (block[1] as string).split(",")) {
      const item = raw.trim();
      if (item === "" || item.startsWith("type ")) continue;
      names.push(item.split(/\s+as\s+/).pop() as string);
    }
  }
  for (const m of index.matchAll(/export const (\w+)/g)) names.push(m[1] as string);
  return names;
}

/** For each exported function: where it is declared and which doc tags it lacks. */
export function undocumentedExports(
  required: readonly string[] = ["@enforcedBy"],
): { name: string; where: string; missing: string[] }[] {
  const files = sources(join(root, "src")).map((f) => ({ f, text: readFileSync(f, "utf8") }));
  const out: { name: string; where: string; missing: string[] }[] = [];
  for (const name of exportedValues()) {
    const decl = new RegExp(
      `/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*export (?:async )?function ${name}\\b`,
    );
    if (!files.some(({ text }) => new RegExp(`export (?:async )?function ${name}\\b`).test(text)))
      continue;
    let found = false;
    for (const { f, text } of files) {
      const m = text.match(decl);
      if (!m) continue;
      found = true;
      const missing = required.filter((tag) => !(m[1] as string).includes(tag));
      if (missing.length > 0) out.push({ name, where: relative(root, f), missing });
      break;
    }
    if (!found) out.push({ name, where: "?", missing: ["a doc comment on its declaration"] });
  }
  return out;
}
