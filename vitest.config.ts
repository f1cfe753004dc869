import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Property tests draw many batches; the slowest file still finishes well inside this bound.
    testTimeout: 60_000,
  },
});
