#!/usr/bin/env bash
# Latency between workers and ps: `pstrain local --ps-fronts` with the test support's fault
# proxy (fault_proxy) in front of each ps, adding 0 or 5 ms each way to every worker's connection
# (jitter 0.5 ms), 2 ps + 4 workers, Fashion-MNIST at batch 100, in the launcher's default mode
# and with every worker computing at once (sync, the default where CPUs are not shared) and
# asynchronously; at 5 ms with 1, 4 and 8 pushes in flight (pushesInFlight). Prints global
# steps/s, its ratio to the same configuration through the proxy with no delay, time to 0.85,
# the staleness of a push and test accuracy at the end; medians of REPEATS interleaved runs.
# Run by hand on a quiet machine:  tests/bench/latency.sh [REPEATS]   (default 3; build first)
# LATENCY_EXTRA="--flag value" adds flags to every run.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
build="${BUILD_DIR:-build}"
bin="$build/pstrain"
proxy="$build/daemon/tests/fault_proxy"
data=/usr/share/datasets/fashion-mnist
steps="${LATENCY_STEPS:-3000}"
[ -x "$bin" ] && [ -x "$proxy" ] || { echo "build first: ci/build.sh (pstrain, fault_proxy)" >&2; exit 1; }
work="$(mktemp -d)"
proxies=()
trap 'kill "${proxies[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1

# The port a ps of the run in DIR listens on, once its listening event is written.
listening_port() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys, time
for _ in range(600):
    try:
        for line in open(sys.argv[1]):
            event = json.loads(line)
            if event["event"] == "listening":
                print(event["port"]); sys.exit(0)
    except (FileNotFoundError, ValueError):
        pass
    time.sleep(0.05)
sys.exit("no listening event in " + sys.argv[1])
PY
}

free_ports() {
  /usr/bin/python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(",".join(str(x.getsockname()[1]) for x in s))'
}

# run NAME REPEAT LATENCY_MS ARGS...: one pstrain local run behind proxies.
run() {
  local name=$1 repeat=$2 latency=$3
  shift 3
  local dir="$work/$name.$repeat" fronts
  fronts="$(free_ports)"
  date +%s.%N >"$dir.start"
  # shellcheck disable=SC2086
  "$bin" local --ps 2 --workers 4 --hidden-units 128 --learning-rate 0.001 --batch-size 100 \
    --train-steps "$steps" --eval-every-steps 100 --log-every-steps 1000 --data-dir "$data" \
    --log-dir "$dir" --summary-json "$dir.json" --ps-fronts "$fronts" ${LATENCY_EXTRA:-} "$@" \
    >/dev/null &
  local launcher=$!
  proxies=()
  local i=0
  for front in ${fronts//,/ }; do
    "$proxy" --listen "$front" --target "127.0.0.1:$(listening_port "$dir/ps-$i/events.jsonl")" \
      --latency-ms "$latency" --jitter-ms "$([ "$latency" = 0 ] && echo 0 || echo 0.5)" \
      --seed "$repeat" >/dev/null &
    proxies+=($!)
    i=$((i + 1))
  done
  wait "$launcher"
  kill "${proxies[@]}"
  wait "${proxies[@]}" 2>/dev/null || true
}

modes=("default:" "sync:--concurrent-workers 0" "async:--concurrent-workers 0 --sync false")
for r in $(seq "$repeats"); do
  echo "latency: round $r of $repeats" >&2
  for mode in "${modes[@]}"; do
    name="${mode%%:*}"
    flags="${mode#*:}"
    # shellcheck disable=SC2086
    run "$name-0-1" "$r" 0 $flags
    for inflight in 1 4 8; do
      # shellcheck disable=SC2086
      run "$name-5-$inflight" "$r" 5 $flags --pushes-in-flight "$inflight"
    done
  done
done
/usr/bin/python3 tests/bench/latency_report.py "$work" "$repeats" "$steps"
