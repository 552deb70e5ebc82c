#pragma once

#include <cstdint>
#include <optional>

namespace pstrain {

// Instruction-set extensions that decide which OpenBLAS kernels a CPU can run.
enum CpuFeature : std::uint32_t {
  kSse3 = 1u << 0,
  kSsse3 = 1u << 1,
  kSse41 = 1u << 2,
  kSse42 = 1u << 3,
  kAvx = 1u << 4,
  kFma = 1u << 5,
  kFma4 = 1u << 6,
  kAvx2 = 1u << 7,
  kAvx512F = 1u << 8,
  kAvx512Cd = 1u << 9,
  kAvx512Bw = 1u << 10,
  kAvx512Dq = 1u << 11,
  kAvx512Vl = 1u << 12,
  kAvx512Bf16 = 1u << 13,
};

// XCR0 bits: the register state the OS saves on a context switch. Without it, AVX
// (xmm + ymm) or AVX-512 (opmask, zmm0-15 upper halves, zmm16-31) instructions fault.
constexpr std::uint64_t kXcr0Avx = 0x6;
constexpr std::uint64_t kXcr0Avx512 = 0xe6;

// What CPUID and XGETBV tell about this CPU and its OS. The vendor does not enter: the kernels
// for an instruction-set level run on any vendor's CPU (Haswell's beat Zen's on an AMD EPYC).
struct CpuFeatures {
  std::uint32_t reported = 0;  // CpuFeature bits CPUID reports
  std::uint64_t osState = 0;   // XCR0 from XGETBV; 0 when the OS has not enabled XSAVE

  // The reported features the OS lets a program use.
  std::uint32_t usable() const;
};

// This machine's features; nothing off x86, where CPUID does not exist.
std::optional<CpuFeatures> readCpuFeatures();

}  // namespace pstrain
