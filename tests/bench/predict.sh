#!/usr/bin/env bash
# Benchmarks POST /predict: trains a model (pstrain local, 1 ps + 1 worker, 1000 steps), serves it
# with `pstrain serve` and measures single-image latency (p50, p99; JSON, one connection per
# request, client included) and batched throughput (images/s in batches of 1000) with
# tests/bench/predict_load.py. Called by bench.sh; run alone: tests/bench/predict.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
data=/usr/share/datasets/fashion-mnist
bin=build/pstrain
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$bin" local --ps 1 --workers 1 --data-dir "$data" --train-steps 1000 --log-dir "$work/train" >/dev/null
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" serve --model "$work/train/worker-0/model.bin" --http-port "$port" >"$work/serve.log" 2>&1 &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/healthz')" 2>/dev/null && break
  sleep 0.1
done
python3 tests/bench/predict_load.py "$port" "$data"
