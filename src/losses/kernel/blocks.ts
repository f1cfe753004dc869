/**
 * Row blocks: the unit the policy-loss kernel runs on one thread (docs/performance.md#threads).
 * A block is a contiguous range of rows; rows are independent (every per-token quantity and every
 * sequence-level one lives inside its row), so how the rows are split changes no output bit. The
 * reductions are not split: the calling thread adds the rows' terms afterwards in row-major order
 * (accumulateRow), exactly as the single-threaded pass does.
 *
 * This module is pure (no `node:` import): the browser build runs blocks on its one thread, and the
 * Node entry registers a worker-thread runner (src/node/threadPool.ts) through
 * {@link setRowBlockRunner}.
 */
import type { ResolvedPolicyLossConfig } from "../config.js";
import { outputs, type PolicyOutputs } from "./outputs.js";
import { surrogateParams, surrogatePoint } from "./points.js";
import {
  type ISRows,
  klPlan,
  type PolicyPlan,
  processRow,
  ROW_OK,
  RowScratch,
} from "./policyRows.js";

/** Slots per block in the events array: ev, at, mz, p, ell, klAt, klValue, klDelta, gradAt. */
export const EVENT_SLOTS = 9;
/** Event code of a block whose runner failed (a worker error): the caller reruns it. */
export const BLOCK_FAILED = -1;

/**
 * A job as worker threads receive it: the plan's arrays and the outputs (every array a view of the
 * shared arena), the resolved config to rebuild the point function from, and the call's blocks
 * and events.
 */
export interface SharedPlan
  extends Pick<
      PolicyPlan,
      | "B"
      | "T"
      | "m"
      | "first"
      | "end"
      | "L"
      | "lp"
      | "old"
      | "advRow"
      | "advTok"
      | "rollout"
      | "ref"
      | "w"
      | "ent"
      | "entThreshold"
    >,
    PolicyOutputs {
  readonly cfg: ResolvedPolicyLossConfig;
  readonly klW: Float64Array | null;
  /** The KL terms of every position (`[B, T]`), for the caller's sum; empty without KL. */
  readonly k: Float64Array;
  /** Block boundaries: block j is rows [blocks[j], blocks[j + 1]). */
  readonly blocks: Int32Array;
  /** EVENT_SLOTS per block. */
  readonly events: Float64Array;
}

/** The kernel plan of a shared plan (the point function rebuilt from the config). @internal */
export function planOf(s: SharedPlan): PolicyPlan {
  return {
    B: s.B,
    T: s.T,
    m: s.m,
    first: s.first,
    end: s.end,
    L: s.L,
    lp: s.lp,
    old: s.old,
    advRow: s.advRow,
    advTok: s.advTok,
    rollout: s.rollout,
    ref: s.ref,
    ratio: s.cfg.ratio,
    sur: surrogatePoint(s.cfg),
    params: surrogateParams(s.cfg),
    w: s.w,
    tis: s.cfg.isCorrection,
    // Calls whose IS weights are formed before rejection run on one thread (policyLoss.ts).
    isRows: null,
    kl: s.cfg.kl === null || s.klW === null ? null : klPlan(s.cfg.kl, s.klW),
    rclamp: s.cfg.ratioClamp,
    vespo: s.cfg.vespo,
    opsm:
      s.cfg.offPolicyMask === null
        ? null
        : {
            threshold: s.cfg.offPolicyMask.threshold,
            sampling:
              s.cfg.offPolicyMask.sampling === "rollout" ? (s.rollout as Float64Array) : s.old,
          },
    ent: s.ent,
    entThreshold: s.entThreshold,
    entMask: s.cfg.topEntropyQuantile !== null,
  };
}

/**
 * The plan of rows [b0, b1) alone, every array a view (or, for the spans, a shifted copy) whose
 * index 0 is row b0's first position: run on outputs of (b1 − b0)·T positions, a row gives the
 * bits it gives in the whole plan (rows are independent; the aggregation weights are the whole
 * batch's). Built with the key order of planPolicyLoss's plan, so both share one hidden class.
 * @internal
 */
export function rowsOf(plan: PolicyPlan, b0: number, b1: number): PolicyPlan {
  const { T } = plan;
  const lo = b0 * T;
  const hi = b1 * T;
  const first = new Int32Array(b1 - b0);
  const end = new Int32Array(b1 - b0);
  for (let b = b0; b < b1; b++) {
    first[b - b0] = (plan.first[b] as number) - lo;
    end[b - b0] = (plan.end[b] as number) - lo;
  }
  const view = (x: Float64Array | null): Float64Array | null =>
    x === null ? null : x.subarray(lo, hi);
  return {
    B: b1 - b0,
    T,
    m: plan.m.subarray(lo, hi),
    first,
    end,
    L: plan.L.subarray(b0, b1),
    lp: plan.lp.subarray(lo, hi),
    old: plan.old.subarray(lo, hi),
    advRow: plan.advRow === null ? null : plan.advRow.subarray(b0, b1),
    advTok: view(plan.advTok),
    rollout: view(plan.rollout),
    ref: view(plan.ref),
    ratio: plan.ratio,
    sur: plan.sur,
    params: plan.params,
    w: plan.w.subarray(b0, b1),
    tis: plan.tis,
    isRows: plan.isRows === null ? null : isRowsOf(plan.isRows, lo, hi, b0, b1),
    kl: plan.kl === null ? null : klPlan(plan.kl, plan.kl.w.subarray(b0, b1)),
    rclamp: plan.rclamp,
    vespo: plan.vespo,
    opsm:
      plan.opsm === null
        ? null
        : { threshold: plan.opsm.threshold, sampling: plan.opsm.sampling.subarray(lo, hi) },
    ent: view(plan.ent),
    entThreshold: plan.entThreshold,
    entMask: plan.entMask,
  };
}

