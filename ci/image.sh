#!/usr/bin/env bash
# Builds the pstrain image that ci/kind-e2e.sh tests, PSTRAIN_KIND_IMAGE (default pstrain:e2e):
# docker/Dockerfile with Fashion-MNIST, on debian:bookworm-slim, which ci/debian-base.sh makes
# with debootstrap when it is missing, so no registry is needed (apt inside `docker build` needs
# deb.debian.org).
# `ci/image.sh prepare`: only the base image and the image's stages that are downloads, so that
# the build later compiles no more than the daemon (ci/test.sh runs it while the daemon's tests
# run).
# Needs root and Docker.
set -uo pipefail
cd "$(dirname "$0")/.."

image="${PSTRAIN_KIND_IMAGE:-pstrain:e2e}"
base="$(bash ci/debian-base.sh --name)"

# build_image ARGS...: docker build of the image under test, with ARGS.
build_image() {
  docker build -f docker/Dockerfile --build-arg DATASET=fashion-mnist "$@" .
}
if [ "${1:-}" = prepare ]; then
  bash ci/debian-base.sh && build_image --quiet --target runtime
  exit
fi

source ci/checks.sh
if out="$(bash ci/debian-base.sh 2>&1)"; then
  pass "$out"
else
  fail "base image $base: ci/debian-base.sh (debootstrap and docker import)" "$out"
  summary
fi
start=$SECONDS
if out="$(build_image -t "$image" 2>&1)"; then
  pass "image $image built in $((SECONDS - start)) s (Fashion-MNIST): $(docker image ls --format '{{.Size}}' "$image")"
else
  fail "image $image: docker build" "$out"
fi
summary
