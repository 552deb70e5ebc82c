#pragma once

#include <chrono>

namespace pstrain {

// Seconds since the Unix epoch, with microseconds, as the training log lines print them.
inline double unixTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace pstrain
