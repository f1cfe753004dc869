// The CLI end to end: `polgrad loss --algorithm dapo --batch FILE --json > /dev/null` on a ragged
// safetensors batch, against one Python process doing the same with polgrad 0.2.0 (read the
// file, policy_loss, backward), interleaved, medians of wall time; peak RSS of each process.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getAlgorithm, policyLoss, writeSafetensors } from "../dist/index.js";
import { PEER_SCRIPT, pythonPath } from "./_peer.mjs";
import { measureProcess } from "./_process.mjs";
import { interleave, median } from "./_timing.mjs";
import { makeBatch, typedInputs } from "./cases.mjs";

const BIN = fileURLToPath(new URL("../bin/polgrad.js", import.meta.url));

/** Benchmark the CLI on a B×T ragged file; `withPeer` adds the Python arm. */
export async function benchCli(B, T, rounds, withPeer, seed = 0) {
  const dir = mkdtempSync(join(tmpdir(), "polgrad-bench-cli-"));
  try {
    const batch = makeBatch(B, T, "ragged", seed);
    const file = join(dir, "batch.safetensors");
    writeSafetensors(file, {
      logprobs: { dtype: "F64", shape: [B, T], data: batch.logprobs },
      old_logprobs: { dtype: "F64", shape: [B, T], data: batch.oldLogprobs },
      advantages: { dtype: "F64", shape: [B], data: batch.advantages },
      response_mask: { dtype: "U8", shape: [B, T], data: batch.mask },
    });
    const fileBytes = statSync(file).size;
    const env = { ...process.env, OMP_NUM_THREADS: "1" };
    const ours = [];
    const peer = [];
    const run = (cmd, args, into) => () => {
      const r = measureProcess(cmd, args, env);
      if (r.status !== 0) throw new Error(`bench: ${cmd} ${args.join(" ")} failed:\n${r.stderr}`);
      into.push(r);
      return r.seconds;
    };
    const oursOut = [];
    const outFile = join(dir, "out.safetensors");
    const arms = [
      {
        name: "ours",
        run: run(
          process.execPath,
          [BIN, "loss", "--algorithm", "dapo", "--batch", file, "--json"],
          ours,
        ),
      },
      {
        // The [B, T] results as a tensor file, --json keeping the scalars (docs/cli.md#tensor-output).
        name: "oursOut",
        run: run(
          process.execPath,
          [BIN, "loss", "--algorithm", "dapo", "--batch", file, "--out", outFile, "--json"],
          oursOut,
        ),
      },
    ];
    let agreement = null;
    if (withPeer) {
      arms.push({
        name: "peer",
        run: run(pythonPath(), [PEER_SCRIPT, "--cli", file, "dapo"], peer),
      });
      // Once, untimed: the peer's loss on this file against the library's on the same batch.
      const p = spawnSync(pythonPath(), [PEER_SCRIPT, "--cli", file, "dapo"], {
        env,
        encoding: "utf8",
      });
      if (p.status !== 0) throw new Error(`bench: the peer failed on ${file}:\n${p.stderr}`);
      const theirs = JSON.parse(p.stdout).loss;
      const mine = policyLoss(getAlgorithm("dapo").loss, typedInputs(batch)).loss;
      agreement = {
        loss: mine,
        peerLoss: theirs,
        relDiff: Math.abs(mine - theirs) / Math.abs(theirs),
      };
    }
    const t = await interleave(rounds, arms);
    const rss = (xs) => median(xs.map((r) => r.maxRssKiB ?? Number.NaN)) / 1024;
    const n = B * T;
    const result = {
      B,
      T,
      fill: "ragged",
      validTokens: batch.valid,
      fileBytes,
      command: "node bin/polgrad.js loss --algorithm dapo --batch FILE --json > /dev/null",
      ours: {
        medianSeconds: t.ours.median,
        times: t.ours.times,
        tokensPerSecond: n / t.ours.median,
        peakRssMiB: rss(ours),
        peakRssOverFile: (rss(ours) * 1048576) / fileBytes,
      },
      oursOut: {
        command:
          "node bin/polgrad.js loss --algorithm dapo --batch FILE --out OUT.safetensors --json > /dev/null",
        medianSeconds: t.oursOut.median,
        times: t.oursOut.times,
        tokensPerSecond: n / t.oursOut.median,
        peakRssMiB: rss(oursOut),
        peakRssOverFile: (rss(oursOut) * 1048576) / fileBytes,
      },
      peer: null,
      ratio: null,
      ratioOut: null,
      agreement,
    };
    if (withPeer) {
      result.peer = {
        command: "python3 bench/peer/polgrad_peer.py --cli FILE dapo",
        medianSeconds: t.peer.median,
        times: t.peer.times,
        tokensPerSecond: n / t.peer.median,
        peakRssMiB: rss(peer),
      };
      result.ratio = t.peer.median / t.ours.median;
      result.ratioOut = t.peer.median / t.oursOut.median;
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
