// Write `.pt` files with the real torch.save (Debian's python3-torch), for the bench's diagnosis
// section and the tests that read torch files: every `X.npz` of a folder becomes `X.pt` holding
// the same arrays as a dict of tensors. Nothing here is installed: without a python3 that
// imports torch and numpy it says so and writes nothing.
import { spawnSync } from "node:child_process";

const SCRIPT =
  "import sys, os, numpy, torch\n" +
  "src, dst = sys.argv[1], sys.argv[2]\n" +
  "for f in sorted(os.listdir(src)):\n" +
  "    a = numpy.load(os.path.join(src, f))\n" +
  "    torch.save({k: torch.from_numpy(a[k]) for k in a.files}, os.path.join(dst, f[:-4] + '.pt'))\n";

/** The python3 that imports torch and numpy ($POLGRAD_PYTHON, Debian's, the PATH's), or null. */
export function torchPython() {
  for (const py of [process.env.POLGRAD_PYTHON, "/usr/bin/python3", "python3"]) {
    if (py === undefined || py === "") continue;
    const r = spawnSync(py, ["-c", "import torch, numpy"], { encoding: "utf8" });
    if (r.status === 0) return py;
  }
  return null;
}

/**
 * torch.save every `.npz` of `srcDir` into `dstDir` (same stem, `.pt`). Returns null when done,
 * else why not (no such python, or its error).
 */
export function torchSaveNpzDir(srcDir, dstDir) {
  const py = torchPython();
  if (py === null) return "no python3 that imports torch and numpy";
  const r = spawnSync(py, ["-c", SCRIPT, srcDir, dstDir], { encoding: "utf8", timeout: 300_000 });
  return r.status === 0 ? null : `torch.save failed: ${r.stderr}`;
}
