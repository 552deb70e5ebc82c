#pragma once

#include <optional>
#include <string>

#include "pstrain/common/cpu_features.hpp"

// Which OpenBLAS kernel family ("core": Haswell, SkylakeX, ...) pstrain computes with.
// Debian 12's OpenBLAS 0.3.21 picks its kernels by CPU model in a library constructor, before
// main. On a VM that hides the model it falls back to Prescott (SSE3) kernels: on an AVX-512 VM
// 2.4x slower than SkylakeX. pstrain picks by the features the CPU and OS support instead, and
// where OpenBLAS picked weaker kernels, starts itself again with OPENBLAS_CORETYPE set.
namespace pstrain {

// The fastest core `cpu` runs: SkylakeX (AVX-512 F, CD, BW, DQ, VL), Haswell (AVX2 and FMA),
// Sandybridge (AVX), Nehalem (SSE4.2), Prescott (SSE3); nothing without SSE3.
std::optional<std::string> bestBlasCore(const CpuFeatures& cpu);

// The core to use in place of `picked`, OpenBLAS's own choice: the best core when `picked` is
// slower, else nothing. Slower is a lower instruction-set level (AVX-512 > AVX2 > AVX > SSE4.2 >
// older), or Zen, which Haswell beats. A pick of the same rank (Cooperlake, Piledriver) stays,
// as does one this table does not know.
std::optional<std::string> blasCoreToForce(const CpuFeatures& cpu, const std::string& picked);

// Throws ConfigError unless `name` is an OpenBLAS core (any case, as OpenBLAS reads it) that
// `cpu` runs: forcing kernels a CPU lacks ends in SIGILL at the first product.
void checkBlasCore(const CpuFeatures& cpu, const std::string& name);

// The core OpenBLAS uses in this process.
std::string blasCoreInUse();

// The core in use, for the start-up log line, with why when it is weaker than this CPU allows:
// "Prescott, though this CPU runs SkylakeX (OPENBLAS_CORETYPE=Prescott)".
std::string describeBlasCore();

// Called first in main, before any BLAS work. Keeps a core set in OPENBLAS_CORETYPE (after
// checkBlasCore); else, where blasCoreToForce() names a core, executes /proc/self/exe again with
// `argv` and OPENBLAS_CORETYPE set to it. Set, it is kept by that process and the ones it starts:
// no second restart. Returns when no restart is needed or exec fails.
void useBestBlasCore(char* const argv[]);

}  // namespace pstrain
