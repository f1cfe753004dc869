/**
 * Give the pure core Node's native helpers in this process: the zip reader's CRC-32 becomes
 * zlib.crc32 (the same function, about 6× the JavaScript loop; docs/performance.md#reading-runs).
 * Imported for its effect by ./registerThreads.ts (the root entry and the CLI) and by the run
 * workers (./runWorker.ts), which read step files too. Node only.
 */
import { crc32 } from "node:zlib";
import { setCrc32 } from "../io/_internal/zip.js";

setCrc32((bytes) => crc32(bytes));
