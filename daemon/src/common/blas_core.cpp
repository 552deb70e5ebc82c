#include "pstrain/common/blas_core.hpp"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
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
};

// Every core OpenBLAS 0.3.21 accepts in OPENBLAS_CORETYPE (its corename[] table), and what it
// needs. The 32-bit ones (Katmai, ...) it runs as Prescott on x86-64.
constexpr Core kCores[] = {
    {"Katmai", kSse3},
    {"Coppermine", kSse3},
    {"Northwood", kSse3},
    {"Prescott", kSse3},
    {"Banias", kSse3},
    {"Atom", kSse3 | kSsse3},
    {"Core2", kSse3 | kSsse3},
    {"Penryn", kSse3 | kSsse3 | kSse41},
    {"Dunnington", kSse3 | kSsse3 | kSse41},
    {"Nehalem", kSse4},
    {"Athlon", kSse3},
    {"Opteron", kSse3},
    {"Opteron_SSE3", kSse3},
    {"Barcelona", kSse3},
    {"Nano", kSse3 | kSsse3},
    {"Sandybridge", kSse4 | kAvx},
    {"Bobcat", kSse3 | kSsse3},
    {"Bulldozer", kSse4 | kAvx | kFma4},
    {"Piledriver", kSse4 | kAvx | kFma | kFma4},
    {"Haswell", kAvx2Fma},
    {"Steamroller", kSse4 | kAvx | kFma | kFma4},
    {"Excavator", kSse4 | kAvx | kFma | kFma4},
    {"Zen", kAvx2Fma},
    {"SkylakeX", kAvx512},
    {"Cooperlake", kAvx512 | kAvx512Bf16},
};

// From fastest down: the generic family of each instruction-set level.
constexpr const char* kPreference[] = {"SkylakeX", "Haswell", "Sandybridge", "Nehalem",
                                       "Prescott"};

const Core* findCore(const std::string& name) {
  for (const auto& core : kCores) {
    if (::strcasecmp(core.name, name.c_str()) == 0) return &core;
  }
  return nullptr;
}

bool runs(const CpuFeatures& cpu, const Core& core) {
  return (core.needs & ~cpu.usable()) == 0;
}

// The instruction-set level a core is built for: higher is faster on a CPU that runs both.
int level(const Core& core) {
  if (core.needs & kAvx512F) return 4;
  if (core.needs & kAvx2) return 3;
  if (core.needs & kAvx) return 2;
  if (core.needs & kSse42) return 1;
  return 0;
}

// The cores of the highest level `cpu` runs ("Haswell, Zen"), for an error message.
std::string fastestCores(const CpuFeatures& cpu) {
  int top = -1;
  for (const auto& core : kCores) {
    if (runs(cpu, core)) top = std::max(top, level(core));
  }
  std::string names;
  for (const auto& core : kCores) {
    if (runs(cpu, core) && level(core) == top) {
      names += (names.empty() ? "" : ", ") + std::string(core.name);
    }
  }
  return names.empty() ? "none" : names;
}

}  // namespace

std::optional<std::string> bestBlasCore(const CpuFeatures& cpu) {
  for (const char* name : kPreference) {
    if (runs(cpu, *findCore(name))) return name;
  }
  return std::nullopt;
}

std::optional<std::string> blasCoreToForce(const CpuFeatures& cpu, const std::string& picked) {
  const Core* current = findCore(picked);
  auto best = bestBlasCore(cpu);
  if (!current || !best || level(*findCore(*best)) <= level(*current)) return std::nullopt;
  return best;
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
