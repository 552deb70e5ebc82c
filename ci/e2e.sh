#!/usr/bin/env bash
# End-to-end test of the chart and the daemon together, without Kubernetes: builds the pstrain
# image, renders the chart from values.yml with that image, and runs every pod of the rendered
# StatefulSets as a Docker container the way a kubelet would (tests/e2e/cmd/podrun reads the
# rendered manifests), on a Docker network whose DNS answers the headless Services' names.
#
# Scenario "cluster": all pods start together in a shuffled order; training must reach its final
# global step, `docker exec mnist-ps-1 tail /tmp/mnist-log/deploy.log` must show ps-1's global
# steps, every pod must be ready (podrun runs the readiness and liveness probes) and every
# container still running afterwards (no exit, no restart, no OOM kill), the node's log directory
# must hold one deploy.log per pod with only that pod's lines, and every pod must stop cleanly on
# SIGTERM. Scenario "workers first": the workers start before any ps exists, wait
# for the ps DNS names, and train once the ps pods start. Scenario "reinstall": after a run has
# completed, its pods and network are removed (helm uninstall) and the chart rendered again with
# the same values (helm install: a new run id), on the same node directory: the new pods must
# train a new run to its last step, not take the old one's checkpoints and completion record.
#
# Longer runs (a few thousand global steps, at about 800 per second here), each a fault:
# "helm test": the chart's test pod (podrun test, as `helm test`) succeeds while the cluster
# trains, and fails with pstrain's one line and exit code 4 once the ps containers are stopped.
# "ps killed": `docker kill` of mnist-ps-1 a third into the run, then the pod recreated as a
# StatefulSet does (podrun recreate: same hostname, DNS names, hostPath volume): the ps restores
# its checkpoint, the workers reconnect, and training completes. "worker cut off": mnist-worker-0's
# pod is disconnected from the network for 5 s a third into the run, then connected again with
# its DNS names: training completes, and the pause and any reconnection are reported.
#
# Needs root, Docker, and Go (at /usr/local/go or on PATH); helm is the one ci/chart-test.sh
# builds. The base image debian:bookworm-slim is made with debootstrap when it is not present,
# so no registry is needed; apt inside `docker build` needs deb.debian.org.
# Environment: PSTRAIN_E2E_IMAGE (default pstrain:e2e), PSTRAIN_E2E_TIMEOUT (seconds each wait
# may take, default 600), PSTRAIN_TOOLS_DIR (as for ci/chart-test.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

image="${PSTRAIN_E2E_IMAGE:-pstrain:e2e}"
timeout="${PSTRAIN_E2E_TIMEOUT:-600}"
base=debian:bookworm-slim
network=pstrain-e2e
release=mnist
# The node directory of values.yml's log volume (hostPath /tmp/mnist) for the pods' namespace
# (podrun's default): pod P writes P/deploy.log there.
log_volume=tmp/mnist/default

