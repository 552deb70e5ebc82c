#!/usr/bin/env bash
# Makes the base image (docker/Dockerfile's BASE, debian:bookworm-slim), which the pstrain image
# and the kind node image (tests/kind/build.sh) start from, when this machine's Docker lacks it: no
# registry is needed. Debian bookworm from deb.debian.org by debootstrap, slimmed as Debian's
# -slim images are: no documentation, manual pages or translations, now or from packages
# installed later. Callers at the same time wait for the one making it (ci/test.sh starts it
# early, in the background: it is mostly download, while the build uses the CPU).
# `ci/debian-base.sh --name` prints the image's name and makes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
base="$(sed -n 's/^ARG BASE=//p' docker/Dockerfile)"
[ -n "$base" ] || { echo "docker/Dockerfile names no ARG BASE" >&2; exit 1; }
if [ "${1:-}" = --name ]; then
  echo "$base"
  exit 0
fi

exec 9>"${TMPDIR:-/tmp}/pstrain-debian-base.lock"
flock 9
if docker image inspect "$base" >/dev/null 2>&1; then
  echo "base image $base is present"
  exit 0
fi
command -v debootstrap >/dev/null || bash ci/install-deps.sh debootstrap
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
start=$SECONDS
debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$work/log" 2>&1 ||
  { tail -n 20 "$work/log"; exit 1; }
printf 'path-exclude /usr/share/%s\n' 'doc/*' 'man/*' 'info/*' 'locale/*' 'lintian/*' \
  >"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
echo 'path-include /usr/share/doc/*/copyright' >>"$rootfs/etc/dpkg/dpkg.cfg.d/slim"
find "$rootfs/usr/share/doc" ! -type d ! -name copyright -delete
rm -rf "$rootfs"/usr/share/{man,info,locale,lintian}/* "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$base" >/dev/null
echo "base image $base made with debootstrap in $((SECONDS - start)) s"
