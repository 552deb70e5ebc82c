#include "pstrain/common/incarnation.hpp"

#include <random>

namespace pstrain {

std::uint64_t drawIncarnation() {
  std::random_device device;
  return (std::uint64_t(device()) << 32) ^ std::uint64_t(device());
}

}  // namespace pstrain
