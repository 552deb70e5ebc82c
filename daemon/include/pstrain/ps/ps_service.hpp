#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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
  // Admits workers that prove `authKey`; reports progress, traffic and rejected connections in
  // `metrics`.
  PsService(const config::Config& config, int index, int listenPort, std::string authKey,
            observe::Metrics& metrics);

  ~PsService();

  int port() const { return server_->port(); }
  std::uint64_t globalStep() const;

  // Writes the shard, its optimizer state and the global step to <checkpointDir>/checkpoint.bin
  // (temporary file, fsync, rename). Runs every checkpointEverySeconds, at the end of training
  // and on SIGTERM; a ps that starts again restores it, if it belongs to the same run.
  void checkpoint();

  // Stops applying pushes and writes the last checkpoint: for SIGTERM.
  void stop();

 private:
  void serve(net::Connection& connection);
  void awaitChief(std::uint32_t worker, const std::string& peer);
  // Checks a worker's hello and that it holds the shared key; throws ProtocolError otherwise.
  void admit(net::Connection& connection, const net::Hello& hello);
  void restoreCheckpoint();
  void checkpointPeriodically();
  void logStep(const Shard::StepResult& result, std::uint64_t localStep, float loss,
               std::uint32_t worker);

  const config::Config& config_;
  int index_;
  std::string authKey_;
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
  const std::string checkpointPath_;
  std::mutex checkpointMutex_;  // one writer of the file at a time
  std::uint64_t checkpointedStep_ = UINT64_MAX;
  std::mutex stopMutex_;
  std::condition_variable stopRequested_;
  bool stopping_ = false;
  std::thread checkpointer_;
  std::unique_ptr<net::FrameServer> server_;
};

}  // namespace pstrain::ps
