#!/usr/bin/env bash
# model.onnx against `pstrain serve` on the whole Fashion-MNIST test set: trains the default run
# (ci/local-train.sh: 2 ps, 2 workers, 3,000 global steps), serves its model.bin with `pstrain
# serve`, and has daemon/tests/tools/onnx_agreement.py check the model.onnx worker 0 wrote beside
# it with ONNX's checker and compare OpenCV's dnn answers with POST /predict's for all 10,000 test
# images (and an all-black and an all-white one): the same class for every image, probabilities
# within 1e-5. Prints one line and writes /tmp/pstrain-local/onnx-agreement.json; exits 1 where
# they disagree. Run: tests/bench/onnx.sh (extra arguments go to ci/local-train.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
data=/usr/share/datasets/fashion-mnist
# Debian's python3 (with python3-onnx and python3-opencv), whatever python3 comes first on PATH.
/usr/bin/python3 -c "import cv2, onnx" 2>/dev/null || bash ci/install-deps.sh python3-onnx python3-opencv
bash ci/local-train.sh "$@"
run=/tmp/pstrain-local/worker-0
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
build/pstrain serve --model "$run/model.bin" --http-port "$port" >/tmp/pstrain-local/onnx-serve.log 2>&1 &
serve=$!
trap 'kill "$serve" 2>/dev/null || true; wait "$serve" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/readyz')" \
    2>/dev/null && break
  sleep 0.1
done
/usr/bin/python3 daemon/tests/tools/onnx_agreement.py "$run/model.onnx" \
  "http://127.0.0.1:$port/predict" "$data/t10k-images-idx3-ubyte.gz" \
  --summary-json /tmp/pstrain-local/onnx-agreement.json
