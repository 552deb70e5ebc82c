#!/usr/bin/env python3
"""Load on POST /predict of a running `pstrain serve`: single-image latency (p50, p99) and
batched throughput (images/s), with Fashion-MNIST test images as JSON. One connection per
request, as the server closes each (no keep-alive).

usage: predict_load.py PORT DATA_DIR [SINGLE_REQUESTS] [BATCH] [BATCH_REQUESTS]
"""
import gzip
import http.client
import json
import os
import statistics
import sys
import time


def test_images(data_dir):
    path = os.path.join(data_dir, "t10k-images-idx3-ubyte")
    opener = gzip.open if not os.path.exists(path) else open
    with opener(path if os.path.exists(path) else path + ".gz", "rb") as f:
        raw = f.read()
    count = int.from_bytes(raw[4:8], "big")
    return [list(raw[16 + i * 784:16 + (i + 1) * 784]) for i in range(count)]


def post(port, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/predict", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.read()
    connection.close()
    if response.status != 200:
        sys.exit(f"/predict answered {response.status}: {answer[:200]!r}")
    return json.loads(answer)


def main():
    port, data_dir = int(sys.argv[1]), sys.argv[2]
    singles = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    batches = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    images = test_images(data_dir)

    bodies = [json.dumps({"images": [images[i % len(images)]]}) for i in range(singles)]
    latencies = []
    for body in bodies:
        start = time.perf_counter()
        post(port, body)
        latencies.append(time.perf_counter() - start)
    latencies.sort()
    p50 = statistics.median(latencies) * 1e3
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1e3

    batch_bodies = [json.dumps({"images": [images[(b * batch + i) % len(images)] for i in range(batch)]})
                    for b in range(batches)]
    start = time.perf_counter()
    for body in batch_bodies:
        assert len(post(port, body)["predictions"]) == batch
    per_second = batches * batch / (time.perf_counter() - start)

    print(f"single image: p50 {p50:.2f} ms, p99 {p99:.2f} ms over {singles} requests")
    print(f"batches of {batch}: {per_second:.0f} images/s over {batches} requests")


if __name__ == "__main__":
    main()