work="$(mktemp -d)"
podrun="$work/podrun"
kubelets=() # the podrun processes running pods (see start_pods)
stop_kubelets() {
  local pid
  for pid in "${kubelets[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${kubelets[@]}"; do wait "$pid" 2>/dev/null; done
  kubelets=()
}
# end_scenario: stops the kubelets and the scenario's pods, removes its network.
end_scenario() {
  stop_kubelets
  docker stop "${pods[@]}" >/dev/null 2>&1
  "$podrun" down -network "$network" >/dev/null
}
cleanup() {
  stop_kubelets
  [ -x "$podrun" ] && "$podrun" down -network "$network" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

source ci/checks.sh
# The e2e's closing lines: its duration, then the count.
finish() {
  echo "e2e took $SECONDS s"
  summary
}
# check NAME CMD...: the check passes when CMD succeeds; its output explains a failure.
check() {
  local name="$1" out
  shift
  if out="$("$@" 2>&1)"; then pass "$name"; else fail "$name" "$out"; fi
}

# One run at a time on this Docker Engine: the pods' names and the network are fixed.
exec 9>"${TMPDIR:-/tmp}/pstrain-e2e.lock"
flock 9

# --- tools, base image, image ----------------------------------------------------------------

echo "== tools and image"
if ! command -v go >/dev/null; then
  fail "tools: go not found (install Go at /usr/local/go)"
  finish
fi
helm="${PSTRAIN_TOOLS_DIR:-$(go env GOPATH)/pstrain-chart-tools}/bin/helm"
if [ ! -x "$helm" ]; then
  echo "building helm with ci/chart-test.sh (which also runs the chart checks)"
  bash ci/chart-test.sh >"$work/chart-test.log" 2>&1
fi
export HELM_CONFIG_HOME="$work/helm/config" HELM_CACHE_HOME="$work/helm/cache" \
  HELM_DATA_HOME="$work/helm/data"
if out="$(cd tests/e2e && go vet ./... && go test ./... && go build -o "$podrun" ./cmd/podrun 2>&1)" &&
  [ -x "$helm" ]; then
  pass "tools: $("$helm" version --template '{{.Version}}'), podrun (go vet, go test)"
  "$podrun" down -network "$network" # what a run that was killed left behind
else
  fail "tools: helm or podrun" "$out$(tail -n 20 "$work/chart-test.log" 2>/dev/null)"
  finish
fi

# make_base_image: debian:bookworm-slim from Debian's archive, slimmed as Debian's -slim images
# are: no documentation, manual pages or translations, now or from packages installed later.
make_base_image() {
  local rootfs="$work/rootfs"
  command -v debootstrap >/dev/null || bash ci/install-deps.sh debootstrap || return 1
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian || return 1
  printf 'path-exclude /usr/share/%s\n' 'doc/*' 'man/*' 'info/*' 'locale/*' 'lintian/*' \
    >"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
  echo 'path-include /usr/share/doc/*/copyright' >>"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
  find "$rootfs/usr/share/doc" ! -type d ! -name copyright -delete
  rm -rf "$rootfs"/usr/share/{man,info,locale,lintian}/* "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
  tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$base"
}
if docker image inspect "$base" >/dev/null 2>&1; then
  pass "base image $base is present"
elif out="$(make_base_image 2>&1)"; then
  pass "base image $base made with debootstrap"
else
  fail "base image $base: debootstrap and docker import" "$out"
  finish
fi

build_start=$SECONDS
if out="$(docker build -f docker/Dockerfile --build-arg DATASET=fashion-mnist -t "$image" . 2>&1)"; then
  pass "image $image built in $((SECONDS - build_start)) s (Fashion-MNIST): $(docker image ls --format '{{.Size}}' "$image")"
else
  fail "image $image: docker build" "$out"
  finish
fi

# --- the rendered chart ----------------------------------------------------------------------

echo "== chart rendered from values.yml"
# render FILE [HELM FLAGS...]: the chart rendered from values.yml with the image under test, and
# the flags given, into FILE.
render() {
  local file="$1"
  shift
  "$helm" template "$release" chart --values values.yml \
    --set "ps.image.repository=${image%:*},ps.image.tag=${image##*:},ps.image.pullPolicy=Never" \
    --set "worker.image.repository=${image%:*},worker.image.tag=${image##*:},worker.image.pullPolicy=Never" \
    "$@" >"$file"
}
# trainsteps FILE: the global steps the rendered ConfigMap trains for.
trainsteps() { sed -n 's/^ *trainSteps: *//p' "$1"; }
manifests="$work/manifests.yaml"
if out="$(render "$manifests" 2>&1)"; then
  pass "helm template $release chart --values values.yml, with image $image"
else
  fail "helm template" "$out"
  finish
fi
train_steps="$(trainsteps "$manifests")"
pods=(mnist-ps-0 mnist-ps-1 mnist-worker-0 mnist-worker-1)

# --- helpers on the pods ---------------------------------------------------------------------

# start_pods NODE [STATEFULSET...]: starts the pods (all when none is named) with podrun, NODE as
# the node's root, and waits until they have all started. podrun stays in the background as
# their kubelet, running their probes, until stop_kubelets; its output is in
# $work/kubelet-$scenario-N.log.
start_pods() {
  local node="$1" log
  shift
  log="$work/kubelet-$scenario-${#kubelets[@]}.log"
  "$podrun" up -network "$network" -node-root "$node" "$@" <"$manifests" >"$log" 2>&1 &
  kubelets+=($!)
  wait_until "all pods started" started "$log" $!
}
started() {
  grep -q "^all [0-9]* pods started" "$1" && return 0
  kill -0 "$2" 2>/dev/null && return 1
  cat "$1"
  return 2
}
# state POD: "<status> restarts=<n> oomkilled=<bool> exit=<code>" of the pod's container.
state() {
  docker inspect --format \
    '{{.State.Status}} restarts={{.RestartCount}} oomkilled={{.State.OOMKilled}} exit={{.State.ExitCode}}' "$1"
}
# pods_running POD...: every pod's container runs and has never been restarted, neither by
# Docker (restart policy) nor by podrun (liveness probe).
pods_running() {
  local pod status ok=0
  for pod in "$@"; do
    status="$(state "$pod" 2>&1)"
    echo "$pod: $status"
    [[ "$status" == "running restarts=0 "* ]] || ok=1
  done
  if cat "$work/kubelet-$scenario-"*.log | grep "restarting the container"; then ok=1; fi
  return $ok
}
# running_or_give_up POD...: as pods_running, but a failure means "stop waiting" to wait_until.
running_or_give_up() { pods_running "$@" >/dev/null || { pods_running "$@"; return 2; }; }
# wait_until DESCRIPTION CMD...: polls CMD once a second until it succeeds. Fails at the
# deadline, or at once when CMD returns 2; then prints CMD's last output.
wait_until() {
  local description="$1" deadline=$((SECONDS + timeout)) out rc
  shift
  while :; do
    out="$("$@" 2>&1)"
    rc=$?
    [ $rc -eq 0 ] && return 0
    if [ $rc -eq 2 ] || [ $SECONDS -ge $deadline ]; then
      [ $rc -eq 2 ] && echo "gave up waiting for $description:" || echo "no $description after $timeout s"
      echo "$out"
      return 1
    fi
    sleep 1
  done
}
# pod_logs POD...: the tail of each pod's stdout, to explain a failure.
pod_logs() {
  local pod
  for pod in "$@"; do
    echo "--- docker logs $pod"
    docker logs --tail 15 "$pod" 2>&1
  done
}
# trained POD...: worker 0's result.json says training reached the final global step; gives up
# when a pod stops.
trained() {
  running_or_give_up "$@" || return 2
  grep -qsE "\"global_step\" *: *$train_steps\b" "$logs/mnist-worker-0/result.json" || return 1
}
# own_lines_only LOG POD: the log holds exactly one start of POD, and lines of no other pod.
own_lines_only() {
  local log="$1" pod="$2" role index marker starts others
  role="${pod%-*}" && role="${role##*-}" && index="${pod##*-}"
  marker="$([ "$role" = ps ] && echo PS || echo Worker) $index:"
  starts="$(grep -c "pstrain [^ ]*: $role $index of " "$log")"
  others="$(grep -oE '(PS|Worker) [0-9]+:' "$log" | sort -u | grep -vxF "$marker")"
  if [ "$starts" != 1 ] || [ -n "$others" ]; then
    echo "$log: $starts start lines of $role $index; lines of others: ${others:-none}"
    return 1
  fi
}

# --- scenario: the whole cluster -------------------------------------------------------------

echo "== cluster: ${pods[*]} started together"
scenario=cluster
node="$work/node-$scenario"
logs="$node/$log_volume"
if start_pods "$node" >"$work/out" 2>&1; then
  grep -hE "^(starting|all) " "$work/kubelet-$scenario-"*.log | sed 's/^/    /'
  grep -hE "^mnist-ps-1: docker run --name mnist-ps-1(-sandbox)? " "$work/kubelet-$scenario-"*.log |
    sed -E 's/ --label [^ ]+//g; s/^/    /'
  check "pods started from the rendered StatefulSets: ${pods[*]}" pods_running "${pods[@]}"
else
  fail "podrun up: the pods did not start" "$(cat "$work/out")"
  finish
fi

resources() {
  local pod ok=0 got
  for pod in "${pods[@]}"; do
    got="$(docker inspect --format '{{.Config.Hostname}} cpus={{.HostConfig.NanoCpus}} memory={{.HostConfig.Memory}} user={{.Config.User}} readonly={{.HostConfig.ReadonlyRootfs}} capdrop={{.HostConfig.CapDrop}}' "$pod")"
    echo "$pod: $got"
    [ "$got" = "$pod cpus=200000000 memory=131072000 user=10001:10001 readonly=true capdrop=[ALL]" ] || ok=1
  done
  return $ok
}
check "every pod: its hostname, values.yml's limits (200m CPU, 125Mi), user 10001, read-only root, no capabilities" resources

if out="$(wait_until "global step $train_steps in worker 0's result.json" trained "${pods[@]}")"; then
  pass "training reached global step $train_steps ($(grep -oE '"(test_accuracy|training_elapsed_s)"[^,]*' \
    "$logs/mnist-worker-0/result.json" | tr -d '"' | paste -sd ' '))"
else
  fail "training to global step $train_steps" "$out$(pod_logs "${pods[@]}")"
fi

# Each pod's last line of training: a ps after the final step, a worker when it goes idle.
all_ended() {
  running_or_give_up "${pods[@]}" || return 2
  grep -qs "Training elapsed time" "$logs/mnist-ps-0/deploy.log" "$logs/mnist-ps-1/deploy.log" &&
    grep -qs "completed; idle until stopped" "$logs/mnist-worker-0/deploy.log" &&
    grep -qs "completed; idle until stopped" "$logs/mnist-worker-1/deploy.log" || return 1
}
check "every pod logged the end of its training" wait_until "the end of training in every log" all_ended

tail_ps1() {
  local out
  out="$(docker exec mnist-ps-1 tail /tmp/mnist-log/deploy.log)" || return 1
  echo "$out"
  grep -qE "PS 1: global step [0-9]+ done" <<<"$out" &&
    grep -qE "PS 1: global step $train_steps done" <<<"$out"
}
if out="$(tail_ps1 2>&1)"; then
  pass "docker exec mnist-ps-1 tail /tmp/mnist-log/deploy.log shows ps-1's global steps up to $train_steps"
  grep -E "global step" <<<"$out" | tail -n 3 | sed 's/^/    /'
else
  fail "docker exec mnist-ps-1 tail /tmp/mnist-log/deploy.log: no 'PS 1: global step $train_steps done'" "$out"
fi

# all_ready: podrun's last readiness report of every pod is "ready".
all_ready() {
  local pod last ok=0
  for pod in "${pods[@]}"; do
    last="$(cat "$work/kubelet-$scenario-"*.log | grep -E "^$pod: (ready|not ready)" | tail -n 1)"
    echo "${last:-$pod: never ready}"
    [[ "$last" == "$pod: ready"* ]] || ok=1
  done
  return $ok
}
check "every pod is ready (readiness probe)" wait_until "every pod ready" all_ready
check "after training every container still runs, never restarted (restart policy or liveness probe)" \
  pods_running "${pods[@]}"
not_oom_killed() {
  local pod status ok=0
  for pod in "${pods[@]}"; do
    status="$(state "$pod")"
    echo "$pod: $status"
    [[ "$status" == *"oomkilled=false"* ]] || ok=1
  done
  return $ok
}
check "no container was OOM-killed" not_oom_killed

one_log_per_pod() {
  local pod
  echo "$logs: $(ls "$logs" | tr '\n' ' ')"
  [ "$(ls "$logs")" = "$(printf '%s\n' "${pods[@]}")" ] || return 1
  for pod in "${pods[@]}"; do
    [ -f "$logs/$pod/deploy.log" ] || { echo "no $pod/deploy.log"; return 1; }
    own_lines_only "$logs/$pod/deploy.log" "$pod" || return 1
  done
}
check "the node's log directory holds one deploy.log per pod, each with only its pod's lines" one_log_per_pod

# Deleting the pods: SIGTERM, then exit 0 within the grace period. The kubelet stops first, so
# that no liveness probe restarts a stopping container.
stopped_cleanly() {
  local pod ok=0 status
  docker stop "${pods[@]}" >/dev/null
  for pod in "${pods[@]}"; do
    status="$(state "$pod")"
    echo "$pod: $status"
    [[ "$status" == "exited restarts=0 oomkilled=false exit=0" ]] &&
      grep -q "received SIGTERM, exiting" "$logs/$pod/deploy.log" || ok=1
  done
  return $ok
}
stop_kubelets
check "every pod exits 0 on SIGTERM (pod deletion), logging it" stopped_cleanly
"$podrun" down -network "$network" >/dev/null

# --- scenario: workers before any ps ---------------------------------------------------------

echo "== workers first: the workers start before any ps exists"
scenario=workers-first
node="$work/node-$scenario"
logs="$node/$log_volume"
workers=(mnist-worker-0 mnist-worker-1)
# waits_for_dns: worker 0 has logged that it waits for a ps DNS name, and no ps exists.
waits_for_dns() {
  running_or_give_up "${workers[@]}" || return 2
  grep -m 1 "waiting for mnist-ps-.*DNS name did not resolve" "$logs/mnist-worker-0/deploy.log" || return 1
  [ -z "$(docker ps --all --quiet --filter name='^mnist-ps-')" ] || { echo "a ps exists"; return 2; }
}
if start_pods "$node" mnist-worker >"$work/out" 2>&1; then
  check "worker 0 logs that it waits for the ps DNS names while no ps exists" \
    wait_until "'waiting for DNS name' in worker 0's log" waits_for_dns
  if start_pods "$node" mnist-ps >"$work/out" 2>&1 &&
    out="$(wait_until "global step $train_steps in worker 0's result.json" trained "${pods[@]}")"; then
    pass "once the ps pods start, training reaches global step $train_steps"
  else
    fail "training after the ps pods start" "$(cat "$work/out")$out$(pod_logs "${pods[@]}")"
  fi
  check "the workers waited without a restart" pods_running "${workers[@]}"
else
  fail "podrun up mnist-worker: the workers did not start" "$(cat "$work/out")"
fi
stop_kubelets
"$podrun" down -network "$network" >/dev/null

# --- scenario: uninstall, and install again with the same values -----------------------------

echo "== reinstall: a completed run, helm uninstall, helm install with the same values on the same node"
scenario=reinstall
node="$work/node-$scenario"
logs="$node/$log_volume"
# run_id FILE: the run id of the rendered ConfigMap; result_run POD: the run of POD's result.json.
run_id() { sed -n 's/^ *runId: *"\(.*\)"$/\1/p' "$1"; }
result_run() { grep -oE '"run_id" *: *"[0-9]+"' "$logs/$1/result.json" 2>/dev/null | grep -oE '[0-9]+'; }
first="$work/manifests-$scenario-1.yaml"
second="$work/manifests-$scenario-2.yaml"
if out="$(render "$first" 2>&1 && render "$second" 2>&1)" && [ -n "$(run_id "$first")" ] &&
  [ "$(run_id "$first")" != "$(run_id "$second")" ]; then
  pass "two renderings of the same values, as two helm installs, have two run ids: $(run_id "$first"), $(run_id "$second")"
else
  fail "helm template twice: a run id in each ConfigMap, not the same" "$out$(grep -h runId "$first" "$second")"
fi
manifests="$first"
if start_pods "$node" >"$work/out" 2>&1 &&
  out="$(wait_until "global step $train_steps in worker 0's result.json" trained "${pods[@]}")" &&
  out="$(wait_until "the end of training in every log" all_ended)"; then
  first_run="$(result_run mnist-worker-0)"
  pass "first install: run $first_run trained to global step $train_steps and completed"
else
  fail "first install: training to global step $train_steps" "$out$(cat "$work/out")$(pod_logs "${pods[@]}")"
fi
# helm uninstall: the pods, their containers and the network go; the node directory stays.
stop_kubelets
docker stop "${pods[@]}" >/dev/null 2>&1
"$podrun" down -network "$network" >/dev/null
check "after uninstall the node directory still holds the completion record and the checkpoints" \
  ls "$logs/mnist-worker-0/completed.json" "$logs/mnist-ps-0/checkpoint.bin" "$logs/mnist-ps-1/checkpoint.bin"
# retrained: worker 0's result.json is of another run, at the last step; gives up when worker 0
# takes the old run for its own.
retrained() {
  running_or_give_up "${pods[@]}" || return 2
  if grep -h "completed already" "$logs/mnist-worker-0/deploy.log"; then return 2; fi
  local run
  run="$(result_run mnist-worker-0)"
  echo "worker 0's result.json: run ${run:-none}"
  [ -n "$run" ] && [ "$run" != "$first_run" ] && trained "${pods[@]}"
}
manifests="$second"
if start_pods "$node" >"$work/out" 2>&1 &&
  out="$(wait_until "a new run at global step $train_steps in worker 0's result.json" retrained)"; then
  pass "second install, same values, same node directory: a new run $(result_run mnist-worker-0) trained to global step $train_steps"
  grep -h "belongs to another run" "$logs"/mnist-ps-*/deploy.log | cut -c 1-160 | sed 's/^/    /'
else
  fail "second install: a new run to global step $train_steps" "$out$(cat "$work/out")$(pod_logs "${pods[@]}")"
fi
both_ended() { [ "$(grep -c "Training elapsed time" "$logs/mnist-ps-0/deploy.log")" = 2 ]; }
check "ps 0's deploy.log holds the end of both runs" wait_until "the end of the second run in ps 0's log" both_ended
end_scenario


# --- helpers of the longer runs --------------------------------------------------------------

# global_step LOG: the last global step in LOG ("global step N done" of a ps, "(global step: N)"
# of a worker, "checkpoint at global step N").
global_step() { tail -n 20 "$1" 2>/dev/null | grep -oE 'global step:? [0-9]+' | tail -n 1 | grep -oE '[0-9]+$'; }
# reached POD STEP: POD's log shows global step STEP or later; gives up when a pod stops.
reached() {
  running_or_give_up "${pods[@]}" || return 2
  local step
  step="$(global_step "$logs/$1/deploy.log")"
  echo "$1: global step ${step:-none}"
  [ -n "$step" ] && [ "$step" -ge "$2" ]
}
# longest_pause LOG PATTERN: the longest time between two consecutive lines of LOG matching
# PATTERN, from their time stamps ("[2026-11-21 12:24:37.312909] ..."), as "S s after HH:MM:SS".
longest_pause() {
  grep -E "$2" "$1" | awk -F'[] []' '{
      split($3, t, ":"); now = t[1] * 3600 + t[2] * 60 + t[3]
      if (NR > 1 && now - last > longest) { longest = now - last; at = substr(last_clock, 1, 8) }
      last = now; last_clock = $3
    } END { printf "%.1f s after %s\n", longest, at }'
}
# run_test MANIFESTS: podrun test, as helm test --logs, of the chart's test pod in MANIFESTS.
run_test() { "$podrun" test -network "$network" -node-root "$node" -timeout 60s <"$1"; }
# test_output LOG: what the test pod printed, as podrun test reports it (indented).
test_output() { sed -n '/^mnist-test: output:/,/^mnist-test: [a-z]/p' "$1" | grep '^    '; }

# --- scenario: helm test ---------------------------------------------------------------------

echo "== helm test: the chart's test pod while the cluster trains, and once the ps are stopped"
scenario=helm-test
node="$work/node-$scenario"
logs="$node/$log_volume"
manifests="$work/manifests-$scenario.yaml"
short_test="$work/test-pod-short.yaml"
short_timeout=3
# A run far longer than this scenario (about 800 global steps/s here), so it trains throughout.
# The failing case is the same test pod rendered with a short timeout.
if out="$(render "$manifests" --set hyperparams.trainsteps=100000 2>&1 &&
  render "$short_test" --set hyperparams.trainsteps=100000 --set test.timeoutSeconds=$short_timeout \
    --show-only templates/tests/pod.yaml 2>&1)" &&
  train_steps="$(trainsteps "$manifests")" && start_pods "$node" >"$work/out" 2>&1; then
  # As `helm install` then `helm test`: the test starts with the pods and waits for progress.
  test_ok="$work/test-$scenario-ok.log"
  run_test "$manifests" >"$test_ok" 2>&1
  rc=$?
  succeeded_training() {
    local target
    [ $rc -eq 0 ] && grep -q "^mnist-test: succeeded" "$test_ok" || return 1
    for target in "mnist-ps-0.mnist-ps:8090 ps 0" "mnist-ps-1.mnist-ps:8090 ps 1" \
      "mnist-worker-0.mnist-worker:8090 worker 0"; do
      test_output "$test_ok" | grep -qE "^    $target: training: global step [1-9][0-9]*/$train_steps\b" || return 1
    done
  }
  if succeeded_training; then
    pass "helm test (the chart's test pod: pstrain$(grep -oE ' status --wait [0-9]+ .*' "$test_ok" | head -n 1)) succeeds while the cluster trains"
    test_output "$test_ok" | grep -E ': training: ' | cut -c 1-110
  else
    fail "helm test during training: podrun test exit code $rc" "$(cat "$test_ok")"
  fi
  # Still training after the test: worker 0's /status, read with the image's pstrain status.
  still_training() {
    local out step
    out="$(docker exec mnist-worker-0 pstrain status localhost:8090 2>&1 | head -n 1)"
    echo "$out"
    step="$(grep -oE "worker 0: training: global step [0-9]+/$train_steps\b" <<<"$out" | grep -oE '[0-9]+/' | tr -d /)"
    [ -n "$step" ] && [ "$step" -gt 0 ] && [ "$step" -lt "$train_steps" ]
  }
  if out="$(still_training)"; then
    pass "after the test the cluster is still training (docker exec mnist-worker-0 pstrain status localhost:8090):"
    echo "    $out"
  else
    fail "worker 0 is still training after the test" "$out"
  fi

  # Without the ps: the kubelet stops first (no liveness restart), then the ps containers.
  stop_kubelets
  docker stop mnist-ps-0 mnist-ps-1 >/dev/null
  test_failed="$work/test-$scenario-failed.log"
  test_start=$SECONDS
  run_test "$short_test" >"$test_failed" 2>&1
  rc=$?
  took=$((SECONDS - test_start))
  # One line from pstrain, naming a ps and the timeout, and exit code 4 (a peer not reached).
  failed_clearly() {
    local lines
    lines="$(test_output "$test_failed")"
    [ $rc -ne 0 ] && grep -q "^mnist-test: failed: exit code 4$" "$test_failed" &&
      [ "$(wc -l <<<"$lines")" = 1 ] &&
      grep -qE "^    pstrain: mnist-ps-[01]\.mnist-ps:8090: .+ after waiting $short_timeout s$" <<<"$lines" &&
      [ $took -le $((short_timeout + 15)) ]
  }
  if failed_clearly; then
    pass "with the ps stopped, helm test (--wait $short_timeout) fails in $took s, exit code 4, with one line:"
    test_output "$test_failed"
  else
    fail "helm test without the ps: podrun test exit code $rc after $took s" "$(cat "$test_failed")"
  fi
