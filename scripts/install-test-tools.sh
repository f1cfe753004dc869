#!/usr/bin/env bash
# Install the optional tools the test suite uses when present, from Debian's packages:
# python3-torch and python3-numpy (the dump recipes of docs/howto/, the torch.save control test of
# the .pt reader, the NumPy fixture recorder, the vectors round trip) and chromium (the browser
# tests of the HTML report and the playground, driven by playwright-core). Tests that need them
# skip with a printed reason when they are absent, so a failure here is reported and does not stop
# CI. Needs root and apt-get. Measured on the project machine (Debian 12): 63 s for the 209
# packages of torch; chromium about 40 s.
set -uo pipefail
need=()
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null || need+=(python3-torch python3-numpy)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  echo "install-test-tools: python3-torch, python3-numpy and chromium already present"
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null; then
  echo "install-test-tools: not root or no apt-get; the tests that need ${need[*]} will skip"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; then
  echo "install-test-tools: installed ${need[*]}"
else
  echo "install-test-tools: apt-get failed; the tests that need ${need[*]} will skip"
fi
exit 0
