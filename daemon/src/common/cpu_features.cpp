#include "pstrain/common/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace pstrain {
namespace {

constexpr std::uint32_t kNeedAvxState = kAvx | kFma | kFma4 | kAvx2 | kAvx512F | kAvx512Cd |
                                        kAvx512Bw | kAvx512Dq | kAvx512Vl | kAvx512Bf16;
constexpr std::uint32_t kNeedAvx512State =
    kAvx512F | kAvx512Cd | kAvx512Bw | kAvx512Dq | kAvx512Vl | kAvx512Bf16;

}  // namespace

std::uint32_t CpuFeatures::usable() const {
  std::uint32_t features = reported;
  if ((osState & kXcr0Avx) != kXcr0Avx) features &= ~kNeedAvxState;
  if ((osState & kXcr0Avx512) != kXcr0Avx512) features &= ~kNeedAvx512State;
  return features;
}

#if defined(__x86_64__) || defined(__i386__)

std::optional<CpuFeatures> readCpuFeatures() {
  CpuFeatures cpu;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const unsigned maxLeaf = __get_cpuid_max(0, nullptr);

  auto add = [&cpu](unsigned reg, unsigned bit, CpuFeature feature) {
    if (reg & (1u << bit)) cpu.reported |= feature;
  };
  __get_cpuid(1, &eax, &ebx, &ecx, &edx);
  add(ecx, 0, kSse3);
  add(ecx, 9, kSsse3);
  add(ecx, 19, kSse41);
  add(ecx, 20, kSse42);
  add(ecx, 12, kFma);
  add(ecx, 28, kAvx);
  if (ecx & (1u << 27)) {  // OSXSAVE: the OS has enabled XGETBV
    unsigned low = 0, high = 0;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    cpu.osState = (std::uint64_t(high) << 32) | low;
  }
  if (maxLeaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const unsigned subleaves = eax;
    add(ebx, 5, kAvx2);
    add(ebx, 16, kAvx512F);
    add(ebx, 17, kAvx512Dq);
    add(ebx, 28, kAvx512Cd);
    add(ebx, 30, kAvx512Bw);
    add(ebx, 31, kAvx512Vl);
    if (subleaves >= 1) {
      __cpuid_count(7, 1, eax, ebx, ecx, edx);
      add(eax, 5, kAvx512Bf16);
    }
  }
  if (__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx)) add(ecx, 16, kFma4);
  return cpu;
}

#else

std::optional<CpuFeatures> readCpuFeatures() { return std::nullopt; }

#endif

}  // namespace pstrain
