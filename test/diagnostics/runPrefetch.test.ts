/**
 * Enforces docs/diagnostics/run.md#read-ahead: the read-ahead of a run's step files changes no
 * number of the report, reads the files on its own thread, and never keeps a process alive.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { writeDemoRun } from "../../src/demo/demoRun.js";
import { diagnoseRun } from "../../src/diagnostics/diagnoseRun.js";
import { runPrefetcher, setRunPrefetcher } from "../../src/diagnostics/runThreads.js";
import { runPrefetch } from "../../src/node/runPrefetch.js";
import "../../src/node/registerThreads.js";
import { useTmpDir } from "../io/_kit.js";

const tmp = useTmpDir();

describe("run read-ahead", () => {
  test("identity: a run diagnosed with the read-ahead equals the run diagnosed without it, and the read-ahead read the step files", () => {
    const dir = tmp("ahead");
    writeDemoRun(dir, { steps: 80, batchSize: 6, width: 16 });
    expect(runPrefetcher()).toBe(runPrefetch);
    const before = runPrefetch.pathsRead;
    // The worker starts in the background: the first step's callback waits (at most 10 s) until
    // it has read a file, so a loaded machine cannot finish the run before the worker starts.
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const withAhead = diagnoseRun(dir, { threads: 1 }, (done) => {
      for (let i = 0; done === 1 && i < 500 && runPrefetch.pathsRead === before; i++)
        Atomics.wait(pause, 0, 0, 20);
    });
    expect(runPrefetch.pathsRead).toBeGreaterThan(before);
    setRunPrefetcher(null);
    try {
      expect(diagnoseRun(dir, { threads: 1 })).toEqual(withAhead);
    } finally {
      setRunPrefetcher(runPrefetch);
    }
  });

  test("regression: a process that diagnoses a run, or whose progress callback throws mid-run, exits without waiting for the read-ahead", () => {
    const dir = tmp("exit");
    writeDemoRun(dir, { steps: 64, batchSize: 4, width: 8 });
    const entry = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
    const script = (body: string) =>
      spawnSync(
        process.execPath,
        ["--input-type=module", "-e", `import * as pg from ${JSON.stringify(entry)};\n${body}`],
        {
          encoding: "utf8",
          timeout: 60_000,
        },
      );
    const ok = script(
      `const d = pg.diagnoseRun(${JSON.stringify(dir)}, { threads: 1 }); console.log(d.steps.length);`,
    );
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe("64");
    const thrown = script(
      `try { pg.diagnoseRun(${JSON.stringify(dir)}, { threads: 1 }, (k) => { if (k === 3) throw new Error("stop here"); }); } catch (e) { console.log(e.message); }`,
    );
    expect(thrown.status, thrown.stderr).toBe(0);
    expect(thrown.stdout.trim()).toBe("stop here");
  });
});
