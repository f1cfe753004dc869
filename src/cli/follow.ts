/**
 * The loop `diagnose --follow` runs on a run folder and on metric logs alike
 * (docs/diagnostics/run.md#following-a-run): its poll interval, and the poll, print, sleep loop
 * that ends on Ctrl-C, SIGTERM or --until-step.
 * @internal
 */
import { fail, UsageError } from "../errors.js";
import type { CommandIO, OptionValues } from "./command.js";
import { intOption } from "./output.js";

/** The seconds between polls of --follow: a number in (0, 3600]. @internal */
export function pollSeconds(fn: string, values: OptionValues): number {
  const seconds = values.poll === undefined ? 2 : Number(values.poll);
  if (!(seconds > 0 && seconds <= 3600))
    throw fail(
      UsageError,
      fn,
      "--poll",
      "a number of seconds in (0, 3600]",
      JSON.stringify(values.poll),
    );
  return seconds;
}

/**
 * The loop of --follow (docs/diagnostics/run.md#following-a-run): poll, print each new alarm once
 * (text: on stdout; --json: on stderr, the document at the end), sleep `seconds`, until Ctrl-C,
 * SIGTERM or --until-step; after a signal one last poll reads what was written before it.
 * @internal
 */
export async function followLoop(
  fn: string,
  values: OptionValues,
  io: CommandIO,
  seconds: number,
  poll: () => {
    readonly newAlarms: readonly import("../diagnostics/diagnoseBatch.js").Alarm[];
    readonly lastStep: number | null;
  },
): Promise<void> {
  const until = intOption(values, "until-step", "diagnose", 0);
  // An alarm as it first fires: on stdout, or beside a --json document on stderr.
  const say = (
    alarms: readonly import("../diagnostics/diagnoseBatch.js").Alarm[],
    last: number | null,
  ) => {
    for (const a of alarms) {
      const line = `step ${a.step ?? last}: [${a.code}] ${a.message}\n`;
      if (values.json) io.stderr(`${fn}: ${line}`);
      else io.stdout(line);
    }
  };
  let stop = false;
  let wake: (() => void) | null = null;
  const onSignal = () => {
    stop = true;
    wake?.();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    for (;;) {
      const u = poll();
      say(u.newAlarms, u.lastStep);
      if (stop || (until !== undefined && u.lastStep !== null && u.lastStep >= until)) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, seconds * 1000);
      });
      wake = null;
      if (stop) {
        // One last read: what was written before the signal is part of the summary.
        const last = poll();
        say(last.newAlarms, last.lastStep);
        break;
      }
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
