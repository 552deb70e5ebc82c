#pragma once

namespace pstrain {

// The number of CPUs this process may use: the cgroup CPU quota rounded up (a pod's CPU limit;
// 200m gives 1), else the hardware threads. Sizing BLAS threads by it keeps a pod from running
// more threads than its limit lets run, which only adds throttling.
int cpuLimit();

// Makes OpenBLAS use `threads` threads for a call.
void setBlasThreads(int threads);

// The same, unless OPENBLAS_NUM_THREADS chooses otherwise.
void limitBlasThreads(int threads);

// The threads OpenBLAS uses for a call.
int blasThreads();

}  // namespace pstrain
