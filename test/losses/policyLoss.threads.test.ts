/**
 * Enforces policyLoss's worker threads (docs/performance.md#threads): every thread count gives
 * bitwise the single-threaded result, and the same error, on random batches; the workers are
 * really used; caller-provided shared buffers are written in place; the CLI's --threads.
 * The workers run the built kernel (dist/node/rowWorker.js: Node 20 workers do not load
 * TypeScript), which `npm test` builds first.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAlgorithm, type PolicyLossConfig, policyLoss } from "../../src/index.js";
import {
  BLOCK_FAILED,
  EVENT_SLOTS,
  rowBlockRunner,
  setRowBlockRunner,
} from "../../src/losses/kernel/blocks.js";
import { setThreadMinPositions } from "../../src/losses/policyLoss.js";
import { threadPool } from "../../src/node/threadPool.js";
import { WorkerSet } from "../../src/node/workerSet.js";
import { FC_PARAMS, IS_VARIANTS } from "../_kit/index.js";
import { expectSame, outcome, policyBatches } from "../_kit/policyBatches.js";
import { runMain } from "../cli/_run.js";

// The kit's batches are tiny: every call here may use its threads (policyLoss otherwise gives a
// thread no fewer than 2^20 positions; its own test below restores that).
let minPositions = 0;
beforeAll(() => {
  const worker = new URL("../../dist/node/rowWorker.js", import.meta.url);
  if (!existsSync(worker))
    throw new Error(`build first (npm run build): ${worker.pathname} is missing`);
  minPositions = setThreadMinPositions(1);
});
afterAll(() => {
  setThreadMinPositions(minPositions);
});

/** A full B×T batch (every position a response token) of smooth log-probabilities. */
function fullBatch(B: number, T: number) {
  const n = B * T;
  const matrix = (data: Float64Array | Uint8Array) => ({ rows: B, cols: T, data });
  return {
    logprobs: matrix(Float64Array.from({ length: n }, (_, i) => -1 - 0.5 * Math.sin(i))),
    oldLogprobs: matrix(Float64Array.from({ length: n }, (_, i) => -1 - 0.5 * Math.cos(i))),
    advantages: Float64Array.from({ length: B }, (_, b) => (b % 2 === 0 ? 1 : -1)),
    responseMask: matrix(new Uint8Array(n).fill(1)),
  };
}

