/**
 * The end of every `polgrad diagnose` of a run, from dumps or from logs: the HTML report when
 * --html asks for it (its line on stdout, or beside a --json document a notice on stderr), then
 * the --json document or the text, and the exit code (1 iff an alarm fired).
 * @internal
 */
import type { Alarm } from "../../diagnostics/diagnoseBatch.js";
import type { CommandIO, OptionValues } from "../command.js";
import { writeJson } from "../output.js";

/** Write `d` as --html, --json or text; return 1 iff it holds an alarm. @internal */
export async function finishDiagnosis<D extends { readonly alarms: readonly Alarm[] }>(
  fn: string,
  values: OptionValues,
  io: CommandIO,
  d: D,
  o: {
    /** Write the HTML report to `path`, saying so with `say`. */
    readonly html: (path: string, say: (text: string) => void) => Promise<void>;
    /** The text report. */
    readonly text: () => Promise<string>;
  },
): Promise<number> {
  if (typeof values.html === "string") {
    const notice = io.notice ?? io.stderr;
    await o.html(values.html, values.json ? (t) => notice(`${fn}: ${t}`) : io.stdout);
  }
  if (values.json) writeJson(io, "diagnose", d, d.alarms.length === 0);
  else io.stdout(await o.text());
  return d.alarms.length > 0 ? 1 : 0;
}
