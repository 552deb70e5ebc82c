#!/usr/bin/env python3
"""Holds connections open on a ps port while a run trains: SILENT connections that send nothing
(a port scan, a stuck client) and TRICKLING ones that send a byte a second. Waits for the ps's
listening event in EVENTS (its events.jsonl), opens them all, keeps them until the run's RESULT file exists
(or --timeout seconds), then closes them and prints how many it held.

    strangers.py EVENTS RESULT [--silent 300] [--trickling 30] [--timeout 120]
"""
import argparse
import json
import os
import socket
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("events")
    parser.add_argument("result")
    parser.add_argument("--silent", type=int, default=300)
    parser.add_argument("--trickling", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()

    deadline = time.monotonic() + args.timeout
    port = None
    while port is None and time.monotonic() < deadline:
        if os.path.exists(args.events):
            for line in open(args.events):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a partial last line
                if event.get("event") == "listening":
                    port = event["port"]
        time.sleep(0.01)
    if port is None:
        sys.exit("strangers: no listening event in " + args.events)

    def connect():
        return socket.create_connection(("127.0.0.1", port))

    silent = [connect() for _ in range(args.silent)]
    trickling = [connect() for _ in range(args.trickling)]
    closed_by_ps = 0
    while not os.path.exists(args.result) and time.monotonic() < deadline:
        for conn in list(trickling):
            try:
                conn.send(b"P")
            except OSError:
                closed_by_ps += 1
                trickling.remove(conn)
        time.sleep(1)
    for conn in silent + trickling:
        conn.close()
    print(f"held {args.silent} silent and {args.trickling} trickling connections; "
          f"{closed_by_ps} trickling ones found closed by the ps")


if __name__ == "__main__":
    main()
