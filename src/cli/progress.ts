/** A one-line progress bar on a terminal's stderr; silent when stderr is not a TTY. */
import type { CommandIO } from "./command.js";

/**
 * Return an `(done, total)` callback drawing `label [#####.....] done/total` in place, and a
 * `finish()` that clears the line; both do nothing unless `enabled`.
 */
export function progressBar(
  io: CommandIO,
  label: string,
  enabled: boolean,
): { tick: (done: number, total: number) => void; finish: () => void } {
  if (!enabled) return { tick: () => {}, finish: () => {} };
  let lastDrawn = -1;
  return {
    tick: (done, total) => {
      const filled = Math.round((30 * done) / total);
      if (filled === lastDrawn && done !== total) return;
      lastDrawn = filled;
      io.stderr(`\r${label} [${"#".repeat(filled)}${".".repeat(30 - filled)}] ${done}/${total}`);
    },
    finish: () => io.stderr(`\r${" ".repeat(label.length + 50)}\r`),
  };
}
