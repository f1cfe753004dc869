/**
 * Enforces docs/io.md#config-json: the policy-loss part of docs/schemas/defs.schema.json
 * (`policyLossConfigFields`) is generated from the field table (losses/config.ts), the
 * table's snake_case keys are the camelCase keys' (so the derived `PolicyLossConfigJson` type
 * agrees with it), and every registered algorithm's wire form validates against the schema.
 *
 * After changing the table: `POLGRAD_WRITE_SCHEMA=1 npx vitest run test/io/configSchema.test.ts`
 * rewrites the committed file (as expanded JSON; the committed file is laid out by hand, equal as JSON).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, test } from "vitest";
import { parsePolicyLossConfig, policyLossConfigToJson } from "../../src/index.js";
import { policyLossConfigSchema } from "../../src/io/configJson.js";
import {
  POLICY_LOSS_FIELD_KEYS,
  POLICY_LOSS_FIELDS,
  type SubField,
  type ValueSpec,
} from "../../src/losses/config.js";
import { ALGORITHM_NAMES, ALGORITHMS } from "../../src/registry/registry.js";

const defsPath = fileURLToPath(new URL("../../docs/schemas/defs.schema.json", import.meta.url));

const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every (camelCase path, field) of the table, sub-fields included. */
function allFields(): [string, SubField][] {
  const out: [string, SubField][] = [];
  const walk = (path: string, spec: ValueSpec): void => {
    const obj = spec.kind === "object" ? spec : spec.kind === "list" ? spec.item : null;
    if (obj === null) return;
    for (const [k, f] of Object.entries(obj.fields)) {
      out.push([`${path}.${k}`, f]);
      walk(`${path}.${k}`, f.value);
    }
  };
  for (const k of POLICY_LOSS_FIELD_KEYS) {
    const f = POLICY_LOSS_FIELDS[k] as SubField;
    out.push([k, f]);
    walk(k, f.value);
  }
  return out;
}

describe("policy-loss config schema", () => {
  test("identity: the committed schema's policy-loss part is the one generated from the field table", () => {
    const defs = JSON.parse(readFileSync(defsPath, "utf8"));
    const generated = policyLossConfigSchema();
    if (process.env.POLGRAD_WRITE_SCHEMA === "1") {
      defs.$defs.policyLossConfigFields = generated;
      writeFileSync(defsPath, `${JSON.stringify(defs, null, 2)}\n`);
    }
    expect(defs.$defs.policyLossConfigFields).toEqual(generated);
  });

  test("identity: every field's wire key is its camelCase key in snake_case", () => {
    const fields = allFields();
    expect(fields.length).toBeGreaterThan(60);
    for (const [path, f] of fields) {
      const last = path.split(".").at(-1) as string;
      expect(f.snake, path).toBe(snake(last));
    }
  });

  test("property: every registered algorithm's wire form validates and parses back to the same wire form", () => {
    const defs = JSON.parse(readFileSync(defsPath, "utf8"));
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajv.addSchema(defs);
    const validate = ajv.compile({ $ref: `${defs.$id}#/$defs/policyLossConfig` });
    for (const name of ALGORITHM_NAMES) {
      const wire = policyLossConfigToJson(ALGORITHMS[name].loss);
      expect(validate(wire), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(policyLossConfigToJson(parsePolicyLossConfig(wire, name))).toEqual(wire);
    }
  });
});
