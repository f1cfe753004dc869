/**
 * The files a command reads, so that nothing it writes lands on one of them
 * (docs/cli.md#writing-files). Off by default: a library caller may read a file and write it back
 * on purpose; the CLI turns it on while a command runs (guardInputs). Readers record every file
 * they open (noteInput, from openForRead); the writer asks {@link inputClash} before it creates
 * anything. Folders a command reads (a run) are checked before it starts, from its arguments
 * (src/cli/paths.ts).
 * @internal
 */
import { realpathSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { decodeFsName, fsPath } from "../../platform/fsPath.js";

interface InputFile {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

let guarding = false;
const files: InputFile[] = [];

/** Record what this process reads from now on, and refuse writes onto it. @internal */
export function guardInputs(on = true): void {
  guarding = on;
  if (!on) files.length = 0;
}

/** Record a file read (its stats taken on the open descriptor). @internal */
export function noteInput(path: string, st: Stats): void {
  if (!guarding || files.some((f) => f.dev === st.dev && f.ino === st.ino)) return;
  files.push({ path, dev: st.dev, ino: st.ino });
}

/** The real path of `p`, or null when it cannot be resolved. */
function real(p: string): string | null {
  try {
    return decodeFsName(realpathSync(fsPath(p), { encoding: "buffer" }));
  } catch {
    return null;
  }
}

/** The real path `path` would have: its folder's real path joined to its name. */
export function realTarget(path: string): string | null {
  const r = real(path);
  if (r !== null) return r;
  const d = real(dirname(path));
  return d === null ? null : join(d, basename(path));
}

/**
 * What an output at `path` would clash with: an input file (the same device and inode); null when
 * none. @internal
 */
export function inputClash(path: string): string | null {
  if (!guarding) return null;
  let st: Stats;
  try {
    st = statSync(fsPath(path));
  } catch {
    return null;
  }
  const f = files.find((x) => x.dev === st.dev && x.ino === st.ino);
  return f === undefined ? null : `the input file ${f.path}`;
}
