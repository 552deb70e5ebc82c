#!/usr/bin/env bash
# Registers runc-wrapper (see runc-wrapper/main.go) as a Docker runtime, or removes it again.
#
#   docker-runtime.sh add WRAPPER   copies WRAPPER to /var/lib/pstrain-kind-runtime/ and adds it to
#                                   /etc/docker/daemon.json as runtime "pstrain-kind-runc"
#   docker-runtime.sh remove        puts daemon.json back as it was and removes the copy
#
# The runtime is only added, never made the default: Docker runs a container with it only when
# asked to (`docker run --runtime pstrain-kind-runc`), so no one else's containers use it. dockerd
# rereads daemon.json on SIGHUP, without a restart; both commands check that every container that
# was running still runs, started at the same time as before. `add` first undoes an earlier `add`
# that was never removed (a killed run).
set -euo pipefail

name=pstrain-kind-runc
state=/var/lib/pstrain-kind-runtime
config=/etc/docker/daemon.json

# running_containers: id and start time of each running container.
running_containers() {
  docker ps --quiet --no-trunc | xargs --no-run-if-empty docker inspect --format '{{.Id}} {{.State.StartedAt}}' | sort
}
registered() { docker info --format '{{json .Runtimes}}' | jq --exit-status --arg name "$name" 'has($name)' >/dev/null; }
# as_wanted WANT: the runtime is registered (WANT=yes) or not (no).
as_wanted() { if [ "$1" = yes ]; then registered; else ! registered; fi; }
# reload WANT: SIGHUP to dockerd; waits until the runtime is registered (WANT=yes) or not (no),
# and checks that the containers running before still run, not restarted.
reload() {
  local want="$1" before after i
  before="$(running_containers)"
  kill -HUP "$(pidof dockerd)"
  for i in $(seq 50); do
    as_wanted "$want" && break
    sleep 0.2
  done
  if ! as_wanted "$want"; then
    echo "dockerd did not take the change to $config (runtime $name registered: want $want)" >&2
    return 1
  fi
  after="$(running_containers)"
  if [ -n "$(comm -23 <(echo "$before") <(echo "$after"))" ]; then
    echo "containers stopped or restarted by the reload of dockerd:" >&2
    comm -23 <(echo "$before") <(echo "$after") >&2
    return 1
  fi
  echo "dockerd reloaded $config (SIGHUP); its $(grep -c . <<<"$before") running containers still run, not restarted"
}

remove() {
  [ -d "$state" ] || return 0
  local original='{}'
  [ -f "$state/daemon.json" ] && original="$(cat "$state/daemon.json")"
  # dockerd keeps the runtimes it has unless the file names some: first the original with its
  # runtimes named (none, often), then the original itself, which means the same.
  jq '.runtimes = (.runtimes // {})' <<<"$original" >"$config"
  reload no
  if [ -f "$state/daemon.json" ]; then
    cp -p "$state/daemon.json" "$config"
  else
    rm -f "$config"
  fi
  rm -rf "$state"
  echo "removed Docker runtime $name: $config is as it was"
}

add() {
  local wrapper="$1"
  remove
  mkdir -p "$state"
  local original='{}'
  if [ -f "$config" ]; then
    cp -p "$config" "$state/daemon.json"
    original="$(cat "$config")"
  fi
  cp "$wrapper" "$state/runc-wrapper"
  jq --arg name "$name" --arg path "$state/runc-wrapper" '.runtimes[$name] = {path: $path}' \
    <<<"$original" >"$state/new.json"
  cp "$state/new.json" "$config"
  reload yes
  echo "added Docker runtime $name ($state/runc-wrapper) to $config"
}

case "${1:-}" in
  add) add "$2" ;;
  remove) remove ;;
  *) echo "usage: $0 add WRAPPER | remove" >&2; exit 2 ;;
esac