else
  fail "helm test scenario: rendering or starting the pods" "$out$(cat "$work/out")"
fi
end_scenario

# --- scenario: a ps killed and recreated ------------------------------------------------------

echo "== ps killed: docker kill mnist-ps-1 a third into the run, then the pod is recreated"
scenario=ps-killed
node="$work/node-$scenario"
logs="$node/$log_volume"
manifests="$work/manifests-$scenario.yaml"
# About 11 s of training; a checkpoint every second, so there is one before the kill.
if out="$(render "$manifests" --set hyperparams.trainsteps=9000 --set checkpoints.everySeconds=1 2>&1)" &&
  train_steps="$(trainsteps "$manifests")" && start_pods "$node" >"$work/out" 2>&1; then
  kill_at=$((train_steps / 3))
  checkpointed() {
    reached mnist-ps-1 "$kill_at" || return
    grep -m 1 "PS 1: checkpoint at global step" "$logs/mnist-ps-1/deploy.log"
  }
  # lost POD: both workers have logged the lost connection to POD.
  lost() {
    grep -qs "Worker 0: lost ps $1" "$logs/mnist-worker-0/deploy.log" &&
      grep -qs "Worker 1: lost ps $1" "$logs/mnist-worker-1/deploy.log"
  }
  if out="$(wait_until "ps 1 at global step $kill_at with a checkpoint" checkpointed)" &&
    killed_at="$(global_step "$logs/mnist-ps-1/deploy.log")" &&
    docker kill mnist-ps-1 >/dev/null && [ "$(timeout 60 docker wait mnist-ps-1)" = 137 ] &&
    out="$(wait_until "both workers to log that they lost ps 1" lost mnist-ps-1)"; then
    pass "docker kill mnist-ps-1 at its global step $killed_at of $train_steps (exit 137); the workers logged it:"
    grep -h "lost ps mnist-ps-1" "$logs"/mnist-worker-[01]/deploy.log | sed 's/^/    /' | cut -c 1-150
    if "$podrun" recreate -network "$network" -node-root "$node" mnist-ps-1 <"$manifests" \
      >"$work/recreate-$scenario.log" 2>&1; then
      pass "podrun recreate mnist-ps-1: same hostname, DNS names and hostPath volume"
    else
      fail "podrun recreate mnist-ps-1" "$(cat "$work/recreate-$scenario.log")"
    fi
  else
    fail "killing mnist-ps-1 a third into the run" "$out$(state mnist-ps-1)$(pod_logs "${pods[@]}")"
  fi
  if out="$(wait_until "global step $train_steps in worker 0's result.json" trained "${pods[@]}")"; then
    pass "training completed: global step $train_steps ($(grep -oE '"test_accuracy"[^,]*' \
      "$logs/mnist-worker-0/result.json" | tr -d '"'))"
  else
    fail "training to global step $train_steps after the kill" "$out$(pod_logs "${pods[@]}")"
  fi
  restored="$(grep -h "PS 1: restored .*checkpoint" "$logs/mnist-ps-1/deploy.log")"
  if [ -n "$restored" ]; then
    pass "the recreated ps 1 restored its checkpoint:"
    sed 's/^/    /' <<<"$restored"
  else
    fail "no 'PS 1: restored … checkpoint' in ps 1's log" "$(grep -vE 'global step [0-9]+ done' "$logs/mnist-ps-1/deploy.log" | tail -n 20)"
  fi
  reconnected="$(grep -h "reconnected to ps mnist-ps-1" "$logs"/mnist-worker-[01]/deploy.log)"
  if grep -q "Worker 0: reconnected" <<<"$reconnected" && grep -q "Worker 1: reconnected" <<<"$reconnected"; then
    pass "both workers reconnected to ps 1:"
    sed 's/^/    /' <<<"$reconnected"
  else
    fail "both workers log 'reconnected to ps mnist-ps-1'" "$reconnected$(pod_logs mnist-worker-0 mnist-worker-1)"
  fi
