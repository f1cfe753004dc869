// Wall time and peak RSS of a child process: under /usr/bin/time -v where it exists, else from
// the process itself (a Node child's process.resourceUsage() at exit; for a Python child, a
// Python wrapper's RUSAGE_CHILDREN). The bench spawns only Node and Python.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const GNU_TIME = "/usr/bin/time";

/** Whether /usr/bin/time -v measures peak RSS here (BENCH_NO_GNU_TIME=1 forces the fallback). */
export const HAS_GNU_TIME = existsSync(GNU_TIME) && process.env.BENCH_NO_GNU_TIME !== "1";

/**
 * Run `cmd args` with stdout discarded (as `> /dev/null` does) and return { seconds, maxRssKiB,
 * status, stderr }. `seconds` is the wall time of the spawn seen from here.
 */
export function measureProcess(cmd, args, env = process.env) {
  if (HAS_GNU_TIME) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(GNU_TIME, ["-v", cmd, ...args], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
      maxBuffer: 1 << 26,
    });
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? "");
    const exit = /Exit status: (\d+)/.exec(r.stderr ?? "");
    return {
      seconds,
      maxRssKiB: m ? Number(m[1]) : null,
      status: exit ? Number(exit[1]) : r.status,
      stderr: r.stderr ?? "",
    };
  }
  // No GNU time: a Python child reads its children's peak RSS (RUSAGE_CHILDREN); a Node child
  // reports its own from a preloaded exit hook (process.resourceUsage).
  const isNode = cmd === process.execPath;
  const hook =
    'process.on("exit", (c) => process.stderr.write("\\nbench-rss-kib " + process.resourceUsage().maxRSS + " " + c + "\\n"));';
  const [runCmd, runArgs] = isNode
    ? [cmd, [`--import=data:text/javascript,${encodeURIComponent(hook)}`, ...args]]
    : [
        cmd,
        [
          "-c",
          "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); " +
            "sys.stderr.write('\\nbench-rss-kib %d %d\\n' % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode))",
          cmd,
          ...args,
        ],
      ];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(runCmd, runArgs, {
    env,
    stdio: ["ignore", "ignore", "pipe"],
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const m = /bench-rss-kib (\d+) (\d+|null)/.exec(r.stderr ?? "");
  return {
    seconds,
    maxRssKiB: m ? Number(m[1]) : null,
    status: m && m[2] !== "null" ? Number(m[2]) : r.status,
    stderr: r.stderr ?? "",
  };
}
