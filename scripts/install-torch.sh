#!/usr/bin/env bash
# Install Debian's PyTorch (python3-torch) for /usr/bin/python3, which the
# fixture recorder (tools/record-fixtures/polgrad_core.py) runs under.
# Idempotent: does nothing if /usr/bin/python3 can already import torch.
set -euo pipefail

PY=/usr/bin/python3

if "$PY" -c 'import torch' >/dev/null 2>&1; then
  echo "torch already importable by $PY: $("$PY" -c 'import torch; print(torch.__version__)')"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y python3-torch

"$PY" -c 'import torch; print("installed torch", torch.__version__)'