else
  fail "ps-killed scenario: rendering or starting the pods" "$out$(cat "$work/out")"
fi
end_scenario

# --- scenario: a worker cut off the network ---------------------------------------------------

echo "== worker cut off: docker network disconnect of mnist-worker-0 for 5 s, a third into the run"
scenario=partition
node="$work/node-$scenario"
logs="$node/$log_volume"
manifests="$work/manifests-$scenario.yaml"
outage=5
# The pod's network namespace is its sandbox's (podrun runs every container of the pod in it).
sandbox=mnist-worker-0-sandbox
# aliases CONTAINER: its DNS names on the network, without the ones Docker adds itself (its
# name, short id and hostname).
aliases() {
  local id hostname
  id="$(docker inspect --format '{{.Id}}' "$1" | cut -c 1-12)"
  hostname="$(docker inspect --format '{{.Config.Hostname}}' "$1")"
  docker inspect --format "{{range (index .NetworkSettings.Networks \"$network\").Aliases}}{{println .}}{{end}}" "$1" |
    grep -vxF -e "$1" -e "$id" -e "$hostname" -e '' | sort -u
}
address() { docker inspect --format "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$1"; }
if out="$(render "$manifests" --set hyperparams.trainsteps=9000 2>&1)" &&
  train_steps="$(trainsteps "$manifests")" && start_pods "$node" >"$work/out" 2>&1; then
  cut_at=$((train_steps / 3))
  if out="$(wait_until "worker 0 at global step $cut_at" reached mnist-worker-0 "$cut_at")" &&
    names="$(aliases $sandbox)" && before="$(address $sandbox)" && [ -n "$names" ] &&
    out="$(docker network disconnect "$network" $sandbox 2>&1)"; then
    cut_step="$(global_step "$logs/mnist-worker-0/deploy.log")"
    sleep "$outage" # the fault: no network for this long
    alias_args=()
    for name in $names; do alias_args+=(--alias "$name"); done
    if out="$(docker network connect "${alias_args[@]}" "$network" $sandbox 2>&1)" &&
      [ "$(aliases $sandbox)" = "$names" ]; then
      pass "mnist-worker-0 disconnected at global step $cut_step for $outage s, then reconnected with its DNS names $(paste -sd ' ' <<<"$names") (address $before, then $(address $sandbox))"
    else
      fail "docker network connect mnist-worker-0 with its DNS names" "$out$(aliases $sandbox)"
    fi
  else
    fail "disconnecting mnist-worker-0 a third into the run" "$out"
  fi
  if out="$(wait_until "global step $train_steps in worker 0's result.json" trained "${pods[@]}")"; then
    pass "training completed: global step $train_steps ($(grep -oE '"test_accuracy"[^,]*' \
      "$logs/mnist-worker-0/result.json" | tr -d '"'))"
  else
    fail "training to global step $train_steps after the disconnection" "$out$(pod_logs "${pods[@]}")"
  fi
  check "no pod was restarted (a $outage s outage is shorter than the liveness probe's tolerance)" \
    pods_running "${pods[@]}"
  # What the daemon did: the pause in worker 0's steps, and any lost connection it logged.
  pause="$(longest_pause "$logs/mnist-worker-0/deploy.log" 'Worker 0: training step')"
  if [ "$(cut -d . -f 1 <<<"$pause")" -ge $((outage - 1)) ]; then
    pass "worker 0 made no step while cut off: its longest pause between steps was $pause"
  else
    fail "worker 0 paused while cut off (longest pause between steps: $pause)"
  fi
  events="$(grep -hE 'lost ps|reconnected to ps|connection from .* ended' "$logs"/*/deploy.log |
    grep -v 'closed by the peer' | cut -c 1-160)"
  echo "    ${events:-no lost or reconnected connection logged: the connections stalled and resumed}" | sed '2,$s/^/    /'
else
  fail "partition scenario: rendering or starting the pods" "$out$(cat "$work/out")"
fi
stop_kubelets
docker stop "${pods[@]}" >/dev/null 2>&1

finish