describe("policyLoss threads", () => {
  it("identity: 2, 3 and 5 threads give bitwise the one-thread outputs and errors, and the workers ran", () => {
    const before = threadPool.workerBlocks;
    fc.assert(
      fc.property(policyBatches, fc.constantFrom(2, 3, 5), ({ config, inputs }, threads) => {
        const one = outcome(() => policyLoss(config, inputs, { threads: 1 }));
        const many = outcome(() => policyLoss(config, inputs, { threads }));
        expectSame(many, one, `${JSON.stringify(config)} threads ${threads}`);
      }),
      { ...FC_PARAMS, numRuns: FC_PARAMS.numRuns * 3 },
    );
    expect(threadPool.workerBlocks).toBeGreaterThan(before);
  });

  it("identity: the generalised IS weights (batch normalisation included) and a global context give the one-thread bits on 2 and 3 threads", () => {
    const before = threadPool.workerBlocks;
    fc.assert(
      fc.property(
        policyBatches,
        fc.constantFrom(...IS_VARIANTS),
        fc.constantFrom(2, 3),
        fc.boolean(),
        ({ config, inputs, B, T }, isCorrection, threads, withGlobal) => {
          const c = { ...config, isCorrection };
          const rolloutLogprobs =
            inputs.rolloutLogprobs ??
            ({ rows: B, cols: T, data: new Float64Array(B * T).fill(-1) } as const);
          const x = { ...inputs, rolloutLogprobs };
          const global = withGlobal ? { global: { tokens: 10 * B * T, dpSize: 3 } } : {};
          const one = outcome(() => policyLoss(c, x, { threads: 1, ...global }));
          const many = outcome(() => policyLoss(c, x, { threads, ...global }));
          expectSame(many, one, `${JSON.stringify(c)} threads ${threads}`);
        },
      ),
      FC_PARAMS,
    );
    expect(threadPool.workerBlocks).toBeGreaterThan(before);
  });

  it("identity: the newer surrogates, the ratio clamps and the off-policy mask give the one-thread bits on 2 and 3 threads", () => {
    const before = threadPool.workerBlocks;
    const forms: readonly Partial<PolicyLossConfig>[] = [
      {
        ratio: "token",
        surrogate: "sapo",
        clip: null,
        ratioClamp: { level: "token", lower: -20, upper: 20 },
      },
      { ratio: "token", surrogate: "dro", clip: null, dro: { beta: 0.1 } },
      {
        ratio: "token",
        surrogate: "dppo",
        clip: null,
        dppo: { divergence: "kl", low: 0.05, high: 0.1, truncation: 3 },
      },
      {
        ratio: "sequence",
        surrogate: "pg",
        clip: null,
        ratioClamp: { level: "token", lower: -0.3, upper: 0.3, signAware: true },
      },
      { ratio: "token", surrogate: "cispo", clip: null, cispo: { cap: 0.2 } },
      { ratio: "token", surrogate: "vespo", clip: null },
      { offPolicyMask: { threshold: 0.1, sampling: "rollout" } },
    ];
    fc.assert(
      fc.property(
        policyBatches,
        fc.constantFrom(...forms),
        fc.constantFrom(2, 3),
        ({ config, inputs, B, T }, form, threads) => {
          const c = { ...config, ...form, kl: null } as PolicyLossConfig;
          const rolloutLogprobs =
            inputs.rolloutLogprobs ??
            ({ rows: B, cols: T, data: new Float64Array(B * T).fill(-1) } as const);
          const x = { ...inputs, rolloutLogprobs };
          const one = outcome(() => policyLoss(c, x, { threads: 1 }));
          const many = outcome(() => policyLoss(c, x, { threads }));
          expectSame(many, one, `${JSON.stringify(c)} threads ${threads}`);
        },
      ),
      FC_PARAMS,
    );
    expect(threadPool.workerBlocks).toBeGreaterThan(before);
  });

  it("identity: shared caller buffers are written in place by every thread", () => {
    const B = 6;
    const T = 5;
    const n = B * T;
    const lp = Float64Array.from({ length: n }, (_, i) => -1 - 0.01 * i);
    const old = Float64Array.from({ length: n }, (_, i) => -1 - 0.013 * ((i * 7) % n));
    const mask = Uint8Array.from({ length: n }, (_, i) => (i % T <= i % 4 ? 1 : 0));
    const inputs = {
      logprobs: { rows: B, cols: T, data: lp },
      oldLogprobs: { rows: B, cols: T, data: old },
      advantages: Float64Array.of(1, -1, 0.5, -0.5, 2, -2),
      responseMask: { rows: B, cols: T, data: mask },
    };
    const shared = (k: number) => new Float64Array(new SharedArrayBuffer(8 * n * k));
    const out = {
      gradLogprobs: shared(1),
      perTokenObjective: shared(1),
      ratio: shared(1),
      clippedLow: new Uint8Array(new SharedArrayBuffer(n)),
      clippedHigh: new Uint8Array(new SharedArrayBuffer(n)),
    };
    const cfg = getAlgorithm("dapo").loss;
    const want = outcome(() => policyLoss(cfg, inputs, { threads: 1 }));
    const got = outcome(() => policyLoss(cfg, inputs, { threads: 3, out }));
    expectSame(got, want, "dapo");
    if ("ok" in got) expect(got.ok.gradLogprobs.data).toBe(out.gradLogprobs);
  });

  it("golden: threaded calls leave no memory behind in the workers (resident memory stays bounded)", () => {
    // 40 calls of 128×8192: each call's outputs are 27 MB; had the workers kept each call's
    // shared memory (as fresh SharedArrayBuffers per call did), 40 calls would hold > 1 GB.
    const inputs = fullBatch(128, 8192);
    const cfg = getAlgorithm("dapo").loss;
    policyLoss(cfg, inputs, { threads: 2 });
    const before = process.memoryUsage().rss;
    for (let k = 0; k < 40; k++) policyLoss(cfg, inputs, { threads: 2 });
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    expect(grown, `resident memory grew ${grown.toFixed(0)} MiB`).toBeLessThan(400);
  });

  it("golden: a sequence ratio with nothing per token beside the surrogate (GSPO) runs on one thread with fresh outputs, on the workers with out, and on the workers with a token ratio or a KL term (the same bits each way)", () => {
    const batch = fullBatch(8, 64);
    const inputs = { ...batch, refLogprobs: batch.oldLogprobs };
    const ran = (config: PolicyLossConfig, out?: Float64Array) => {
      const before = threadPool.workerBlocks;
      const opts =
        out === undefined
          ? { threads: 2 }
          : {
              threads: 2,
              out: {
                gradLogprobs: out,
                perTokenObjective: new Float64Array(512),
                ratio: new Float64Array(512),
                clippedLow: new Uint8Array(512),
                clippedHigh: new Uint8Array(512),
              },
            };
      const r = policyLoss(config, inputs, opts);
      expect(Object.is(r.loss, policyLoss(config, inputs, { threads: 1 }).loss)).toBe(true);
      return threadPool.workerBlocks > before;
    };
    const gspo = getAlgorithm("gspo").loss;
    expect(ran(gspo)).toBe(false);
    expect(ran(gspo, new Float64Array(512))).toBe(true);
    expect(ran({ ...gspo, kl: { kind: "k3", coef: 0.04 } })).toBe(true);
    expect(ran(getAlgorithm("dapo").loss)).toBe(true);
  });

  it("golden: a call runs on one thread below 2^20 positions per thread (the workers idle at 64×4096 with 2 threads, run at 256×8192), the same bits", () => {
    const was = setThreadMinPositions(2 ** 20);
    try {
      const cfg = getAlgorithm("dapo").loss;
      const ran = (B: number, T: number) => {
        const inputs = fullBatch(B, T);
        const before = threadPool.workerBlocks;
        const r = policyLoss(cfg, inputs, { threads: 2 });
        expect(Object.is(r.loss, policyLoss(cfg, inputs).loss)).toBe(true);
        return threadPool.workerBlocks > before;
      };
      expect(ran(64, 4096)).toBe(false);
      expect(ran(128, 8192)).toBe(false);
      expect(ran(256, 8192)).toBe(true);
    } finally {
      setThreadMinPositions(was);
    }
  }, 60_000);

  it("golden: 1,000 threaded calls stay bounded in memory (issue 36: two threads over 1,000 calls)", () => {
    // 1,000 calls of 32×4096 on two threads, half of them with fields: each call's outputs and
    // staged inputs are 3–6 MB, so memory kept per call (a leaked arena, worker-side copies)
    // would hold 3 GB or more after 1,000 calls; garbage of returned results is collectable.
    const inputs = fullBatch(32, 4096);
    const cfg = getAlgorithm("dapo").loss;
    const workers = threadPool.workerBlocks;
    for (let k = 0; k < 20; k++) policyLoss(cfg, inputs, { threads: 2 });
    const before = process.memoryUsage().rss;
    let loss = 0;
    for (let k = 0; k < 1000; k++) {
      loss =
        k % 2 === 0
          ? policyLoss(cfg, inputs, { threads: 2 }).loss
          : policyLoss(cfg, inputs, { threads: 2, fields: ["loss", "gradLogprobs"] }).loss;
    }
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    expect(grown, `resident memory grew ${grown.toFixed(0)} MiB over 1,000 calls`).toBeLessThan(
      300,
    );
    expect(Object.is(loss, policyLoss(cfg, inputs).loss)).toBe(true);
    // The threaded calls really ran blocks on the workers.
    expect(threadPool.workerBlocks).toBeGreaterThan(workers);
  }, 120_000);

  it("regression: the workers start in a process run as node --input-type=module -e (they inherit execArgv)", () => {
    const dist = new URL("../../dist/", import.meta.url).href;
    const script = `
      import { getAlgorithm, policyLoss } from "${dist}index.js";
      import { threadPool } from "${dist}node/threadPool.js";
      import { setThreadMinPositions } from "${dist}losses/policyLoss.js";
      setThreadMinPositions(1);
      const t0 = Date.now();
      policyLoss(getAlgorithm("dapo").loss, { logprobs: [[-1, -2], [-1, -1]], oldLogprobs: [[-1, -1], [-2, -1]], advantages: [1, -1], responseMask: [[1, 1], [1, 0]] }, { threads: 2 });
      console.log(JSON.stringify({ workerBlocks: threadPool.workerBlocks, ms: Date.now() - t0 }));
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { workerBlocks: number; ms: number };
    // A worker that cannot load leaves the pool waiting its 10 s start budget, then one thread.
    expect(out.workerBlocks).toBe(1);
    expect(out.ms).toBeLessThan(8000);
  });

  it("regression: blocks a pool could not run are rerun on the calling thread and kept (under a V8 flag they were left zero, the loss missing their rows)", () => {
    // The pool's own fallback, forced: every other block marked failed, block 0 run here. The
    // rerun wrote its block's event slot, which was then read as "ran on a worker", and the
    // arena's unwritten rows were copied over the rerun's (found by the streamed-loss fuzz target
    // in a child started with --max-old-space-size).
    const real = rowBlockRunner();
    setRowBlockRunner({
      cores: 8,
      run(job, own) {
        for (let j = 1; j < job.blocks.length - 1; j++) job.events[j * EVENT_SLOTS] = BLOCK_FAILED;
        own();
      },
    });
    try {
      fc.assert(
        fc.property(policyBatches, fc.constantFrom(2, 3, 5), ({ config, inputs }, threads) => {
          const one = outcome(() => policyLoss(config, inputs, { threads: 1 }));
          const many = outcome(() => policyLoss(config, inputs, { threads }));
          expectSame(many, one, `${JSON.stringify(config)} threads ${threads}`);
        }),
        FC_PARAMS,
      );
    } finally {
      setRowBlockRunner(real);
    }
  });

  it("regression: the workers start in a process run with V8 options (node --max-old-space-size=…), which a worker refuses", () => {
    const dist = new URL("../../dist/", import.meta.url).href;
    const script = `
      import { getAlgorithm, policyLoss } from "${dist}index.js";
      import { threadPool } from "${dist}node/threadPool.js";
      import { setThreadMinPositions } from "${dist}losses/policyLoss.js";
      setThreadMinPositions(1);
      const inputs = { logprobs: [[-0.2, -1, -0.7], [-0.5, -0.4, -1]], oldLogprobs: [[-0.5, -0.7, -0.9], [-0.6, -0.5, -1]], advantages: [1.5, -0.8], responseMask: [[1, 1, 1], [1, 1, 0]] };
      const cfg = getAlgorithm("dapo").loss;
      const one = policyLoss(cfg, inputs, { threads: 1 });
      const two = policyLoss(cfg, inputs, { threads: 2 });
      console.log(JSON.stringify({ workerBlocks: threadPool.workerBlocks, same: Object.is(one.loss, two.loss) && one.gradLogprobs.data.every((g, i) => Object.is(g, two.gradLogprobs.data[i])) }));
    `;
    const r = spawnSync(
      process.execPath,
      ["--max-old-space-size=3072", "--max-semi-space-size=4", "--input-type=module", "-e", script],
      { encoding: "utf8" },
    );
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({ workerBlocks: 1, same: true });
  });

  it("golden: idle workers stop after their idle time and start again on the next use", async () => {
    const url = new URL("../../dist/node/rowWorker.js", import.meta.url);
    const set = new WorkerSet<null>(url, (ctl) => ({
      workerData: { ctl },
      transferList: [],
      extra: null,
    }));
    expect(set.ensure(1)).toBe(true);
    expect(set.all).toHaveLength(1);
    set.touch(50);
    await new Promise((r) => setTimeout(r, 300));
    expect(set.all).toHaveLength(0);
    expect(set.ensure(1)).toBe(true);
    expect(set.all).toHaveLength(1);
    set.retire();
  });

  it("rejects: threads that are not a positive integer up to 256", () => {
    const cfg = getAlgorithm("dapo").loss;
    const inputs = { logprobs: [[-1]], oldLogprobs: [[-1]], advantages: [1], responseMask: [[1]] };
    for (const t of [0, 1.5, -1, 257, "2", Number.NaN]) {
      expect(() => policyLoss(cfg, inputs, { threads: t as number })).toThrow(
        /policyLoss: options\.threads must be a positive integer at most 256/,
      );
    }
  });

  it("golden: polgrad loss --threads 2 prints the --threads 1 document; --threads 0 and --threads with a framework model are usage errors", async () => {
    const batch = join(mkdtempSync(join(tmpdir(), "polgrad-threads-")), "batch.json");
    const rows = (k: number) =>
      Array.from({ length: 4 }, (_, b) =>
        Array.from({ length: 3 }, (_, t) => -0.5 - 0.1 * (((b * 3 + t) * k) % 7)),
      );
    writeFileSync(
      batch,
      JSON.stringify({
        logprobs: rows(1),
        old_logprobs: rows(3),
        ref_logprobs: rows(5),
        advantages: [1, -1, 0.5, -0.25],
        response_mask: [
          [1, 1, 1],
          [1, 1, 0],
          [1, 0, 0],
          [1, 1, 1],
        ],
      }),
    );
    const one = await runMain([
      "loss",
      "--algorithm",
      "grpo",
      "--batch",
      batch,
      "--threads",
      "1",
      "--json",
    ]);
    const two = await runMain([
      "loss",
      "--algorithm",
      "grpo",
      "--batch",
      batch,
      "--threads",
      "2",
      "--json",
    ]);
    expect(one.code).toBe(0);
    expect(two.stdout).toBe(one.stdout);
    const zero = await runMain(["loss", "--algorithm", "grpo", "--batch", batch, "--threads", "0"]);
    expect(zero.code).toBe(2);
    expect(zero.stdout).toBe("");
    expect(zero.stderr).toMatch(/--threads must be a positive integer; got "0"/);
    const fw = await runMain([
      "loss",
      "--framework",
      "verl@74a718a4:vanilla:token-mean",
      "--batch",
      batch,
      "--threads",
      "2",
    ]);
    expect(fw.code).toBe(2);
    expect(fw.stderr).toMatch(/--threads applies to a policy loss/);
  });
});
