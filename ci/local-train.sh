#!/usr/bin/env bash
# Trains locally: 2 ps and 2 workers as processes on loopback, on Fashion-MNIST from Debian's
# dataset-fashion-mnist package. Installs the build dependencies, builds, runs.
# Extra arguments go to `pstrain local` (e.g. --train-steps 10000 --sync).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh >/dev/null
rm -rf /tmp/pstrain-local  # a fresh run: the same log dir would resume (or report) the last one
exec build/pstrain local --ps 2 --workers 2 --data-dir /usr/share/datasets/fashion-mnist \
  --train-steps 3000 --batch-size 100 --hidden-units 128 --log-dir /tmp/pstrain-local \
  --summary-json /tmp/pstrain-local/summary.json "$@"
