#!/usr/bin/env bash
# Time to accuracy behind a cluster's network: 2 ps and 1, 2 and 4 workers (NET_WORKERS) as
# `pstrain run` processes, as pods are (sync by default: each computes at once), each ps behind a
# link of its own at each speed in NET_LINKS (default: unlimited, 10gbit, 1gbit), with each wire
# encoding in NET_ENCODINGS (PUSH/PULL pairs; default fp32/fp32, bf16/bf16, q8/q4 and q4/q2).
#
# The links are the kernel's: htb classes on loopback, one for the bytes into each ps's port and
# one for those out of it, each at the link's rate, shared by every connection to that ps as a
# node's network card is; no user-space copy. Needs root (tc); the shaping is removed on exit.
# It shapes the whole machine's loopback while it runs.
#
# Time runs from the processes' start (data loading included) to the first snapshot (every 50
# global steps) whose accuracy on the whole Fashion-MNIST test set reaches 0.85 and 0.87. Rounds
# (NET_ROUNDS, default 3) repeat every run, interleaved. Writes the table to $OUT/network.txt
# (default OUT=build/network) and an SVG plot of t(0.87) against workers to $OUT/network.svg.
#   sudo tests/bench/network.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/network}"
bin="${NET_BIN:-build/pstrain}"
data="${DATA_DIR:-/usr/share/datasets/fashion-mnist}"
links="${NET_LINKS:-unlimited 10gbit 1gbit}"
workers="${NET_WORKERS:-1 2 4}"
encodings="${NET_ENCODINGS:-fp32/fp32 bf16/bf16 q8/q4 q4/q2}"
rounds="${NET_ROUNDS:-3}"
base_port="${NET_BASE_PORT:-23000}"  # ps i listens on base_port + i
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root for tc" >&2; exit 1; }
mkdir -p "$out"
work="$(mktemp -d)"
export OPENBLAS_NUM_THREADS=1
pids=()
cleanup() {
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  tc qdisc del dev lo root 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# shape RATE: each ps port's two directions at RATE ("unlimited": no shaping). Unclassified
# bytes (the HTTP ports, everything else on loopback) go unshaped (htb's direct queue).
shape() {
  tc qdisc del dev lo root 2>/dev/null || true
  [ "$1" = unlimited ] && return
  tc qdisc add dev lo root handle 1: htb default 9999
  local i port
  for i in 0 1; do
    port=$((base_port + i))
    # Burst: a 64 KiB loopback segment and a little more, as a card's ring would hold.
    tc class add dev lo parent 1: classid "1:1$i" htb rate "$1" ceil "$1" burst 128k cburst 128k
    tc class add dev lo parent 1: classid "1:2$i" htb rate "$1" ceil "$1" burst 128k cburst 128k
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport "$port" 0xffff flowid "1:1$i"
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport "$port" 0xffff flowid "1:2$i"
  done
}

# Global steps a run trains: past 0.87 with sync and the scaled learning rate, and not much more.
steps_for() { case "$1" in 1) echo 4000 ;; 2) echo 2500 ;; 3|4) echo 1600 ;; *) echo 1000 ;; esac; }

# run NAME WORKERS PUSH PULL: 2 ps and WORKERS workers as `pstrain run` processes, until worker 0
# has written its result; left in $work/NAME{,.start,.json}.
run() {
  local name=$1 w=$2 push=$3 pull=$4
  local dir="$work/$name" steps
  steps="$(steps_for "$w")"
  local hosts="127.0.0.1:$base_port,127.0.0.1:$((base_port + 1))"
  local common=(--ps 2 --workers "$w" --ps-hosts "$hosts" --hidden-units 128 --batch-size 100
    --train-steps "$steps" --eval-every-steps 50 --log-every-steps 1000 --data-dir "$data"
    --push-encoding "$push" --pull-encoding "$pull" --log-to-stdout false)
  date +%s.%N >"$dir.start"
  pids=()
  local i
  for i in 0 1; do
    "$bin" run --role ps --index "$i" --ps-port "$((base_port + i))" \
      --http-port "$((base_port + 100 + i))" --log-dir "$dir/ps-$i" "${common[@]}" \
      >"$dir.ps-$i.out" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 0 $((w - 1))); do
    "$bin" run --role worker --index "$i" --worker-port "$((base_port + 200 + i))" \
      --http-port "$((base_port + 300 + i))" --log-dir "$dir/worker-$i" "${common[@]}" \
      >"$dir.worker-$i.out" 2>&1 &
    pids+=($!)
  done
  # Worker 0 writes result.json once the run has ended, then serves until stopped.
  local waited=0
  until [ -s "$dir/worker-0/result.json" ] || [ $waited -ge 600 ]; do
    kill -0 "${pids[2]}" 2>/dev/null || break
    sleep 0.2
    waited=$((waited + 1))
  done
  kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
  cp "$dir/worker-0/result.json" "$dir.json" 2>/dev/null || { echo "{}" >"$dir.json"; for f in "$dir".*.out; do tail -n 3 "$f" >&2; done; }
  echo "$name: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s.get("global_step"), s.get("test_accuracy"), round(s.get("bytes_per_step", 0)))' "$dir.json")" >&2
}

for r in $(seq "$rounds"); do
  for link in $links; do
    shape "$link"
    for w in $workers; do
      for encoding in $encodings; do
        run "$link.w$w.${encoding/\//-}.r$r" "$w" "${encoding%/*}" "${encoding#*/}"
      done
    done
  done
done
shape unlimited

PYTHONPATH=tests/bench python3 tests/bench/network_report.py "$work" "$out" | tee "$out/network.txt"
