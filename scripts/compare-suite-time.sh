#!/usr/bin/env bash
# Time this project's whole test suite beside polgrad 0.2.0's (Python, PyTorch) in the same run,
# on the same machine, serially. Needs a polgrad checkout (default /tmp/polgrad, see
# tools/record-fixtures/README.md) and Debian's python3-torch, python3-pytest, python3-hypothesis
# (installed here if missing). Prints one line per suite and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
POLGRAD="${POLGRAD_CHECKOUT:-/tmp/polgrad}"
if [ ! -d "$POLGRAD/tests" ]; then
  echo "skip: no polgrad checkout with tests at $POLGRAD (set POLGRAD_CHECKOUT)"; exit 0
fi
scripts/install-torch.sh >/dev/null
if ! /usr/bin/python3 -c 'import pytest, hypothesis, scipy, numpy' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3-pytest python3-hypothesis python3-scipy python3-numpy >/dev/null
fi
npm run build >/dev/null
t0=$(date +%s.%N)
NO_COLOR=1 npx vitest run --no-file-parallelism >/tmp/polgrad-ts-suite.log 2>&1 || true
t1=$(date +%s.%N)
(cd "$POLGRAD" && PYTHONPATH=src /usr/bin/python3 -m pytest -q -p no:cacheprovider tests >/tmp/polgrad-py-suite.log 2>&1) || true
t2=$(date +%s.%N)
ts=$(sed 's/\x1b\[[0-9;]*m//g' /tmp/polgrad-ts-suite.log | grep -a "Tests  " | tail -1 | sed 's/^ *//' || true)
py=$(tail -1 /tmp/polgrad-py-suite.log)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v ts="$ts" -v py="$py" 'BEGIN {
  printf "polgrad (TypeScript, vitest, serial): %.1f s  [%s]\n", b - a, ts
  printf "polgrad 0.2.0 (Python, pytest, serial): %.1f s  [%s]\n", c - b, py
  printf "ratio TypeScript/Python: %.2f\n", (b - a) / (c - b)
}'
