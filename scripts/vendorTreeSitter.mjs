#!/usr/bin/env node
/**
 * Copy the only three files of @vscode/tree-sitter-wasm that polgrad loads — the web-tree-sitter
 * runtime (tree-sitter.js + tree-sitter.wasm) and the Python grammar (tree-sitter-python.wasm) —
 * with the package's MIT licence into vendor/tree-sitter/, plus PROVENANCE.json (package,
 * version, SHA-256 of each file). The published package ships this folder instead of depending on
 * the 22 MB package of 19 grammars (docs/packaging.md). Run by `npm run build`; vendor/ is not
 * committed (it is a build output, like dist/).
 */
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));
const pkgJson = require.resolve("@vscode/tree-sitter-wasm/package.json");
const pkgDir = dirname(pkgJson);
const pkg = JSON.parse(readFileSync(pkgJson, "utf8"));
const out = join(root, "vendor", "tree-sitter");
const files = [
  "wasm/tree-sitter.js",
  "wasm/tree-sitter.wasm",
  "wasm/tree-sitter-python.wasm",
  "LICENSE",
];

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const provenance = { package: pkg.name, version: pkg.version, license: pkg.license, files: {} };
for (const f of files) {
  const name = f.split("/").pop();
  copyFileSync(join(pkgDir, f), join(out, name));
  provenance.files[name] = createHash("sha256")
    .update(readFileSync(join(out, name)))
    .digest("hex");
}
writeFileSync(join(out, "PROVENANCE.json"), `${JSON.stringify(provenance, null, 2)}\n`);
// The runtime is a CommonJS script; polgrad's package is "type": "module", so the folder says so.
writeFileSync(join(out, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
