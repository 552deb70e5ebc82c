#!/usr/bin/env bash
# Time to accuracy behind a cluster's network: 2 ps and 1, 2 and 4 workers (NET_WORKERS) as
# `pstrain run` processes, as pods are (sync by default: each computes at once), each ps behind a
# link of its own at each speed in NET_LINKS (default: unlimited, 10gbit, 1gbit), with each wire
# encoding in NET_ENCODINGS (PUSH/PULL pairs; default fp32/fp32, bf16/bf16, q8/q4 and log4/q3).
#
# The links are the kernel's (tests/bench/links.sh): htb classes on loopback, one for the bytes
# into each ps's port and one for those out of it, each at the link's rate, shared by every
# connection to that ps as a node's network card is; no user-space copy. Needs root (tc); the
# shaping is removed on exit. It shapes the whole machine's loopback while it runs.
#
# Time runs from the processes' start (data loading included) to the first snapshot (every 50
# global steps) whose accuracy on the whole Fashion-MNIST test set reaches 0.85 and 0.87. Rounds
# (NET_ROUNDS, default 3) repeat every run, interleaved, round r with seed r. Writes the table to $OUT/network.txt
# (default OUT=build/network) and an SVG plot of t(0.87) against workers to $OUT/network.svg.
#   sudo tests/bench/network.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/network}"
bin="${NET_BIN:-build/pstrain}"
data="${DATA_DIR:-/usr/share/datasets/fashion-mnist}"
links="${NET_LINKS:-unlimited 10gbit 1gbit}"
workers="${NET_WORKERS:-1 2 4}"
encodings="${NET_ENCODINGS:-fp32/fp32 bf16/bf16 q8/q4 log4/q3}"
rounds="${NET_ROUNDS:-3}"
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root for tc" >&2; exit 1; }
source tests/bench/links.sh
mkdir -p "$out"
work="$(mktemp -d)"
export OPENBLAS_NUM_THREADS=1
trap '[ ${#run_pids[@]} -gt 0 ] && kill "${run_pids[@]}" 2>/dev/null; clear_links; rm -rf "$work"' EXIT

# Global steps a run trains: past 0.87 with sync and the scaled learning rate, and not much more.
steps_for() { case "$1" in 1) echo 4000 ;; 2) echo 2500 ;; 3|4) echo 1600 ;; *) echo 1000 ;; esac; }

# run NAME SEED WORKERS PUSH PULL: one run, left in $work/NAME{,.start,.json}.
run() {
  local dir="$work/$1"
  shift
  run_processes "$bin" "$dir" 2 "$2" --seed "$1" --hidden-units 128 --batch-size 100 \
    --train-steps "$(steps_for "$2")" --eval-every-steps 50 --log-every-steps 1000 \
    --data-dir "$data" --push-encoding "$3" --pull-encoding "$4"
  echo "${dir##*/}: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s.get("global_step"), s.get("test_accuracy"), round(s.get("bytes_per_step", 0)))' "$dir.json")" >&2
}

for r in $(seq "$rounds"); do
  for link in $links; do
    shape_links "$link" 2
    for w in $workers; do
      for encoding in $encodings; do
        run "$link.w$w.${encoding/\//-}.r$r" "$r" "$w" "${encoding%/*}" "${encoding#*/}"
      done
    done
  done
done
clear_links

PYTHONPATH=tests/bench python3 tests/bench/network_report.py "$work" "$out" | tee "$out/network.txt"
