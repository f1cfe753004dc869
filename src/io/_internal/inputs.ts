/**
 * The files and folders a command reads, so that nothing it writes lands on one of them
 * (docs/cli.md#writing-files). Off by default: a library caller may read a file and write it back
 * on purpose; the CLI turns it on for the whole process (guardInputs). Readers record every file
 * they open (noteInput, from openForRead) and every folder they read as a run (noteInputDir); the
 * writer asks {@link inputClash} before it creates anything.
 * @internal
 */
import { realpathSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join, sep } from "node:path";

interface InputFile {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

interface InputDir {
  readonly path: string;
  readonly real: string;
}

let guarding = false;
const files: InputFile[] = [];
const dirs: InputDir[] = [];

/** Record what this process reads from now on, and refuse writes onto it. @internal */
export function guardInputs(on = true): void {
  guarding = on;
  if (!on) {
    files.length = 0;
    dirs.length = 0;
  }
}

/** Record a file read (its stats taken on the open descriptor). @internal */
export function noteInput(path: string, st: Stats): void {
  if (!guarding || files.some((f) => f.dev === st.dev && f.ino === st.ino)) return;
  files.push({ path, dev: st.dev, ino: st.ino });
}

/** The real path of `p`, or null when it cannot be resolved. */
function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** Record a folder read as a whole (a run folder): nothing may be written inside it. @internal */
export function noteInputDir(path: string): void {
  if (!guarding) return;
  const r = real(path);
  if (r !== null && !dirs.some((d) => d.real === r)) dirs.push({ path, real: r });
}

/** The real path `path` would have: its folder's real path joined to its name. */
export function realTarget(path: string): string | null {
  const r = real(path);
  if (r !== null) return r;
  const d = real(dirname(path));
  return d === null ? null : join(d, basename(path));
}

/**
 * What an output at `path` would clash with: an input file (the same device and inode, or the
 * same real path) or a folder read as a run that holds it; null when none. @internal
 */
export function inputClash(path: string): string | null {
  if (!guarding) return null;
  let st: Stats | undefined;
  try {
    st = statSync(path);
  } catch {
    st = undefined;
  }
  if (st !== undefined) {
    const f = files.find((x) => x.dev === st.dev && x.ino === st.ino);
    if (f !== undefined) return `the input file ${f.path}`;
  }
  const target = realTarget(path);
  if (target === null) return null;
  for (const d of dirs) {
    if (target === d.real || target.startsWith(d.real.endsWith(sep) ? d.real : d.real + sep))
      return `the folder ${d.path} being read`;
  }
  return null;
}
