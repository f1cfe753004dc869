/**
 * Enforces docs/conventions.md#errors and the house style: the whole tree typechecks under the
 * strict tsconfig (tests included) and passes biome's lint and format checks, so the README's
 * test command covers them.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const run = (args: string[]) => spawnSync(process.execPath, args, { cwd: root, encoding: "utf8" });

describe("tree", () => {
  test("identity: tsc --noEmit passes on sources and tests", () => {
    const r = run(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json", "--noEmit"]);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 120_000);

  test("identity: tsc --noEmit passes on the playground (web/, with the DOM types)", () => {
    const r = run(["node_modules/typescript/bin/tsc", "-p", "web", "--noEmit"]);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 120_000);

  test("identity: biome check passes (lint and format)", () => {
    const r = run(["node_modules/@biomejs/biome/bin/biome", "check", "."]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  }, 120_000);
});
