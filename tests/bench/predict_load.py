#!/usr/bin/env python3
"""Load on POST /predict of running servers, side by side: single-image latency (p50, p99) and
batched throughput (images/s in batches of 250), Fashion-MNIST test images as JSON, over one
kept-alive connection per server (client time included).

usage: predict_load.py DATA_DIR NAME=PORT... [--singles N] [--batch N] [--batches N]
"""
import argparse
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


class Client:
    def __init__(self, port):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, body):
        self.connection.request("POST", "/predict", body, {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        answer = response.read()
        if response.status != 200:
            sys.exit(f"/predict answered {response.status}: {answer[:200]!r}")
        if response.getheader("Connection", "").lower() == "close":
            sys.exit("the server closed the connection: no keep-alive")
        return json.loads(answer)


def measure(port, singles, batch_bodies, batch):
    client = Client(port)
    latencies = []
    for body in singles:
        start = time.perf_counter()
        client.post(body)
        latencies.append(time.perf_counter() - start)
    latencies.sort()
    p50 = statistics.median(latencies) * 1e3
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1e3
    start = time.perf_counter()
    for body in batch_bodies:
        assert len(client.post(body)["predictions"]) == batch
    per_second = len(batch_bodies) * batch / (time.perf_counter() - start)
    return p50, p99, per_second


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("servers", nargs="+", help="NAME=PORT")
    parser.add_argument("--singles", type=int, default=500)
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    images = test_images(args.data_dir)
    singles = [json.dumps({"images": [images[i % len(images)]]}) for i in range(args.singles)]
    batches = [json.dumps({"images": [images[(b * args.batch + i) % len(images)]
                                      for i in range(args.batch)]})
               for b in range(args.batches)]
    print(f"{'server':<24} {'1 image p50':>12} {'p99':>9} {'images/s, batches of ' + str(args.batch):>28}")
    for server in args.servers:
        name, port = server.split("=")
        p50, p99, per_second = measure(int(port), singles, batches, args.batch)
        print(f"{name:<24} {p50:>9.2f} ms {p99:>6.2f} ms {per_second:>28.0f}")
    print(f"({args.singles} single-image requests, {args.batches} batches; one kept-alive "
          f"connection each)")


if __name__ == "__main__":
    main()
