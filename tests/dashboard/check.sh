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
# Needs build/pstrain (ci/build.sh; or PSTRAIN=path/to/pstrain), prometheus and promtool (Debian's
# prometheus package), jq, and the Fashion-MNIST files of Debian's dataset-fashion-mnist. About
# 15 s. The processes it starts it stops by their PIDs.
set -uo pipefail
cd "$(dirname "$0")/../.."
source ci/checks.sh

pstrain="${PSTRAIN:-build/pstrain}"
dashboard=chart/files/dashboard.json
data=/usr/share/datasets/fashion-mnist
# The run as a release mnist in namespace training: the dashboard's variables $namespace and
# $release, and the labels the Prometheus Operator would give its pods' targets.
namespace=training
release=mnist

missing=""
[ -x "$pstrain" ] || missing+=" $pstrain (ci/build.sh)"
for tool in prometheus promtool jq; do
  command -v "$tool" >/dev/null || missing+=" $tool"
done
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
stop() {
  local pid
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

# Prometheus, scraping the targets that targets.json will list, 4 times a second.
echo '[]' >"$work/targets.json"
cat >"$work/prometheus.yml" <<EOF
global: {scrape_interval: 250ms, scrape_timeout: 250ms}
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
  --eval-every-steps 100 --log-dir "$work/run" >"$work/local.log" 2>&1 &
run=$!
pids+=($run)
# Each process's HTTP port is on its command line; its PID in its first event.
started() {
  local process pid port targets=()
  for process in ps-0 ps-1 worker-0 worker-1; do
    pid="$(jq -r 'select(.event == "started") | .pid' "$work/run/$process/events.jsonl" 2>/dev/null |
      head -1)"
    [ -n "$pid" ] || { echo "$process has not started; pstrain local says:"; tail -3 "$work/local.log"; return 1; }
    port="$(tr '\0' '\n' <"/proc/$pid/cmdline" | grep -A1 -x -- --http-port | tail -1)"
    [ -n "$port" ] || { echo "$process (PID $pid) names no --http-port"; return 1; }
    targets+=("$(jq -n --arg t "127.0.0.1:$port" --arg ns "$namespace" --arg pod "$release-$process" \
      '{targets: [$t], labels: {namespace: $ns, pod: $pod}}')")
  done
  # Written whole, then renamed: Prometheus reads the file when it changes.
  printf '%s\n' "${targets[@]}" | jq -s . >"$work/targets.json.new" &&
    mv "$work/targets.json.new" "$work/targets.json"
}
until_ok 30 "the 4 processes of pstrain local started" started

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
summary
