/**
 * Enforces docs/porting.md#the-policy-loss-configs-fields: the map of the config's camelCase and
 * snake_case keys is generated from the field table (src/losses/config.ts), not written by hand.
 * `POLGRAD_WRITE_DOCS=1` rewrites the generated block.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  NUMBER_RULES,
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type SubField,
  type ValueSpec,
} from "../../src/losses/config.js";

const page = new URL("../../docs/porting.md", import.meta.url);
const BEGIN = "<!-- fields:begin -->";
const END = "<!-- fields:end -->";

function kind(v: ValueSpec): string {
  switch (v.kind) {
    case "name":
      return v.names.map((n) => `\`${n}\``).join(", ");
    case "number":
      return `number: ${NUMBER_RULES[v.rule].text}`;
    case "boolean":
      return "flag";
    case "object":
      return "settings";
    case "list":
      return "list of settings";
  }
}

function presence(f: SubField): string {
  if (f.presence === "required") return "required";
  if (f.presence === "nullable") return "required (null: none)";
  return f.default === null ? "none" : `\`${JSON.stringify(f.default)}\``;
}

/** One row per field and sub-field, in wire order. */
function rows(): string[] {
  const out: string[] = [];
  const walk = (camel: string, snake: string, f: SubField, owner: string): void => {
    out.push(`| \`${snake}\` | \`${camel}\` | ${kind(f.value)} | ${presence(f)} | ${owner} |`);
    const sub = (s: SubField): string =>
      s.polgrad === true ? "polgrad 0.2.0" : owner === "polgrad 0.2.0" ? "ours" : owner;
    const obj = f.value.kind === "object" ? f.value : f.value.kind === "list" ? f.value.item : null;
    if (obj === null) return;
    const sep = f.value.kind === "list" ? "[]." : ".";
    for (const [k, s] of Object.entries(obj.fields))
      walk(`${camel}${sep}${k}`, `${snake}${sep}${s.snake}`, s, sub(s));
  };
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const f = POLICY_LOSS_FIELDS[k];
    const owner =
      f.owner === "all" ? (f.polgrad ? "polgrad 0.2.0" : "ours") : `ours (\`${f.owner}\` only)`;
    walk(k, f.snake, f, owner);
  }
  return [
    "| wire key | TypeScript | value | default | from |",
    "| --- | --- | --- | --- | --- |",
    ...out,
  ];
}

describe("porting map", () => {
  test("identity: docs/porting.md's map of the config's fields is the one generated from the field table", () => {
    const text = readFileSync(page, "utf8");
    const i = text.indexOf(BEGIN);
    const j = text.indexOf(END);
    expect(i).toBeGreaterThan(0);
    const generated = `${BEGIN}\n${rows().join("\n")}\n${END}`;
    if (process.env.POLGRAD_WRITE_DOCS === "1")
      writeFileSync(page, text.slice(0, i) + generated + text.slice(j + END.length));
    const now = readFileSync(page, "utf8");
    expect(now.slice(now.indexOf(BEGIN), now.indexOf(END) + END.length)).toBe(generated);
  });
});
