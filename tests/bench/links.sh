# Sourced by the benchmarks that put the ps behind links of their own (network.sh, many_cores.sh
# with MC_LINK): the links, and a run of `pstrain run` processes whose ps ports they shape.
# Needs root for tc. Callers set LINK_BASE_PORT (ps i listens on it + i) and call clear_links
# on exit: the shaping holds for the whole machine's loopback.

LINK_BASE_PORT="${LINK_BASE_PORT:-23000}"
run_pids=()

clear_links() { tc qdisc del dev lo root 2>/dev/null || true; }

# shape_links RATE PS: each of the PS ps ports' two directions at RATE (tc's units: 1gbit,
# 10gbit), shared by every connection to that ps as a node's card is; "unlimited": none.
# Unclassified bytes (HTTP, everything else on loopback) go unshaped (htb's direct queue).
shape_links() {
  clear_links
  [ "$1" = unlimited ] && return
  tc qdisc add dev lo root handle 1: htb default 9999
  local i port
  for i in $(seq 0 $(($2 - 1))); do
    port=$((LINK_BASE_PORT + i))
    # Burst: a 64 KiB loopback segment and a little more, as a card's ring would hold.
    tc class add dev lo parent 1: classid "1:$((100 + i))" htb rate "$1" ceil "$1" burst 128k cburst 128k quantum 65536
    tc class add dev lo parent 1: classid "1:$((200 + i))" htb rate "$1" ceil "$1" burst 128k cburst 128k quantum 65536
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport "$port" 0xffff flowid "1:$((100 + i))"
    tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport "$port" 0xffff flowid "1:$((200 + i))"
  done
}

# run_processes BIN DIR PS WORKERS ARGS...: PS ps and WORKERS workers as `pstrain run` processes,
# as pods are, logging to DIR/<role>-<index>/ and DIR.<role>-<index>.out; waits until worker 0
# has written its result (or is gone), then stops them all. DIR.start holds the start time.
run_processes() {
  local bin=$1 dir=$2 ps=$3 workers=$4
  shift 4
  local hosts="" i
  for i in $(seq 0 $((ps - 1))); do hosts+="${hosts:+,}127.0.0.1:$((LINK_BASE_PORT + i))"; done
  local common=(--ps "$ps" --workers "$workers" --ps-hosts "$hosts" --log-to-stdout false "$@")
  # start ROLE INDEX PORT_FLAG PORT HTTP_PORT
  start() {
    "$bin" run --role "$1" --index "$2" "$3" "$4" --http-port "$5" --log-dir "$dir/$1-$2" \
      "${common[@]}" >"$dir.$1-$2.out" 2>&1 &
    run_pids+=($!)
  }
  date +%s.%N >"$dir.start"
  run_pids=()
  for i in $(seq 0 $((ps - 1))); do
    start ps "$i" --ps-port "$((LINK_BASE_PORT + i))" "$((LINK_BASE_PORT + 100 + i))"
  done
  for i in $(seq 0 $((workers - 1))); do
    start worker "$i" --worker-port "$((LINK_BASE_PORT + 200 + i))" "$((LINK_BASE_PORT + 300 + i))"
  done
  # Worker 0 writes result.json once the run has ended, then serves until stopped.
  local chief=${run_pids[$ps]} waited=0
  until [ -s "$dir/worker-0/result.json" ] || [ $waited -ge 3000 ]; do
    kill -0 "$chief" 2>/dev/null || break
    sleep 0.2
    waited=$((waited + 1))
  done
  kill "${run_pids[@]}" 2>/dev/null
  wait "${run_pids[@]}" 2>/dev/null
  run_pids=()
  cp "$dir/worker-0/result.json" "$dir.json" 2>/dev/null || {
    echo "{}" >"$dir.json"
    for i in "$dir".*.out; do tail -n 3 "$i" >&2; done
  }
}
