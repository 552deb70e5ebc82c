#!/usr/bin/env bash
# Measures the OpenBLAS kernels ("cores") on this machine and prints one table: `pstrain single`
# (784-128-10, batch 100, 3000 steps, one BLAS thread) in global steps/s with nothing set, that
# is with the core pstrain chooses, next to the same run with each core this CPU runs forced
# through OPENBLAS_CORETYPE (OpenBLAS's own pick among them), and the single-thread sgemm
# GFLOP/s of each core: a 1024^3 product and the model's first-layer products. Run by hand:
#   tests/bench/blas.sh [REPEATS]        (default 3, interleaved; medians are printed)
# Needs a built build/pstrain and build/tests/bench/sgemm_bench (ci/build.sh) and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
data=/usr/share/datasets/fashion-mnist
bin=build/pstrain
sgemm=build/tests/bench/sgemm_bench
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -x "$bin" ] && [ -x "$sgemm" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1

# OpenBLAS's own pick: sgemm_bench leaves it alone.
own="$(env -u OPENBLAS_CORETYPE "$sgemm" --core)"
# The generic core of each instruction-set level, then the vendor-tuned one of the same level.
candidates=(SkylakeX Cooperlake Haswell Zen Sandybridge Nehalem Prescott)
[[ " ${candidates[*]} " == *" $own "* ]] || candidates+=("$own")
# The cores this CPU runs: pstrain refuses the others (exit 2) before it loads any data.
cores=()
refused=()
for core in "${candidates[@]}"; do
  if OPENBLAS_CORETYPE=$core "$bin" single --train-steps 1 --hidden-units 8 --data-dir "$data" \
      >/dev/null 2>"$work/refusal"; then
    cores+=("$core")
  elif grep -q "OPENBLAS_CORETYPE=$core needs instructions" "$work/refusal"; then
    refused+=("$core")
  else
    cat "$work/refusal" >&2
    exit 1
  fi
done

single=(single --hidden-units 128 --batch-size 100 --train-steps 3000 --data-dir "$data")
for r in $(seq "$repeats"); do
  env -u OPENBLAS_CORETYPE "$bin" "${single[@]}" --summary-json "$work/choice.$r.json" >/dev/null
  for core in "${cores[@]}"; do
    OPENBLAS_CORETYPE=$core "$bin" "${single[@]}" --summary-json "$work/$core.$r.json" >/dev/null
    OPENBLAS_CORETYPE=$core "$sgemm" >"$work/$core.$r.sgemm"
  done
done

python3 - "$work" "$own" "${refused[*]}" "${cores[@]}" <<'PY'
import glob, json, statistics, sys

work, own, refused, cores = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]

def steps(name):
    runs = [json.load(open(p)) for p in sorted(glob.glob(f"{work}/{name}.*.json"))]
    return statistics.median(r["global_steps_per_s"] for r in runs), {r["blas_core"] for r in runs}

def sgemm(core):  # shape -> median GFLOP/s
    rows = [open(p).read().split("\t")[1:] for p in sorted(glob.glob(f"{work}/{core}.*.sgemm"))]
    shapes = [field.rsplit(" ", 1)[0] for field in rows[0]]
    return {s: statistics.median(float(row[i].rsplit(" ", 1)[1]) for row in rows)
            for i, s in enumerate(shapes)}

model = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t")
print(f"CPU: {model}; OpenBLAS picks {own} on its own; single thread, "
      f"median of {len(glob.glob(f'{work}/choice.*.json'))}")
shapes = list(sgemm(cores[0]))
print(f"{'kernels':<34}{'steps/s':>9}  sgemm GFLOP/s: " + ", ".join(shapes))
choice, chosen = steps("choice")
print(f"{'nothing set: pstrain chose ' + '/'.join(sorted(chosen)):<34}{choice:>9.0f}")
best = (0, None)
for core in cores:
    rate, _ = steps(core)
    best = max(best, (rate, core))
    label = f"OPENBLAS_CORETYPE={core}" + (" (own)" if core == own else "")
    print(f"{label:<34}{rate:>9.0f}  " + "".join(f"{g:>8.1f}" for g in sgemm(core).values()))
for core in refused:
    print(f"{'OPENBLAS_CORETYPE=' + core:<34}  refused: the CPU or OS lacks its instructions")
print(f"pstrain's choice runs at {100 * choice / best[0]:.0f}% of the fastest forced core "
      f"({best[1]})")
PY
