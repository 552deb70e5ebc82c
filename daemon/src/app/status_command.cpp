#include <chrono>
#include <cstdio>
#include <thread>

#include "pstrain/app/commands.hpp"
#include "pstrain/net/endpoint.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/observe/status_client.hpp"

namespace pstrain::app {
namespace {

bool madeProgress(const observe::StatusSnapshot& status) {
  return status.state == "completed" || (status.state == "training" && status.globalStep > 0);
}

// With --predict, worker 0 must answer /predict: a prediction once completed, 503 (no model yet)
// while training. Returns the line to print, or sets `problem`.
std::string checkPredict(const net::Endpoint& endpoint, const observe::StatusSnapshot& status,
                         std::string& problem) {
  if (status.role != "worker" || status.ordinal != 0) return "";
  auto probe = observe::probePredict(endpoint.host, endpoint.port);
  if (probe.status == 200 || (probe.status == 503 && status.state != "completed")) {
    return "  predict: " + std::to_string(probe.status) + " " + probe.answer + "\n";
  }
  problem = "/predict answered " + std::to_string(probe.status) + " " + probe.answer + " (" +
            observe::describeProgress(status) + ")";
  return "";
}

}  // namespace

int runStatus(const std::vector<std::string>& originalArgs) {
  auto args = originalArgs;
  double waitSeconds = -1;
  if (args.size() >= 2 && args[0] == "--wait") {
    try {
      waitSeconds = std::stod(args[1]);
    } catch (const std::exception&) {
      throw ConfigError("--wait takes a number of seconds, not '" + args[1] + "'");
    }
    args.erase(args.begin(), args.begin() + 2);
  }
  const bool predict = !args.empty() && args[0] == "--predict";
  if (predict) args.erase(args.begin());
  if (args.empty()) {
    throw ConfigError(
        "usage: pstrain status [--wait SECONDS] [--predict] HOST:PORT... (HTTP ports)");
  }
  std::vector<net::Endpoint> endpoints;
  for (const auto& arg : args) endpoints.push_back(net::parseEndpoint(arg));

  // Without --wait: one look at each. With it: until every one has made progress (a global step
  // past 0, or completed) or the time is up, which is what `helm test` asks of a job.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(long(std::max(0.0, waitSeconds) * 1000));
  for (const auto& endpoint : endpoints) {
    for (;;) {
      std::string problem;
      try {
        auto status = observe::fetchStatus(endpoint.host, endpoint.port);
        if (waitSeconds < 0 || madeProgress(status)) {
          const std::string predicted = predict ? checkPredict(endpoint, status, problem) : "";
          if (problem.empty()) {
            std::printf("%s %s %d: %s\n", endpoint.toString().c_str(), status.role.c_str(),
                        status.ordinal, observe::describeProgress(status).c_str());
            for (const auto& peer : status.peers) std::printf("  peer: %s\n", peer.c_str());
            std::printf("%s", predicted.c_str());
            break;
          }
          if (waitSeconds < 0) throw RefusedError(endpoint.toString() + ": " + problem);
        } else {
          problem = "no progress yet (" + observe::describeProgress(status) + ")";
        }
      } catch (const PeerError& e) {
        if (waitSeconds < 0) throw;
        problem = e.what();
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        throw UnreachableError(endpoint.toString() + ": " + problem + " after waiting " +
                        std::to_string(long(waitSeconds)) + " s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  return 0;
}

}  // namespace pstrain::app
