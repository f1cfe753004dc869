import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests draw many batches; the slowest file still finishes well inside this bound.
    testTimeout: 60_000,
    // One test file per core: vitest's default leaves one core to its own process, which is
    // mostly idle here (every test is CPU-bound), so on this project's 2-core machine it ran one
    // file at a time. Measured on the whole suite: 210 s with the default, 136 s with 2 workers,
    // every test the same (docs/performance.md#the-test-suite).
    maxWorkers: Math.max(1, availableParallelism()),
    // The default reporter for people, plus a JSON summary that .ci/run turns into the plain
    // "N passed, N failed" line CI reads.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
