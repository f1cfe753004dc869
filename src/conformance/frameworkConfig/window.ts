/**
 * How many rows one optimizer-step window of a resolved config holds, where its settings say
 * (docs/conformance/explain.md#evaluation): a batch file of another row count is evaluated as
 * given, and the explanation says it is not one window of the configured sizes. Browser-safe.
 */
import type { FrameworkResolution } from "./resolution.js";

/** The window's row count and the arithmetic behind it, or null where the settings do not fix it. */
export function windowRows(res: FrameworkResolution): { rows: number; how: string } | null {
  const get = (...keys: string[]) => {
    for (const k of keys) {
      const v = res.settings.find((s) => s.key === k)?.value;
      if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) return { key: k, v };
    }
    return null;
  };
  if (res.framework === "verl") {
    // verl's actor multiplies ppo_mini_batch_size (prompts) by rollout.n; one rank (dp 1).
    const mini = get("actor_rollout_ref.actor.ppo_mini_batch_size");
    const n = get("actor_rollout_ref.rollout.n");
    if (mini === null || n === null) return null;
    return {
      rows: mini.v * n.v,
      how: `ppo_mini_batch_size × rollout.n = ${mini.v} × ${n.v} (one mini-batch, dp 1)`,
    };
  }
  if (res.framework === "openrlhf") {
    const b = get("--train.batch_size", "--train_batch_size");
    if (b === null) return null;
    return { rows: b.v, how: `${b.key} = ${b.v} (one optimizer-step window, dp 1)` };
  }
  const per = get("per_device_train_batch_size");
  const spg = get("steps_per_generation");
  if (per === null || spg === null) return null;
  return {
    rows: per.v * spg.v,
    how: `per_device_train_batch_size × steps_per_generation = ${per.v} × ${spg.v} (one process's generation batch)`,
  };
}

/**
 * A note when a batch of `B` rows is not one window of the config's sizes, or null.
 *
 * @enforcedBy test/conformance/frameworkConfig/explain.test.ts > explainFrameworkConfig > golden: a batch that is not one optimizer-step window of the configured sizes says so
 */
export function windowNote(res: FrameworkResolution, B: number): string | null {
  const w = windowRows(res);
  if (w === null || w.rows === B) return null;
  return `the batch has B = ${B} rows, but one optimizer-step window of this config is ${w.how} = ${w.rows} rows: the loss is the one of a window of ${B} rows`;
}
