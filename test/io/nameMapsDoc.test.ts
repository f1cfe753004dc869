/**
 * Enforces docs/io.md#names-as-trainers-spell-them: each framework's table of names in docs/io.md
 * is rendered from FRAMEWORK_NAME_MAPS (src/io/frameworkNames.ts), not written by hand.
 * `POLGRAD_WRITE_DOCS=1` rewrites the generated blocks.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { FRAMEWORK_NAME_MAPS, type NameMapEntry } from "../../src/io/frameworkNames.js";

const page = new URL("../../docs/io.md", import.meta.url);
const begin = (id: string) =>
  `<!-- name-map:${id}:begin (generated: test/io/nameMapsDoc.test.ts) -->`;
const end = (id: string) => `<!-- name-map:${id}:end -->`;

function where(e: NameMapEntry, full: boolean): string {
  const path = full ? e.source.path : (e.source.path.split("/").pop() as string);
  return `\`${path}:${e.source.line}\`${e.source.commit === undefined ? "" : ` (at \`${e.source.commit.slice(0, 8)}\`)`}`;
}

/** The generated block of one map: where it was read, the table of mapped names, the ignored ones. */
function render(m: (typeof FRAMEWORK_NAME_MAPS)[number]): string {
  const mapped = m.entries.filter((e) => e.ours !== null);
  const ignored = m.entries.filter((e) => e.ours === null);
  return [
    `Read at ${m.repo} \`${m.commit}\`.${m.note === undefined ? "" : ` ${m.note}`}`,
    "",
    "| their name | polgrad name | source | meaning |",
    "| --- | --- | --- | --- |",
    ...mapped.map(
      (e) => `| \`${e.theirs}\` | \`${e.ours}\` | ${where(e, true)} | ${e.note ?? ""} |`,
    ),
    "",
    `Known, ignored (set aside with a notice): ${ignored
      .map(
        (e) => `\`${e.theirs}\` (${where(e, false)}${e.note === undefined ? "" : `; ${e.note}`})`,
      )
      .join(", ")}.`,
  ].join("\n");
}

describe("docs/io.md name maps", () => {
  test("identity: each framework's table is FRAMEWORK_NAME_MAPS rendered", () => {
    let text = readFileSync(page, "utf8");
    for (const m of FRAMEWORK_NAME_MAPS) {
      const i = text.indexOf(begin(m.id));
      const j = text.indexOf(end(m.id));
      expect({ id: m.id, found: i > 0 && j > i }).toEqual({ id: m.id, found: true });
      const generated = `${begin(m.id)}\n${render(m)}\n${end(m.id)}`;
      if (process.env.POLGRAD_WRITE_DOCS === "1")
        text = text.slice(0, i) + generated + text.slice(j + end(m.id).length);
      expect(text.slice(i, text.indexOf(end(m.id)) + end(m.id).length)).toBe(generated);
    }
    if (process.env.POLGRAD_WRITE_DOCS === "1") writeFileSync(page, text);
  });
});
