#!/usr/bin/env node
/**
 * Remove dist/ before `npm run build` compiles into it, so that the package holds only what this
 * build wrote: no stale module of a deleted source, no source map of an earlier configuration
 * (docs/packaging.md).
 */
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

rmSync(join(dirname(fileURLToPath(import.meta.url)), "..", "dist"), {
  recursive: true,
  force: true,
});
