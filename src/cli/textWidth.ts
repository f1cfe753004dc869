/**
 * Text output that fits a terminal (docs/cli.md#width): every line of a command's text output is
 * at most `width` columns, 100 by default (a terminal's own width when stdout is one), `--wide`
 * for none. A longer line is wrapped at its last space that fits, its continuation indented two
 * columns past the line's own indent; a single word longer than that is cut. Tables that would
 * not fit are summarised by their renderers first (which, loss), so that this is the last resort
 * for prose. Columns are counted as UTF-16 code units outside ANSI escapes (the output has none).
 * @internal
 */

/** The default width of text output when stdout is not a terminal. */
export const DEFAULT_TEXT_WIDTH = 100;

/** The narrowest width text is fitted to (a smaller terminal gets this). */
export const MIN_TEXT_WIDTH = 40;

/** The width text output is fitted to: the terminal's columns, else 100; at least 40. @internal */
export function textWidth(columns: number | undefined): number {
  const c = columns !== undefined && Number.isFinite(columns) && columns > 0 ? columns : undefined;
  return Math.max(MIN_TEXT_WIDTH, Math.floor(c ?? DEFAULT_TEXT_WIDTH));
}

/** Wrap one line to `width` columns (see the module's comment). */
function fitLine(line: string, width: number, extra: number): string[] {
  if (line.length <= width) return [line];
  const indent = /^ */.exec(line)?.[0].length ?? 0;
  const hang = " ".repeat(Math.min(indent + extra, Math.floor(width / 2)));
  const out: string[] = [];
  let rest = line;
  let lead = "";
  while (lead.length + rest.length > width) {
    const room = width - lead.length;
    // The last space that leaves a non-empty head within the room.
    let cut = rest.lastIndexOf(" ", room);
    while (cut > 0 && rest[cut - 1] === " ") cut--;
    const head =
      cut > 0 && rest.slice(0, cut).trim() !== "" ? rest.slice(0, cut) : rest.slice(0, room);
    out.push(lead + head.trimEnd());
    rest = rest.slice(head.length).replace(/^ +/, "");
    lead = hang;
    if (rest === "") break;
  }
  if (rest !== "" || out.length === 0) out.push(lead + rest);
  return out;
}

/**
 * Fit text to `width` columns: each line as in the module's comment, its continuation lines
 * indented `hang` columns past it (2; a help text's description: 0); newlines kept (a text
 * without a final newline gets none).
 * @internal
 */
export function fitText(text: string, width: number, hang = 2): string {
  if (!Number.isFinite(width)) return text;
  const lines = text.split("\n");
  let long = false;
  for (const l of lines) if (l.length > width) long = true;
  if (!long) return text;
  return lines.flatMap((l) => fitLine(l, width, hang)).join("\n");
}
