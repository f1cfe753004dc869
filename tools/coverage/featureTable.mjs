#!/usr/bin/env node
// Extract the semantic column of the feature table (section 5) of the framework-semantics survey
// into test/fixtures/coverage/feature-table.json, with the survey's SHA-256 as provenance. The
// coverage test checks that every extracted row has a row in src/conformance/coverage.ts.
//
//   node tools/coverage/featureTable.mjs ../shared/spec/framework-semantics.md
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const src = process.argv[2];
if (src === undefined) {
  process.stderr.write("usage: node tools/coverage/featureTable.mjs <framework-semantics.md>\n");
  process.exit(2);
}
const text = readFileSync(src, "utf8");
const start = text.indexOf("## 5. Feature table");
const end = text.indexOf("\n## 6.", start);
if (start < 0 || end < 0) {
  process.stderr.write(`${src}: no "## 5. Feature table" section\n`);
  process.exit(1);
}
const rows = [];
let section = null;
for (const line of text.slice(start, end).split("\n")) {
  if (!line.startsWith("| ") || line.startsWith("| semantic") || line.startsWith("|---")) continue;
  const first = line.split("|")[1].trim();
  const bold = /^\*\*(.+)\*\*$/.exec(first);
  const cells = line
    .split("|")
    .slice(2, -1)
    .map((c) => c.trim());
  if (bold !== null && cells.every((c) => c === "")) {
    section = bold[1];
    continue;
  }
  rows.push({ section, semantic: first.replace(/\*\*/g, "") });
}
const out = {
  provenance: {
    tool: "tools/coverage/featureTable.mjs",
    source: "framework-semantics.md, section 5 (Feature table), the semantic column",
    source_sha256: createHash("sha256").update(text).digest("hex"),
  },
  rows,
};
const dest = fileURLToPath(
  new URL("../../test/fixtures/coverage/feature-table.json", import.meta.url),
);
writeFileSync(dest, `${JSON.stringify(out, null, 1)}\n`);
process.stdout.write(`${rows.length} rows -> ${dest}\n`);