/** Rows [b0, b1) of the rows IS weights are formed on, as rowsOf takes the plan's own. */
function isRowsOf(g: ISRows, lo: number, hi: number, b0: number, b1: number): ISRows {
  const first = new Int32Array(b1 - b0);
  const end = new Int32Array(b1 - b0);
  for (let b = b0; b < b1; b++) {
    first[b - b0] = (g.first[b] as number) - lo;
    end[b - b0] = (g.end[b] as number) - lo;
  }
  return { m: g.m.subarray(lo, hi), first, end, L: g.L.subarray(b0, b1) };
}

/** The outputs of a shared plan. @internal */
export function outputsOf(s: SharedPlan): PolicyOutputs {
  return outputs(s.grad, s.objective, s.ratio, s.low, s.high, s.fresh);
}

/**
 * Run block j's rows, writing its events (the first stopping event, or the first KL and gradient
 * overflows) into `events[j·EVENT_SLOTS …]`. Stops at a row's stopping event. Row b's KL terms go
 * to `k[b·kStride + t]`: kStride = T for a `[B, T]` array (threads), 0 for one row's scratch that
 * `onRow(b)` consumes right after the row (the one-thread path, which sums while the row is in
 * cache). @internal
 */
export function runBlock(
  plan: PolicyPlan,
  out: PolicyOutputs,
  k: Float64Array,
  kStride: number,
  blocks: Int32Array,
  events: Float64Array,
  j: number,
  onRow?: (b: number) => void,
): void {
  const sc = new RowScratch(plan.T);
  const e = j * EVENT_SLOTS;
  let klAt = -1;
  let klValue = 0;
  let klDelta = 0;
  let gradAt = -1;
  let ev = ROW_OK;
  const b1 = blocks[j + 1] as number;
  for (let b = blocks[j] as number; b < b1; b++) {
    ev = processRow(plan, out, b, sc, k, b * kStride);
    if (ev !== ROW_OK) break;
    if (sc.klAt >= 0 && klAt < 0) {
      klAt = sc.klAt;
      klValue = sc.klValue;
      klDelta = sc.klDelta;
    }
    if (sc.gradAt >= 0 && gradAt < 0) gradAt = sc.gradAt;
    onRow?.(b);
  }
  events[e] = ev;
  events[e + 1] = sc.at;
  events[e + 2] = sc.mz;
  events[e + 3] = sc.p;
  events[e + 4] = sc.ell;
  events[e + 5] = klAt;
  events[e + 6] = klValue;
  events[e + 7] = klDelta;
  events[e + 8] = gradAt;
}

/**
 * Split B rows into `n` contiguous blocks of about equal response-token counts (the work). Returns
 * the n + 1 boundaries. Any split gives the same outputs; this one balances the threads. @internal
 */
export function splitRows(L: Int32Array, n: number): Int32Array {
  const B = L.length;
  const blocks = new Int32Array(n + 1);
  let total = 0;
  for (let b = 0; b < B; b++) total += L[b] as number;
  let acc = 0;
  let j = 1;
  for (let b = 0; b < B && j < n; b++) {
    acc += L[b] as number;
    while (j < n && acc >= (total * j) / n) blocks[j++] = b + 1;
  }
  while (j < n) blocks[j++] = B;
  blocks[n] = B;
  return blocks;
}

/**
 * Runs blocks on other threads. `run` starts blocks 1 … n−1 of `job` elsewhere, calls `own()` (which
 * runs block 0 on the calling thread), and returns once every block has written its events (a
 * block it could not run is marked {@link BLOCK_FAILED}). @internal
 */
export interface RowBlockRunner {
  /** Threads the machine offers (the calling one included). */
  readonly cores: number;
  run(job: SharedPlan, own: () => void): void;
}

let runner: RowBlockRunner | null = null;

/** Register the runner of worker threads (the Node entry does; the browser has none). @internal */
export function setRowBlockRunner(r: RowBlockRunner | null): void {
  runner = r;
}

/** The registered runner, or null. @internal */
export function rowBlockRunner(): RowBlockRunner | null {
  return runner;
}
