/**
 * The segment normalisation rule of the drift check: strip trailing whitespace from every line,
 * change nothing else, join with `\n`. Comments, docstrings, blank lines and indentation all
 * count; a change that only adds or removes trailing blanks does not.
 */
import { createHash } from "node:crypto";

/** Strip trailing whitespace (spaces, tabs, form feeds, vertical tabs, CR) from each line. */
export function normaliseLines(lines: readonly string[]): string {
  return lines.map((l) => l.replace(/[ \t\f\v\r]+$/, "")).join("\n");
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Text(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Lowercase hex SHA-256 of raw bytes (a pinned file, hashed as stored). */
export function sha256Bytes(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Split a source into lines on `\n` (a CR of a CRLF stays and is stripped as trailing whitespace). */
export function sourceLines(source: string): string[] {
  return source.split("\n");
}
