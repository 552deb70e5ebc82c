#pragma once

#include <cstdlib>
#include <string>

#include "pstrain/common/blas_core.hpp"

namespace pstrain::testing {

// The OpenBLAS core a pstrain started with this process's environment computes with: a core set
// in OPENBLAS_CORETYPE, else OpenBLAS's own pick (this process made the same) or the better one
// pstrain puts in its place.
inline std::string expectedBlasCore() {
  const std::string picked = blasCoreInUse();
  auto cpu = readCpuFeatures();
  if (std::getenv("OPENBLAS_CORETYPE") || !cpu) return picked;
  return blasCoreToForce(*cpu, picked).value_or(picked);
}

}  // namespace pstrain::testing
