/**
 * The worker thread of the run-diagnosis pool (./runPool.ts): collects one shard (a step range)
 * of a run folder with the library's own collection (collectRunShard) and posts the RunSteps back
 * on its port.
 * Node only.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { collectRunShard } from "../diagnostics/diagnoseRun.js";
import "./registerNative.js";
import { setRunPrefetcher } from "../diagnostics/runThreads.js";
import { runPrefetch } from "./runPrefetch.js";
import { announceThread } from "./threadLife.js";

// Each shard reads its own step files ahead, as the calling thread's shard does.
setRunPrefetcher(runPrefetch);

const { ctl, port, life } = workerData as {
  ctl: Int32Array;
  port: MessagePort;
  life?: Int32Array;
};
// The pool sees at once if this thread dies (out of memory): ./threadLife.ts.
announceThread(life);

parentPort?.on(
  "message",
  (msg: { dir: string; options: Record<string, unknown>; progress: Int32Array }) => {
    let reply: { ok: unknown } | { error: string };
    try {
      // A step this thread has no memory for fails the shard: the caller collects it.
      const part = collectRunShard(msg.dir, msg.options, () => {
        Atomics.add(msg.progress, 0, 1);
      });
      reply = { ok: part };
    } catch (e) {
      // The caller collects the range itself, so the error (if any) comes from the calling thread.
      reply = { error: e instanceof Error ? e.message : String(e) };
    }
    port.postMessage(reply);
    Atomics.add(ctl, 0, 1);
    Atomics.notify(ctl, 0);
  },
);

Atomics.add(ctl, 1, 1);
Atomics.notify(ctl, 1);
