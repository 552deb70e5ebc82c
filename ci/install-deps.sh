#!/usr/bin/env bash
# Installs what building pstrain needs from Debian/Ubuntu packages (with --tests, also what the
# tests use: ccache, which the test command's four builds share across runs, an SVG renderer,
# ImageMagick, clang's libFuzzer, debootstrap, jq, prometheus for
# promtool and a Prometheus server the chart's checks run, and ONNX's Python checker and OpenCV,
# which read model.onnx), plus any packages named; skips
# packages that are already there. Uses sudo when not run as root.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libpoco-dev libarmadillo-dev libopenblas-dev libyaml-cpp-dev libspdlog-dev libboost-test-dev
  libpng-dev
  prometheus-cpp-dev
  libonnx-dev libprotobuf-dev
  dataset-fashion-mnist
)
if [ "${1:-}" = "--tests" ]; then
  shift
  packages+=(ccache librsvg2-bin imagemagick clang-14 libclang-rt-14-dev debootstrap jq prometheus
    python3-onnx python3-opencv)
fi
packages+=("$@")

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
