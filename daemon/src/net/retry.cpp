#include "pstrain/net/retry.hpp"

#include <algorithm>
#include <thread>

#include "pstrain/common/error.hpp"

namespace pstrain::net {

void retryUntil(const Endpoint& endpoint, std::chrono::steady_clock::time_point deadline,
                const std::function<void()>& attempt, const Waiting& waiting) {
  auto backoff = std::chrono::milliseconds(50);
  const auto maxBackoff = std::chrono::milliseconds(2000);
  for (int count = 1;; ++count) {
    std::string failure;
    try {
      attempt();
      return;
    } catch (const UnreachableError& e) {
      failure = e.what();
    }
    if (std::chrono::steady_clock::now() + backoff > deadline) {
      throw UnreachableError("peer " + endpoint.toString() + ": " + failure +
                             ", until the peer timeout (" + std::to_string(count) +
                             " attempts)");
    }
    if (waiting && (count == 1 || count % 10 == 0)) waiting(count, failure);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, maxBackoff);
  }
}

}  // namespace pstrain::net
