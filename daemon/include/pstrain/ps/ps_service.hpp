#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "pstrain/config/config.hpp"
#include "pstrain/net/frame_server.hpp"
#include "pstrain/observe/metrics.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// A parameter server: owns one shard of the model and serves workers' hello, pull, push, status
// and done messages on its port. Each applied push is one global step; the ps logs its progress
// and the end of training, then goes on answering (with the final parameters) until stopped.
class PsService {
 public:
  // Reports its progress, traffic and rejected connections in `metrics`.
  PsService(const config::Config& config, int index, int listenPort, observe::Metrics& metrics);

  int port() const { return server_->port(); }
  std::uint64_t globalStep() const;

 private:
  void serve(net::Connection& connection);
  void awaitChief(std::uint32_t worker, const std::string& peer);
  void logStep(const Shard::StepResult& result, std::uint64_t localStep, float loss,
               std::uint32_t worker);

  const config::Config& config_;
  int index_;
  observe::Metrics& metrics_;
  std::uint64_t runId_;
  std::uint64_t parameterCount_;
  ShardRange range_;
  Shard shard_;
  // As with a TensorFlow chief: training starts when worker 0 arrives; the others wait for it,
  // so every worker starts from the same parameters and the clock starts once.
  std::mutex chiefMutex_;
  std::condition_variable chiefArrived_;
  bool chiefJoined_ = false;
  std::vector<std::string> workersSeen_;
  std::chrono::steady_clock::time_point startTime_;
  std::unique_ptr<net::FrameServer> server_;
};

}  // namespace pstrain::ps
