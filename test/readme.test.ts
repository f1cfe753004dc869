/**
 * Enforces that the README's library example runs as written: its TypeScript block is extracted,
 * pointed at the source entry instead of the published package, executed, and its result checked
 * against a direct call.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { getAlgorithm, policyLoss } from "../src/index.js";

describe("README", () => {
  test("golden: the library example runs and computes dapo's loss", async () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const code = `${(block as string).replace('from "polgrad"', 'from "../../src/index.js"')}\nexport const result = { loss, gradLogprobs, clippedHigh };\n`;
    const dir = fileURLToPath(new URL("./.generated/", import.meta.url));
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}readmeExample.ts`, code);
    // A computed specifier: the file exists only once this test has written it.
    const specifier = "./.generated/readmeExample.js";
    const mod = (await import(/* @vite-ignore */ specifier)) as { result: { loss: number } };
    const direct = policyLoss(getAlgorithm("dapo").loss, {
      logprobs: [
        [-0.2, -1.0, -0.7],
        [-0.5, 0, 0],
      ],
      oldLogprobs: [
        [-0.5, -0.7, -0.9],
        [-0.6, 0, 0],
      ],
      advantages: [1.5, -0.8],
      responseMask: [
        [true, true, true],
        [true, false, false],
      ],
    });
    expect(mod.result.loss).toBe(direct.loss);
  });
});
