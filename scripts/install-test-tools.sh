#!/usr/bin/env bash
# Install the optional tools the test suite uses when present, from Debian's packages:
# python3-torch and python3-numpy (the dump recipes of docs/howto/, the torch.save control test of
# the .pt reader, the NumPy fixture recorder). Tests that need them skip with a printed reason
# when they are absent, so a failure here is reported and does not stop CI. Needs root and apt-get.
# Measured on the project machine (Debian 12, 2026-12-01): 63 s for 209 packages.
set -uo pipefail
if /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
  echo "install-test-tools: python3-torch and python3-numpy already present"
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null; then
  echo "install-test-tools: not root or no apt-get; the torch-dependent tests will skip"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-torch python3-numpy >/dev/null; then
  echo "install-test-tools: installed python3-torch and python3-numpy"
else
  echo "install-test-tools: apt-get failed; the torch-dependent tests will skip"
fi
exit 0
