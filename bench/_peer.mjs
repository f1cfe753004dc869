// The PyTorch peer from the JS side: find it (python3 with torch and numpy, and a polgrad 0.2.0
// checkout in POLGRAD_PY_CHECKOUT), start bench/peer/polgrad_peer.py once, and talk to it one
// JSON line per command. The bench never installs anything; `peerHowTo` says what to install.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The peer script. */
export const PEER_SCRIPT = fileURLToPath(new URL("./peer/polgrad_peer.py", import.meta.url));

/** The Python interpreter: $PYTHON, else Debian's /usr/bin/python3, else python3 on the PATH. */
export function pythonPath() {
  if (process.env.PYTHON) return process.env.PYTHON;
  return existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

/** How to get the peer, printed when it is absent. */
export const PEER_HOW_TO = [
  "the PyTorch peer is absent; to compare against polgrad 0.2.0 on torch:",
  "  sudo apt-get install python3-torch python3-numpy      (Debian; torch 1.13 works)",
  "  git clone https://github.com/SaifPunjwani/polgrad /tmp/polgrad-py",
  "  git -C /tmp/polgrad-py checkout v0.2.0                 (the 'Release 0.2.0' commit, 7046d6b)",
  "  export POLGRAD_PY_CHECKOUT=/tmp/polgrad-py",
];

/** Why the peer cannot run, or null when it can. */
export function peerMissing() {
  const dir = process.env.POLGRAD_PY_CHECKOUT;
  if (!dir) return "POLGRAD_PY_CHECKOUT is not set";
  if (!existsSync(join(dir, "src", "polgrad", "__init__.py")))
    return `POLGRAD_PY_CHECKOUT=${dir} holds no src/polgrad/__init__.py`;
  const r = spawnSync(pythonPath(), ["-c", "import torch, numpy"], { encoding: "utf8" });
  if (r.status !== 0) return `${pythonPath()} cannot import torch and numpy`;
  return null;
}

/** Start the peer server; resolves to { request(msg), close(), versions }. */
export async function startPeer() {
  const child = spawn(pythonPath(), [PEER_SCRIPT], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? "1" },
  });
  let buffered = "";
  const waiting = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      waiting.shift()?.resolve(JSON.parse(line));
      nl = buffered.indexOf("\n");
    }
  });
  child.on("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`bench: the peer exited (${code})`));
  });
  const request = (msg) =>
    new Promise((resolve, reject) => {
      waiting.push({ resolve, reject });
      child.stdin.write(`${JSON.stringify(msg)}\n`);
    });
  const versions = await request({ cmd: "hello" });
  const close = () => {
    child.stdin.end(`${JSON.stringify({ cmd: "quit" })}\n`);
  };
  return { request, close, versions };
}
