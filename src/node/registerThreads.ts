/**
 * Give policyLoss its worker threads (./threadPool.ts) in this process: imported for its effect by
 * the root entry (src/index.ts) and by the CLI's `loss` command. Node only; the pure core never
 * imports it (a browser build runs every row block on its one thread).
 */
import { setRowBlockRunner } from "../losses/kernel/blocks.js";
import { threadPool } from "./threadPool.js";

setRowBlockRunner(threadPool);
