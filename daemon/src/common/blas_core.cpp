#include "pstrain/common/blas_core.hpp"

#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pstrain/common/error.hpp"

extern "C" char* openblas_get_corename();

namespace pstrain {
namespace {

constexpr std::uint32_t kSse4 = kSse3 | kSsse3 | kSse41 | kSse42;
constexpr std::uint32_t kAvx2Fma = kSse4 | kAvx | kFma | kAvx2;
constexpr std::uint32_t kAvx512 = kAvx2Fma | kAvx512F | kAvx512Cd | kAvx512Bw | kAvx512Dq |
                                  kAvx512Vl;  // -march=skylake-avx512, which SkylakeX is built for

struct Core {
  const char* name;
  std::uint32_t needs;  // conservative: more than a kernel may use is refused, never less
  int rank;             // higher is faster on a CPU that runs both
};

// Every core OpenBLAS 0.3.21 accepts in OPENBLAS_CORETYPE (its corename[] table), what it needs,
// and its rank: the instruction-set level it is built for, AVX-512 > AVX2 > AVX > SSE4.2 > older.
// Zen ranks below Haswell: on an AMD EPYC (Zen 3) VM, Haswell's kernels ran pstrain 5-14% faster
// (tests/bench/blas.sh). Fastest first, and within a rank the generic core first: pstrain uses
// the first one a CPU runs. The 32-bit cores (Katmai, ...) OpenBLAS runs as Prescott on x86-64.
constexpr Core kCores[] = {
    {"SkylakeX", kAvx512, 5},
    {"Cooperlake", kAvx512 | kAvx512Bf16, 5},
    {"Haswell", kAvx2Fma, 4},
    {"Zen", kAvx2Fma, 3},
    {"Sandybridge", kSse4 | kAvx, 2},
    {"Bulldozer", kSse4 | kAvx | kFma4, 2},
    {"Piledriver", kSse4 | kAvx | kFma | kFma4, 2},
    {"Steamroller", kSse4 | kAvx | kFma | kFma4, 2},
    {"Excavator", kSse4 | kAvx | kFma | kFma4, 2},
    {"Nehalem", kSse4, 1},
    {"Prescott", kSse3, 0},
    {"Katmai", kSse3, 0},
    {"Coppermine", kSse3, 0},
    {"Northwood", kSse3, 0},
    {"Banias", kSse3, 0},
    {"Athlon", kSse3, 0},
    {"Opteron", kSse3, 0},
    {"Opteron_SSE3", kSse3, 0},
    {"Barcelona", kSse3, 0},
    {"Atom", kSse3 | kSsse3, 0},
    {"Core2", kSse3 | kSsse3, 0},
    {"Nano", kSse3 | kSsse3, 0},
    {"Bobcat", kSse3 | kSsse3, 0},
    {"Penryn", kSse3 | kSsse3 | kSse41, 0},
    {"Dunnington", kSse3 | kSsse3 | kSse41, 0},
};

const Core* findCore(const std::string& name) {
  for (const auto& core : kCores) {
    if (::strcasecmp(core.name, name.c_str()) == 0) return &core;
  }
  return nullptr;
}

bool runs(const CpuFeatures& cpu, const Core& core) {
  return (core.needs & ~cpu.usable()) == 0;
}

const Core* best(const CpuFeatures& cpu) {
  for (const auto& core : kCores) {
    if (runs(cpu, core)) return &core;
  }
  return nullptr;
}

// The cores of the highest rank `cpu` runs ("SkylakeX"), for an error message.
std::string fastestCores(const CpuFeatures& cpu) {
  const Core* top = best(cpu);
  if (!top) return "none";
  std::string names;
  for (const auto& core : kCores) {
    if (runs(cpu, core) && core.rank == top->rank) {
      names += (names.empty() ? "" : ", ") + std::string(core.name);
    }
  }
  return names;
}

}  // namespace

std::optional<std::string> bestBlasCore(const CpuFeatures& cpu) {
  const Core* core = best(cpu);
  if (!core) return std::nullopt;
  return core->name;
}

std::optional<std::string> blasCoreToForce(const CpuFeatures& cpu, const std::string& picked) {
  const Core* current = findCore(picked);
  const Core* better = best(cpu);
  if (!current || !better || better->rank <= current->rank) return std::nullopt;
  return better->name;
}

void checkBlasCore(const CpuFeatures& cpu, const std::string& name) {
  const Core* core = findCore(name);
  if (core && runs(cpu, *core)) return;
  throw ConfigError("OPENBLAS_CORETYPE=" + name +
                    (core ? " needs instructions this CPU or OS lacks"
                          : " is not a core OpenBLAS knows") +
                    "; the fastest this CPU runs: " + fastestCores(cpu) +
                    " (unset, pstrain picks one)");
}

std::string blasCoreInUse() { return openblas_get_corename(); }

std::string describeBlasCore() {
  std::string inUse = blasCoreInUse();
  auto cpu = readCpuFeatures();
  if (!cpu) return inUse;
  auto better = blasCoreToForce(*cpu, inUse);
  if (!better) return inUse;
  const char* requested = std::getenv("OPENBLAS_CORETYPE");
  return inUse + ", though this CPU runs " + *better +
         (requested ? " (OPENBLAS_CORETYPE=" + std::string(requested) + ")" : "");
}

void useBestBlasCore(char* const argv[]) {
  auto cpu = readCpuFeatures();
  if (!cpu) return;
  if (const char* requested = std::getenv("OPENBLAS_CORETYPE")) {
    checkBlasCore(*cpu, requested);
    return;
  }
  const std::string picked = blasCoreInUse();
  auto better = blasCoreToForce(*cpu, picked);
  if (!better) return;
  ::setenv("OPENBLAS_CORETYPE", better->c_str(), 1);
  ::execv("/proc/self/exe", argv);
  const int error = errno;
  ::unsetenv("OPENBLAS_CORETYPE");  // not in use: the processes this one starts choose again
  std::fprintf(stderr, "pstrain: cannot start again with OPENBLAS_CORETYPE=%s (%s); computing "
               "with OpenBLAS's %s kernels\n", better->c_str(), std::strerror(error),
               picked.c_str());
}

}  // namespace pstrain
