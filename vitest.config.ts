import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests draw many batches; the slowest file still finishes well inside this bound.
    testTimeout: 60_000,
    // The default reporter for people, plus a JSON summary that .ci/run turns into the plain
    // "N passed, N failed" line CI reads.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
