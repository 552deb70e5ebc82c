#!/usr/bin/env bash
# The chart's Grafana dashboard (chart/files/dashboard.json) against a real run: starts a
# Prometheus server (Debian's prometheus) and `pstrain local` (2 ps, 2 workers), has Prometheus
# scrape each process's /metrics with the labels the Prometheus Operator gives a pod's target
# (namespace, pod), waits until it has scraped every process training and worker 0's test
# accuracy, stops the run, then evaluates each query of each panel at that moment through
# Prometheus' HTTP API (/api/v1/query, by `promtool query instant`), with the dashboard's
# variables set to that run, and fails naming
# every panel whose query returns no data: an error, no series, or NaN only (what a panel draws
# as nothing). It also shows that it names a panel whose metric does not exist.
#
# Then the chart's PstrainTrainingStalled alert (chart/files/alerts.yaml, rendered by helm and
# loaded by that Prometheus) against a second run, of 1 ps and 1 worker: its expression returns
# nothing while the run trains, the alert fires once the worker is stopped (SIGSTOP), and it
# resolves once the worker goes on (SIGCONT).
#
# Needs build/pstrain (ci/build.sh; or PSTRAIN=path/to/pstrain), prometheus and promtool (Debian's
# prometheus package), jq, curl, helm (on PATH, or the chart tools: ci/chart-test.sh tools) and
# the Fashion-MNIST files of Debian's dataset-fashion-mnist. About 40 s. The processes it starts
# it stops by their PIDs.
set -uo pipefail
cd "$(dirname "$0")/../.."
source ci/checks.sh
source ci/go-env.sh

pstrain="${PSTRAIN:-build/pstrain}"
dashboard=chart/files/dashboard.json
data=/usr/share/datasets/fashion-mnist
# The run as a release mnist in namespace training: the dashboard's variables $namespace and
# $release, and the labels the Prometheus Operator would give its pods' targets.
namespace=training
release=mnist
# The stall's run, in a namespace of its own: the alerts are rendered for it alone.
stall_namespace=stalled
# PstrainTrainingStalled's window: stalledMinutes, at least a minute, made this in the rendered
# rule, so that a stall shows within seconds.
window=5s
helm="$(command -v helm ||
  echo "${PSTRAIN_TOOLS_DIR:-$(go env GOPATH)/pstrain-chart-tools}/bin/helm")"

missing=""
[ -x "$pstrain" ] || missing+=" $pstrain (ci/build.sh)"
for tool in prometheus promtool jq curl; do
  command -v "$tool" >/dev/null || missing+=" $tool"
done
[ -x "$helm" ] || missing+=" helm (ci/chart-test.sh tools)"
[ -d "$data" ] || missing+=" $data (dataset-fashion-mnist)"
if [ -n "$missing" ]; then
  fail "dashboard: missing:$missing"
  summary
fi
if ! out="$(jq -e '[.. | objects | select(has("targets")) | .targets[] | .expr] | length > 0' \
  "$dashboard" 2>&1)"; then
  fail "dashboard: $dashboard is no JSON with panels' queries" "$out"
  summary
fi

