#define BOOST_TEST_MODULE blas_core
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/error.hpp"
#include "support/process_run.hpp"

using namespace pstrain;
using pstrain::testing::contains;

namespace {

constexpr std::uint32_t kSse4 = kSse3 | kSsse3 | kSse41 | kSse42;
constexpr std::uint32_t kAvx2Fma = kSse4 | kAvx | kFma | kAvx2;
constexpr std::uint32_t kAvx512All = kAvx2Fma | kAvx512F | kAvx512Cd | kAvx512Bw | kAvx512Dq |
                                     kAvx512Vl;
constexpr std::uint64_t kXcr0Sse = 0x3;  // x87 and SSE state only
constexpr std::uint64_t kXcr0Ymm = 0x7;  // + AVX
constexpr std::uint64_t kXcr0Zmm = 0xe7;  // + AVX-512

// The CPUs of the cases below.
const CpuFeatures kIntelAvx512Vm{kAvx512All, kXcr0Zmm};
const CpuFeatures kAmdZen3{kAvx2Fma, kXcr0Ymm};

std::string errorOf(const CpuFeatures& cpu, const std::string& core) {
  try {
    checkBlasCore(cpu, core);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(best_core_follows_cpu_and_os_features) {
  struct Case {
    const char* what;
    CpuFeatures cpu;
    std::string best;  // "none": no core
  };
  static const Case cases[] = {
      {"Intel AVX-512 VM that hides its model", kIntelAvx512Vm, "SkylakeX"},
      {"AVX-512 CPU, OS without zmm state", {kAvx512All, kXcr0Ymm}, "Haswell"},
      {"AVX-512 CPU, OS saving only opmask and zmm upper halves",
       {kAvx512All, 0x67}, "Haswell"},
      {"AVX-512 F and CD only (Knights Landing)",
       {kAvx2Fma | kAvx512F | kAvx512Cd, kXcr0Zmm}, "Haswell"},
      {"AVX-512 without VL", {kAvx512All & ~kAvx512Vl, kXcr0Zmm}, "Haswell"},
      {"AVX-512 without BW", {kAvx512All & ~kAvx512Bw, kXcr0Zmm}, "Haswell"},
      {"AVX-512 without DQ", {kAvx512All & ~kAvx512Dq, kXcr0Zmm}, "Haswell"},
      {"AMD Zen 4 with AVX-512", {kAvx512All | kAvx512Bf16, kXcr0Zmm}, "SkylakeX"},
      {"AMD Zen 3 (AVX2, FMA)", kAmdZen3, "Haswell"},
      {"Hygon Dhyana (AVX2, FMA)", {kAvx2Fma, kXcr0Ymm}, "Haswell"},
      {"Intel Haswell", {kAvx2Fma, kXcr0Ymm}, "Haswell"},
      {"AVX2 without FMA", {kAvx2Fma & ~kFma, kXcr0Ymm}, "Sandybridge"},
      {"AVX2 CPU, OS without ymm state", {kAvx2Fma, kXcr0Sse}, "Nehalem"},
      {"AVX2 CPU, OS without XSAVE", {kAvx2Fma, 0}, "Nehalem"},
      {"Intel Sandy Bridge", {kSse4 | kAvx, kXcr0Ymm}, "Sandybridge"},
      {"AMD Bulldozer (AVX, FMA4)", {kSse4 | kAvx | kFma4, kXcr0Ymm},
       "Sandybridge"},
      {"SSE4.2 (Nehalem)", {kSse4, 0}, "Nehalem"},
      {"SSE4.1 without SSE4.2 (Penryn)", {kSse3 | kSsse3 | kSse41, 0}, "Prescott"},
      {"SSE3 only", {kSse3, 0}, "Prescott"},
      {"no SSE3", {0, 0}, "none"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.what) { BOOST_TEST(bestBlasCore(c.cpu).value_or("none") == c.best); }
  }
}

BOOST_AUTO_TEST_CASE(forces_the_best_core_only_over_a_lower_level_pick) {
  struct Case {
    const char* what;
    CpuFeatures cpu;
    std::string picked;
    std::string forced;  // "none": OpenBLAS's pick stays
  };
  static const Case cases[] = {
      {"OpenBLAS falls back to Prescott on an AVX-512 VM", kIntelAvx512Vm, "Prescott",
       "SkylakeX"},
      {"an AVX-512 CPU OpenBLAS takes for a Skylake client", kIntelAvx512Vm, "Haswell",
       "SkylakeX"},
      {"OpenBLAS's choice is the best", kIntelAvx512Vm, "SkylakeX", "none"},
      {"Cooperlake is of the same level as SkylakeX",
       {kAvx512All | kAvx512Bf16, kXcr0Zmm}, "Cooperlake", "none"},
      {"Haswell's kernels beat Zen's", kAmdZen3, "Zen", "Haswell"},
      {"OpenBLAS's Piledriver stays on a Piledriver (AVX, FMA, FMA4)",
       {kSse4 | kAvx | kFma | kFma4, kXcr0Ymm}, "Piledriver", "none"},
      {"OpenBLAS falls back to Prescott on an AMD AVX2 CPU", kAmdZen3, "Prescott", "Haswell"},
      {"a core name is compared as OpenBLAS compares it", kAmdZen3, "prescott", "Haswell"},
      {"a core this table does not know stays", kAmdZen3, "SapphireRapids", "none"},
      {"an OS without zmm state keeps Haswell", {kAvx512All, kXcr0Ymm},
       "Haswell", "none"},
      {"nothing better than Prescott", {kSse3, 0}, "Prescott", "none"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      BOOST_TEST(blasCoreToForce(c.cpu, c.picked).value_or("none") == c.forced);
    }
  }
}

BOOST_AUTO_TEST_CASE(accepts_a_requested_core_the_cpu_runs) {
  for (const char* core : {"Haswell", "haswell", "Zen", "Sandybridge", "Nehalem", "Prescott",
                           "Core2", "Katmai"}) {
    BOOST_TEST_CONTEXT(core) { BOOST_TEST(errorOf(kAmdZen3, core) == ""); }
  }
  BOOST_TEST(errorOf(kIntelAvx512Vm, "SkylakeX") == "");
  BOOST_TEST(errorOf(kIntelAvx512Vm, "skylakex") == "");
}

BOOST_AUTO_TEST_CASE(refuses_a_requested_core_the_cpu_lacks_in_one_line) {
  BOOST_TEST(errorOf(kAmdZen3, "SkylakeX") ==
             "OPENBLAS_CORETYPE=SkylakeX needs instructions this CPU or OS lacks; the fastest this "
             "CPU runs: Haswell (unset, pstrain picks one)");
  BOOST_TEST(contains(errorOf(kIntelAvx512Vm, "Cooperlake"), "lacks"));  // no AVX-512 BF16
  BOOST_TEST(contains(errorOf(kIntelAvx512Vm, "Cooperlake"), "runs: SkylakeX ("));
  BOOST_TEST(contains(errorOf({kSse4 | kAvx | kFma | kFma4, kXcr0Ymm}, "Haswell"),
                      "runs: Sandybridge, Bulldozer, Piledriver, Steamroller, Excavator ("));
  BOOST_TEST(contains(errorOf(kIntelAvx512Vm, "Bulldozer"), "lacks"));  // no FMA4
  BOOST_TEST(contains(errorOf({kAvx512All, kXcr0Ymm}, "SkylakeX"), "lacks"));
  BOOST_TEST(contains(errorOf({kAvx2Fma, kXcr0Sse}, "Sandybridge"), "lacks"));
}

BOOST_AUTO_TEST_CASE(refuses_a_name_openblas_does_not_know) {
  BOOST_TEST(errorOf(kAmdZen3, "Pentium4") ==
             "OPENBLAS_CORETYPE=Pentium4 is not a core OpenBLAS knows; the fastest this CPU runs: "
             "Haswell (unset, pstrain picks one)");
  BOOST_TEST(errorOf(kAmdZen3, "") != "");
}

// CPUID and XGETBV read as the kernel reads them: /proc/cpuinfo lists a flag when the CPU has it
// and the OS lets programs use it.
BOOST_AUTO_TEST_CASE(reads_the_features_the_kernel_reports) {
  auto cpu = readCpuFeatures();
  BOOST_REQUIRE(cpu.has_value());
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("flags", 0) != 0) {
  }
  BOOST_REQUIRE(!line.empty());
  std::istringstream words(line.substr(line.find(':') + 1));
  std::map<std::string, bool> flags;
  for (std::string word; words >> word;) flags[word] = true;
  const std::map<std::string, CpuFeature> names{
      {"pni", kSse3},          {"ssse3", kSsse3},         {"sse4_1", kSse41},
      {"sse4_2", kSse42},      {"avx", kAvx},             {"fma", kFma},
      {"fma4", kFma4},         {"avx2", kAvx2},           {"avx512f", kAvx512F},
      {"avx512cd", kAvx512Cd}, {"avx512bw", kAvx512Bw},   {"avx512dq", kAvx512Dq},
      {"avx512vl", kAvx512Vl}, {"avx512_bf16", kAvx512Bf16}};
  for (const auto& [flag, feature] : names) {
    BOOST_TEST_CONTEXT(flag) {
      const bool listed = flags.count(flag) == 1;
      const bool usable = (cpu->usable() & feature) != 0;
      BOOST_TEST(listed == usable);
    }
  }
}
