#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/cluster/placement.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/net/connection.hpp"
#include "pstrain/observe/metrics.hpp"

namespace pstrain::worker {

struct TrainingResult {
  std::uint64_t globalStep = 0;
  std::uint64_t localSteps = 0;
  double elapsedSeconds = 0;
  std::optional<double> testAccuracy;  // worker 0 only
  // Where the time of the training steps went: the gradient, the ps holding the request (lock,
  // optimizer, sync barrier: waiting), and the rest of the round trips (communication).
  double computeSeconds = 0;
  double waitingSeconds = 0;
  double communicationSeconds = 0;
  std::uint64_t bytesExchanged = 0;  // sent and received by this worker
};

// One worker's training loop: pulls the parameters from every ps, computes the gradient of a
// batch of its own examples, pushes each ps its slice of the gradient and receives that slice
// of the updated parameters in the answer, until every ps reports the end of training.
// Worker 0 (the chief) evaluates test accuracy every evalEverySteps and at the end.
// A ps that goes away (restarted, rescheduled) is reconnected with backoff until the peer
// timeout, and its slice pulled afresh; the push in flight to it is lost.
class Trainer {
 public:
  // Proves `authKey` to every ps; reports progress, latencies, traffic and reconnects in
  // `metrics`.
  Trainer(const config::Config& config, const cluster::Placement& placement, std::string authKey,
          observe::Metrics& metrics);

  // `test` is used by the chief only and may be null for the others.
  TrainingResult run(const data::Examples& train, const data::Examples* test);

  // The model as trained: valid after run().
  const std::vector<float>& parameters() const { return params_; }
  const model::Layout& layout() const { return layout_; }

 private:
  struct PsLink {
    cluster::Endpoint endpoint;
    net::Connection connection;
    net::Welcome shard;
    std::uint64_t globalStep = 0;
    bool done = false;
    bool awaiting = false;  // a request is out, its answer not yet read
    std::string failure;    // why the connection broke, until it is made again
  };

  PsLink open(const cluster::Endpoint& endpoint);
  // open() until the ps that answers serves the shard starting at `offset`.
  PsLink openShard(const cluster::Endpoint& endpoint, size_t offset);
  void connect();
  void reconnect(PsLink& link, const std::string& reason);
  // Sends `type` to every ps (a push carries the ps's gradient slice; finished ps get no push).
  void post(net::MessageType type, const std::vector<std::uint8_t>& fields);
  // Takes in the answers to post(): each ps's slice of the parameters. A ps whose connection
  // broke is reconnected and its slice pulled afresh. Returns whether any ps applied a push.
  bool collect();
  void pull();
  void receiveParams(PsLink& link, bool& applied);
  bool allDone() const;
  std::uint64_t minGlobalStep() const;

  const config::Config& config_;
  const cluster::Placement& placement_;
  std::string authKey_;
  model::Layout layout_;
  std::vector<float> params_;
  std::vector<float> gradient_;
  std::vector<PsLink> links_;
  double lastServiceSeconds_ = 0;  // the longest any ps held a request of the last exchange
  observe::Metrics& metrics_;
};

}  // namespace pstrain::worker