work="$(mktemp -d)"
pids=()
paused=""  # a worker stopped with SIGSTOP, continued before the processes are stopped
stop() {
  local pid
  [ -n "$paused" ] && kill -CONT "$paused" 2>/dev/null
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap stop EXIT

# until DEADLINE_S WHAT CMD...: runs CMD every 0.1 s until it succeeds; fails naming WHAT, with
# the last output, after DEADLINE_S seconds.
until_ok() {
  local deadline=$((SECONDS + $1)) what="$2" out
  shift 2
  until out="$("$@" 2>&1)"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail "dashboard: $what, not within $((SECONDS - deadline + $1)) s" "$out"
      summary
    fi
    sleep 0.1
  done
}

# The release's alerts, the PrometheusRule's spec: a rules file, with the stall's window shortened.
if ! out="$("$helm" template "$release" chart --namespace "$stall_namespace" \
  --set metrics.prometheusRule.enabled=true --set metrics.prometheusRule.stalledMinutes=1 \
  --show-only templates/prometheusrule.yaml 2>&1)"; then
  fail "dashboard: helm template of the PrometheusRule" "$out"
  summary
fi
sed -n '/^spec:/,$p' <<<"$out" |
  sed "1d; s/^  //; s/\[1m\]/[$window]/; s/ offset 1m$/ offset $window/" >"$work/alerts.yaml"
if [ "$(grep -c -e "\[$window\]" -e " offset $window$" "$work/alerts.yaml")" != 2 ]; then
  fail "dashboard: no window of 1m in PstrainTrainingStalled as rendered" \
    "$(cat "$work/alerts.yaml")"
  summary
fi

# Prometheus, scraping the targets that targets.json will list and evaluating the alerts, 4
# times a second.
echo '[]' >"$work/targets.json"
cat >"$work/prometheus.yml" <<EOF
global: {scrape_interval: 250ms, scrape_timeout: 250ms, evaluation_interval: 250ms}
rule_files: ["$work/alerts.yaml"]
scrape_configs:
  - job_name: pstrain
    file_sd_configs: [{files: ["$work/targets.json"]}]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address=127.0.0.1:0 >"$work/prometheus.log" 2>&1 &
pids+=($!)
listening() { grep -o 'msg="Listening on" address=127.0.0.1:[0-9]*' "$work/prometheus.log"; }
until_ok 20 "Prometheus listening (prometheus.log)" listening
url="http://$(listening | sed 's/.*address=//')"
# query EXPR: the JSON vector of EXPR, at the moment in $work/time once there is one.
query() { promtool query instant -o json ${at:+--time="$at"} "$url" "$1"; }
until_ok 20 "Prometheus answering queries at $url" query 'vector(1)'

# The run: long enough to be scraped training whatever the machine; stopped once evaluated.
"$pstrain" local --ps 2 --workers 2 --data-dir "$data" --train-steps 1000000 \
  --eval-every-steps 100 --log-dir "$work/run" >"$work/run.log" 2>&1 &
run=$!
pids+=($run)
# pid_of RUN PROCESS: the PID of PROCESS (ps-0, worker-1) of the run in $work/RUN, from its first
# event.
pid_of() {
  jq -r 'select(.event == "started") | .pid' "$work/$1/$2/events.jsonl" 2>/dev/null | head -1
}
# started RUN NAMESPACE PROCESS...: once each has started, the processes of the run in $work/RUN
# are Prometheus' targets (and no others), each labelled as a pod of the release in NAMESPACE.
# Each process's HTTP port is on its command line.
started() {
  local run="$1" ns="$2" process pid port targets=()
  shift 2
  for process in "$@"; do
    pid="$(pid_of "$run" "$process")"
    if [ -z "$pid" ]; then
      echo "$process has not started; pstrain local says:"
      tail -3 "$work/$run.log"
      return 1
    fi
    port="$(tr '\0' '\n' <"/proc/$pid/cmdline" | grep -A1 -x -- --http-port | tail -1)"
    [ -n "$port" ] || { echo "$process (PID $pid) names no --http-port"; return 1; }
    targets+=("$(jq -n --arg t "127.0.0.1:$port" --arg ns "$ns" --arg pod "$release-$process" \
      '{targets: [$t], labels: {namespace: $ns, pod: $pod}}')")
  done
  # Written whole, then renamed: Prometheus reads the file when it changes.
  printf '%s\n' "${targets[@]}" | jq -s . >"$work/targets.json.new" &&
    mv "$work/targets.json.new" "$work/targets.json"
}
until_ok 30 "the 4 processes of pstrain local started" \
  started run "$namespace" ps-0 ps-1 worker-0 worker-1

# Every process scraped at 3 global steps or more while it trains, and worker 0's test accuracy;
# the moment Prometheus saw it is the one the panels are evaluated at, with the run stopped (its
# CPU to the queries).
scraped_training() {
  local out
  out="$(query "count(changes(pstrain_global_step{namespace=\"$namespace\"}[1m]) >= 2) == 4
    and on () count(pstrain_test_accuracy{namespace=\"$namespace\", role=\"worker\", ordinal=\"0\"}
      >= 0) == 1")" &&
    jq -er 'if length == 1 then .[0].value[0] else error("not yet") end' <<<"$out" >"$work/time" ||
    { echo "$out"; return 1; }
}
until_ok 60 "Prometheus scraping all 4 processes training, and worker 0's test accuracy" \
  scraped_training
pass "Prometheus scraped the 4 processes of pstrain local training"
kill "$run"
wait "$run"
at="$(cat "$work/time")"

# evaluate DASHBOARD: a line per query of every panel, "ok|empty|error<TAB>panel<TAB>refId<TAB>
# what came back". Grafana's variables: the run's namespace and release, and windows over the
# whole run (Prometheus started seconds ago).
evaluate() {
  local title ref expr out series
  jq -j '.. | objects | select(has("targets")) | .title as $title | .targets[]
    | "\($title)\u0000\(.refId)\u0000\(.expr)\u0000"' "$1" |
    while read -r -d '' title && read -r -d '' ref && read -r -d '' expr; do
      expr="${expr//\$namespace/$namespace}"
      expr="${expr//\$release/$release}"
      expr="${expr//\$__rate_interval/1m}"
      expr="${expr//\$__range/1m}"
      expr="${expr//\$__interval/1s}"
      # The series with a number, and what tells them apart.
      if ! out="$(query "$expr" 2>&1)" || ! series="$(jq -c '[.[] | select(.value[1] != "NaN")
          | .metric.pod // .metric.role // "1 series"]' <<<"$out" 2>&1)"; then
        printf 'error\t%s\t%s\t%s\n' "$title" "$ref" "$(tr '\n' ' ' <<<"$expr: $out")"
      elif [ "$series" = "[]" ]; then
        printf 'empty\t%s\t%s\t%s\n' "$title" "$ref" "$(tr '\n' ' ' <<<"$expr: $out")"
      else
        printf 'ok\t%s\t%s\t%s\n' "$title" "$ref" "$series"
      fi
    done
}

while IFS=$'\t' read -r result title ref detail; do
  case "$result" in
    ok) pass "panel \"$title\", query $ref: data $detail" ;;
    empty) fail "panel \"$title\", query $ref: no data" "$detail" ;;
    *) fail "panel \"$title\", query $ref: refused" "$detail" ;;
  esac
done < <(evaluate "$dashboard")

# The check can fail: the loss panel, reading a metric the daemon does not export, is named.
jq '{panels: [.panels[] | select(.title == "Loss")]}' "$dashboard" |
  sed 's/pstrain_loss{/pstrain_losses{/' >"$work/misspelt.json"
if out="$(evaluate "$work/misspelt.json")" && grep -q $'^empty\tLoss\tA\t' <<<"$out"; then
  pass "a panel on a metric the daemon does not export (pstrain_losses) is named as without data"
else
  fail "a panel on a metric the daemon does not export (pstrain_losses) was not named" "$out"
fi

# The stall: a run of 1 ps and 1 worker, its processes Prometheus' only targets, and the alert's
# expression as Prometheus loaded it, evaluated now.
unset at
"$pstrain" local --ps 1 --workers 1 --data-dir "$data" --train-steps 1000000 \
  --log-dir "$work/stall" >"$work/stall.log" 2>&1 &
stall_run=$!
pids+=($stall_run)
until_ok 30 "the 2 processes of the stall's run started" \
  started stall "$stall_namespace" ps-0 worker-0
if ! stalled="$(curl -sf "$url/api/v1/rules" |
  jq -er '.data.groups[].rules[] | select(.name == "PstrainTrainingStalled") | .query')"; then
  fail "dashboard: Prometheus has not loaded PstrainTrainingStalled" "$(cat "$work/alerts.yaml")"
  summary
fi
ps_step="pstrain_global_step{namespace=\"$stall_namespace\", role=\"ps\"}"
# answers EXPR JQ: EXPR's vector now passes the jq test JQ; else prints it.
answers() {
  local out
  out="$(query "$1")" && jq -e "$2" <<<"$out" >/dev/null || { echo "$out"; return 1; }
}
firing="ALERTS{alertname=\"PstrainTrainingStalled\", alertstate=\"firing\", \
namespace=\"$stall_namespace\", pod=\"$release-ps-0\"}"

# Training, with a window's history: the ps's step stood somewhere a window ago, and has moved
# since, so the expression has all it reads.
until_ok 60 "Prometheus scraping the stall's run training for $window" \
  answers "changes($ps_step[$window]) >= 2 and $ps_step offset $window" 'length == 1'
if out="$(query "$stalled")" && [ "$(jq length <<<"$out")" = 0 ]; then
  pass "PstrainTrainingStalled: its expression returns nothing while the run trains"
else
  fail "PstrainTrainingStalled: its expression returns data while the run trains" "$out"
fi

# The worker stopped: the ps's step stands still, and within the window the alert fires.
paused="$(pid_of stall worker-0)"
kill -STOP "$paused"
until_ok 30 "PstrainTrainingStalled firing for $release-ps-0 with its worker stopped" \
  answers "$firing" 'length == 1'
pass "PstrainTrainingStalled fires for $release-ps-0 while its only worker is stopped (SIGSTOP)"
kill -CONT "$paused"
paused=""
until_ok 30 "PstrainTrainingStalled resolved with the worker going on" \
  answers "$firing" 'length == 0'
pass "PstrainTrainingStalled resolves once the worker goes on (SIGCONT)"
summary
