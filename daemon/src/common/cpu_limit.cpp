#include "pstrain/common/cpu_limit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

extern "C" void openblas_set_num_threads(int threads);
extern "C" int openblas_get_num_threads();

namespace pstrain {
namespace {

// The quota in CPUs from cgroup v2 ("max 100000" or "20000 100000") or v1; 0 when unlimited.
double cgroupQuota() {
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string quota;
  double period = 0;
  if (v2 >> quota >> period) return quota == "max" || period <= 0 ? 0 : std::stod(quota) / period;
  std::ifstream quotaV1("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  std::ifstream periodV1("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  double microseconds = 0;
  if (quotaV1 >> microseconds && periodV1 >> period && microseconds > 0 && period > 0) {
    return microseconds / period;
  }
  return 0;
}

}  // namespace

int cpuLimit() {
  int hardware = std::max(1u, std::thread::hardware_concurrency());
  double quota = cgroupQuota();
  return quota > 0 ? std::clamp(int(std::ceil(quota)), 1, hardware) : hardware;
}

void setBlasThreads(int threads) { openblas_set_num_threads(std::max(1, threads)); }

void limitBlasThreads(int threads) {
  if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr) setBlasThreads(threads);
}

int blasThreads() { return openblas_get_num_threads(); }

}  // namespace pstrain
