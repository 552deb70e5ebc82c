#!/usr/bin/env bash
# Benchmarks POST /predict side by side: trains a model (pstrain local, 1 ps + 1 worker, 1000
# steps), serves it with `pstrain serve` and with the same model in numpy behind Python's
# ThreadingHTTPServer (tests/bench/predict_peer.py), and measures each with
# tests/bench/predict_load.py: single-image latency (p50, p99) and images/s in batches of 250,
# JSON, keep-alive on. Called by bench.sh; run alone: tests/bench/predict.sh [LOAD FLAGS]
# (e.g. --singles 100 --batches 5 for a short run).
set -euo pipefail
cd "$(dirname "$0")/../.."
data=/usr/share/datasets/fashion-mnist
bin=${PREDICT_BENCH_BINARY:-build/pstrain}  # (not PSTRAIN_*: pstrain reads those as its keys)
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" local --ps 1 --workers 1 --data-dir "$data" --train-steps 1000 --log-dir "$work/train" >/dev/null
model="$work/train/worker-0/model.bin"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pstrain_port="$(free_port)"
"$bin" serve --model "$model" --http-port "$pstrain_port" >"$work/serve.log" 2>&1 &
pids+=($!)
peer_port="$(free_port)"
/usr/bin/python3 tests/bench/predict_peer.py "$model" "$peer_port" >"$work/peer.log" 2>&1 &
pids+=($!)
for port in "$pstrain_port" "$peer_port"; do
  for _ in $(seq 100); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/healthz')" \
      2>/dev/null && break
    sleep 0.1
  done
done
python3 tests/bench/predict_load.py "$data" "pstrain serve=$pstrain_port" \
  "numpy ThreadingHTTPServer=$peer_port" "$@"
