#!/usr/bin/env node
// `npm run bench:hostile`: the amplification files of issue 31, point 5, at the sizes
// (bench/hostileCases.mjs), each run through the built CLI as
//   polgrad loss --algorithm dapo --batch FILE
// with wall time and peak RSS measured from outside (bench/_process.mjs: /usr/bin/time -v where
// it exists). The bounds of docs/io.md#bounds-on-hostile-files must end each in one E_IO line,
// in well under a second and under 200 MB. `--inside` adds the files just inside the npz and pt
// bounds (costly: several GB for a few seconds; they read, then fail as batches). `--json FILE`
// writes the rows. Run after `npm run build`; the files go to a temporary folder, removed after.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HAS_GNU_TIME, measureProcess } from "./_process.mjs";
import { HOSTILE_CASES } from "./hostileCases.mjs";

const BIN = fileURLToPath(new URL("../bin/polgrad.js", import.meta.url));
const args = process.argv.slice(2);
const inside = args.includes("--inside");
const jsonAt = args.indexOf("--json");
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : undefined;

const dir = mkdtempSync(join(tmpdir(), "polgrad-hostile-"));
const rows = [];
try {
  console.log(
    `hostile files through polgrad loss --algorithm dapo --batch FILE (peak RSS by ${HAS_GNU_TIME ? "/usr/bin/time -v" : "the child's resourceUsage"})`,
  );
  for (const c of HOSTILE_CASES) {
    if (c.inside === true && !inside) continue;
    const path = join(dir, c.file);
    const bytes = await c.make(path);
    const r = measureProcess(process.execPath, [
      BIN,
      "loss",
      "--algorithm",
      "dapo",
      "--batch",
      path,
    ]);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("error["));
    const row = {
      id: c.id,
      what: c.what,
      fileBytes: bytes,
      seconds: Number(r.seconds.toFixed(3)),
      maxRssMiB: r.maxRssKiB === null ? null : Math.round(r.maxRssKiB / 1024),
      status: r.status,
      errorLines: lines.length,
      error: (lines[0] ?? "").replace(dir, "<tmp>").slice(0, 300),
    };
    rows.push(row);
    console.log(
      `${c.id.padEnd(20)} ${(bytes / 1e6).toFixed(1).padStart(7)} MB  ${row.seconds.toFixed(2).padStart(6)} s  ${String(row.maxRssMiB).padStart(6)} MiB  exit ${row.status}  ${row.error.slice(0, 150)}`,
    );
    rmSync(path, { force: true });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (jsonFile !== undefined) writeFileSync(jsonFile, `${JSON.stringify({ rows }, null, 2)}\n`);
