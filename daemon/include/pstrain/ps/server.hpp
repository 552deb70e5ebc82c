#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/net/channel.hpp"
#include "pstrain/observe/metrics.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/step_gate.hpp"

namespace pstrain::ps {

// What a ps needs to know: its slice of the parameters, the run and its workers. Built from the
// configuration by the command that starts the ps.
struct ServerOptions {
  int index = 0;
  ShardRange range{0, 0};
  std::vector<float> initial;  // the slice's initial values
  std::unique_ptr<Optimizer> optimizer;
  model::Layout layout = model::Layout::mnist({});  // the run's model: a worker's must match
  std::uint64_t runId = 0;
  int workers = 1;
  Shard::Options shard;
  std::string authKey;
  double idleTimeoutSeconds = 0;  // for a worker's channel once admitted; 0: none
  int logEverySteps = 1;
  std::string checkpointPath;  // "" for none
  double checkpointEverySeconds = 0;
  std::string description;  // of the training settings, for the start-up line
  int httpPort = 0;          // where its /status answers, told to each worker; 0: none
  int concurrentWorkers = 0;  // StepGate's capacity; 0: no bound
};

// A parameter server: owns one shard of the model and serves each worker's channel, whatever
// carries it (TCP or in-process): the handshake, then pulls, pushes and done. Each applied push
// is one global step; the ps logs its progress and the end of training, then goes on answering
// (with the final parameters) until stopped. Checkpoints its shard periodically, at the end and
// on stop(), and restores one of the same run when it starts.
class Server {
 public:
  Server(ServerOptions options, observe::Metrics& metrics);
  // Stops the periodic checkpoints. Every serve() must have returned.
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves one worker until its channel ends; throws ProtocolError for a peer that breaks the
  // protocol (net::runSession tells it why).
  void serve(net::Channel& channel);

  // The size of the largest frame a worker sends.
  std::uint32_t maxPayload() const;
  std::uint64_t globalStep() const { return shard_.state().globalStep; }

  // Writes the shard, its optimizer state and the global step to the checkpoint path
  // (temporary file, fsync, rename), unless nothing changed since the last one.
  void checkpoint();

  // Stops applying pushes, releases pushes waiting at the sync barrier and writes the last
  // checkpoint: for SIGTERM.
  void stop();

 private:
  void admit(const net::Hello& hello) const;
  void awaitChief(std::uint32_t worker, const std::string& peer);
  void restoreCheckpoint();
  void checkpointPeriodically();
  void logStep(const Shard::StepResult& result, std::uint64_t localStep, float loss,
               std::uint32_t worker);

  ServerOptions options_;
  observe::Metrics& metrics_;
  Shard shard_;
  StepGate gate_;
  // Where pushes are received: taken for one push and given back once it is applied.
  std::shared_ptr<BufferPool> gradients_;
  // As with a TensorFlow chief: training starts when worker 0 arrives; the others wait for it,
  // so every worker starts from the same parameters and the clock starts once.
  std::mutex chiefMutex_;
  std::condition_variable chiefArrived_;
  bool chiefJoined_ = false;
  std::map<std::uint32_t, std::string> workerAddresses_;  // of each worker's latest connection
  std::chrono::steady_clock::time_point startTime_;
  std::mutex checkpointMutex_;  // one writer of the file at a time
  std::uint64_t checkpointedStep_ = UINT64_MAX;
  std::mutex stopMutex_;
  std::condition_variable stopRequested_;
  bool stopping_ = false;
  std::thread checkpointer_;
  // The staleness of the pushes applied since the last step event, for its mean.
  struct StalenessWindow {
    std::mutex mutex;
    std::uint64_t sum = 0;
    std::uint64_t count = 0;
    void add(std::uint64_t staleness) {
      std::lock_guard<std::mutex> lock(mutex);
      sum += staleness;
      ++count;
    }
    double take() {
      std::lock_guard<std::mutex> lock(mutex);
      const double mean = count ? double(sum) / double(count) : 0.0;
      sum = count = 0;
      return mean;
    }
  } stalenessSince_;
};

}  // namespace pstrain::ps
