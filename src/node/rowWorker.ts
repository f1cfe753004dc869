/**
 * The worker thread of the policy-loss thread pool (./threadPool.ts): it waits for jobs, runs its
 * row block with the same kernel code the calling thread runs (src/losses/kernel/blocks.ts), and
 * signals completion through the shared control array. Node only.
 */
import { parentPort, workerData } from "node:worker_threads";
import {
  BLOCK_FAILED,
  EVENT_SLOTS,
  outputsOf,
  planOf,
  runBlock,
  type SharedPlan,
} from "../losses/kernel/blocks.js";
import { announceThread } from "./threadLife.js";

const { ctl, life } = workerData as { ctl: Int32Array; life?: Int32Array };
// The pool sees at once if this thread dies (./threadLife.ts).
announceThread(life);

parentPort?.on("message", (msg: { job: SharedPlan; block: number }) => {
  const { job, block } = msg;
  try {
    runBlock(planOf(job), outputsOf(job), job.k, job.T, job.blocks, job.events, block);
  } catch {
    // A bug, not a user error (inputs were validated): the caller reruns the block itself.
    job.events[block * EVENT_SLOTS] = BLOCK_FAILED;
  } finally {
    Atomics.add(ctl, 0, 1);
    Atomics.notify(ctl, 0);
  }
});

// Ready: the module graph is loaded and the listener is installed.
Atomics.add(ctl, 1, 1);
Atomics.notify(ctl, 1);
