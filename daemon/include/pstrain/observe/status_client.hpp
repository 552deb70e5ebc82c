#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pstrain::observe {

// One process's /status, as fetched over HTTP.
struct StatusSnapshot {
  std::string role;
  int ordinal = 0;
  std::string state;
  std::uint64_t globalStep = 0;
  std::uint64_t trainSteps = 0;
  double stepsPerSecond = 0;
  std::optional<double> loss;
  std::optional<double> testAccuracy;
  std::vector<std::string> peers;
};

// GET http://host:port/status; throws PeerError when it cannot be fetched or read.
StatusSnapshot fetchStatus(const std::string& host, int port, double timeoutSeconds = 2);

// "training: global step 1234/3000 (41%), 1002 steps/s, loss 0.4321, accuracy 0.8512, ETA 2 s"
std::string describeProgress(const StatusSnapshot& status);

}  // namespace pstrain::observe
