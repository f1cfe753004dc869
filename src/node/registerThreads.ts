/**
 * Give policyLoss (./threadPool.ts) and diagnoseRun (./runPool.ts, and its read-ahead
 * ./runPrefetch.ts) their worker threads in this process: imported for its effect by the root entry (src/index.ts) and by the CLI's `loss` and
 * `diagnose` commands. Node only; the pure core never imports it (a browser build runs on its one
 * thread).
 */
import { setRunPrefetcher, setRunShardRunner } from "../diagnostics/runThreads.js";
import { setRowBlockRunner } from "../losses/kernel/blocks.js";
import "./registerNative.js";
import { runPool } from "./runPool.js";
import { runPrefetch } from "./runPrefetch.js";
import { threadPool } from "./threadPool.js";

setRowBlockRunner(threadPool);
setRunShardRunner(runPool);
setRunPrefetcher(runPrefetch);
