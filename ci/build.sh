#!/usr/bin/env bash
# Configures and builds pstrain and its tests into build/ (Release). A unity build: the daemon's
# sources compiled a few to a file build in 2 min 8 s instead of 2 min 41 s on 2 cores (a build
# for editing the code, where one changed file should recompile alone, leaves it off).
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build build -j"$(nproc)"
