/**
 * The worker of the run read-ahead (./runPrefetch.ts): reads each path (a file, or the files of a
 * step folder) to its end into a scratch buffer that is discarded, staying at most LEAD_BYTES
 * ahead of the collection, until the paths run out or the collection says stop. Every error
 * (a missing or unreadable file) is the collection's to report; here it only ends that path.
 * Node only.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { workerData } from "node:worker_threads";
import { fsPath, readdirNames } from "../platform/fsPath.js";

const { paths, ctl, counter } = workerData as {
  paths: string[];
  ctl: Int32Array;
  counter: Int32Array;
};
/** How far ahead of the collection the reads may run, in bytes (page cache, not memory held). */
const LEAD_BYTES = 256 * 2 ** 20;
const buf = new Uint8Array(2 ** 20);

/** Read one file to its end; its size (0 when it cannot be read). */
function warmFile(path: string): number {
  let fd = -1;
  try {
    fd = openSync(fsPath(path), "r");
    const size = fstatSync(fd).size;
    while (Atomics.load(ctl, 1) === 0 && readSync(fd, buf, 0, buf.length, null) > 0);
    return size;
  } catch {
    return 0;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** Read a path: a file, or each file of a step folder. */
function warm(path: string): number {
  try {
    if (!statSync(fsPath(path)).isDirectory()) return warmFile(path);
    let n = 0;
    for (const f of readdirNames(path).sort()) n += warmFile(join(path, f));
    return n;
  } catch {
    return 0;
  }
}

const sizes: number[] = [];
let ahead = 0; // bytes of the paths read and not yet done with
let done = 0;
for (let k = 0; k < paths.length; k++) {
  for (;;) {
    if (Atomics.load(ctl, 1) !== 0) break;
    const d = Atomics.load(ctl, 0);
    while (done < d && done < sizes.length) ahead -= sizes[done++] as number;
    if (k <= d || ahead <= LEAD_BYTES) break;
    Atomics.wait(ctl, 0, d, 100);
  }
  if (Atomics.load(ctl, 1) !== 0) break;
  const n = warm(paths[k] as string);
  sizes.push(n);
  ahead += n;
  Atomics.add(ctl, 2, 1);
  Atomics.add(counter, 0, 1);
}
