#!/usr/bin/python3
"""The peer `pstrain serve` is measured against: the same model.bin answering the same POST
/predict ({"images": [[784 values 0-255], ...]} -> predictions, labels, probabilities) in numpy,
behind Python's ThreadingHTTPServer with HTTP/1.1 keep-alive.

usage: predict_peer.py MODEL_FILE PORT
Needs Debian's python3-numpy (hence /usr/bin/python3).
"""
import http.server
import json
import struct
import sys

import numpy as np


def read_model(path):
    """Layers of pstrain's model file: per layer the weights (column-major, out x in), then the
    bias, after "PSTRAINM" and the layer sizes; a data set section may follow (not needed)."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:8] == b"PSTRAINM", "not a pstrain model file"
    count = struct.unpack_from("<I", raw, 8)[0]
    sizes = struct.unpack_from(f"<{count}I", raw, 12)
    at = 12 + 4 * count
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        weights = np.frombuffer(raw, np.float32, n_in * n_out, at).reshape(n_in, n_out)
        at += 4 * n_in * n_out
        bias = np.frombuffer(raw, np.float32, n_out, at)
        at += 4 * n_out
        layers.append((weights, bias))  # weights[i, o]: column-major out x in, read as in x out
    return layers


def probabilities(layers, images):
    x = images
    for k, (weights, bias) in enumerate(layers):
        x = x @ weights + bias
        if k + 1 < len(layers):
            np.maximum(x, 0, out=x)
    x -= x.max(axis=1, keepdims=True)
    np.exp(x, out=x)
    return x / x.sum(axis=1, keepdims=True)


def handler_for(layers):
    class Predict(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive
        # Headers and body go out in two writes: without TCP_NODELAY the second waits for the
        # client's delayed ACK, 40 ms a request.
        disable_nagle_algorithm = True

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                images = np.asarray(json.loads(body)["images"], dtype=np.float32) / 255.0
                if images.ndim != 2 or images.shape[1] != 784:
                    raise ValueError("expected {\"images\": [[784 values 0-255], ...]}")
            except (ValueError, KeyError, TypeError) as e:
                return self.answer(400, {"error": str(e)})
            probs = probabilities(layers, images)
            classes = probs.argmax(axis=1)
            self.answer(200, {"predictions": classes.tolist(),
                              "labels": [str(c) for c in classes.tolist()],
                              "probabilities": np.round(probs, 6).tolist()})

        def answer(self, status, content):
            data = json.dumps(content, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.answer(200, {"status": "ok"})

        def log_message(self, *args):
            pass

    return Predict


def main():
    layers = read_model(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), handler_for(layers))
    server.serve_forever()


if __name__ == "__main__":
    main()
