/**
 * A path's extension, apart from the reader registry (./readers.ts) so that a reader of one format
 * (src/io/readSafetensors.ts's row reader) can test it without loading every reader.
 * @internal
 */

/** The lower-cased extension of a path as node's `extname` gives it (`""` for `.json` alone). */
export function extensionOf(path: string): string {
  const base = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot).toLowerCase() : "";
}
