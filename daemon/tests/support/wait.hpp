#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace pstrain::testing {

// Polls `condition` every `poll` until it holds or `timeout` passes; returns whether it held.
inline bool waitFor(const std::function<bool()>& condition, std::chrono::seconds timeout,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

}  // namespace pstrain::testing
