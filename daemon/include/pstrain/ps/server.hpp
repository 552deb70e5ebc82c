#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pstrain/model/layout.hpp"
#include "pstrain/net/channel.hpp"
#include "pstrain/net/message.hpp"
#include "pstrain/ps/checkpointer.hpp"
#include "pstrain/ps/membership.hpp"
#include "pstrain/ps/request_handle.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/step_gate.hpp"
#include "pstrain/ps/update_rule.hpp"

namespace pstrain::ps {

// What a ps needs to know: its slice of the parameters and the run. Built from the
// configuration by the command that starts the ps.
struct ServerOptions {
  int index = 0;
  ShardRange range{0, 0};
  std::vector<float> initial;  // the slice's initial values
  std::unique_ptr<Optimizer> optimizer;
  model::Layout layout = model::Layout::mnist({});  // the run's model: a worker's must match
  std::uint64_t runId = 0;
  int ps = 1;  // of the run: a worker configured for another number is refused, saying so
  Shard::Options shard;
  std::string authKey;
  double idleTimeoutSeconds = 0;  // for a worker's channel once admitted; 0: none
  double peerTimeoutSeconds = 300;  // as long as a worker waits for its welcome (the chief)
  std::string checkpointPath;  // "" for none
  double checkpointEverySeconds = 0;
  std::string description;  // of the training settings, for the start-up line
  int httpPort = 0;          // where its /status answers, told to each worker; 0: none
  int concurrentWorkers = 0;  // StepGate's capacity; 0: no bound
};

// A parameter server's serving loop: serves each worker's channel, whatever carries it (TCP or
// in-process): the handshake, waiting for the chief, the welcome, then the worker's requests
// (WorkerSession), each handed to the request handle: the update rule unless another is set.
// Each applied push is one global step; after the last the ps goes on answering (with the final
// parameters) until stopped. Its checkpointer restores the shard of this run when
// the ps starts, and checkpoints it periodically, at the last step and on stop().
class Server {
 public:
  Server(ServerOptions options, ServerObserver& observer);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The channels served from now on hand their requests to `handle` instead of the update
  // rule, as ps-lite's KVServer::set_request_handle; it must outlive them.
  void setRequestHandle(RequestHandle& handle);

  // Serves one worker until its channel ends; throws ProtocolError for a peer that breaks the
  // protocol (net::runSession tells it why).
  void serve(net::Channel& channel);

  // The size of the largest frame a worker sends.
  std::uint32_t maxPayload() const;
  std::uint64_t globalStep() const { return rule_.globalStep(); }
  // Sync mode: the pushes waiting at the barrier of the step under way.
  int syncArrivals() { return rule_.shard().arrivals(); }

  // Writes a checkpoint unless nothing changed since the last one.
  void checkpoint() { checkpointer_.write(); }

  // Stops applying pushes, releases pushes waiting at the sync barrier and writes the last
  // checkpoint: for SIGTERM.
  void stop();

 private:
  void admit(const net::Hello& hello) const;
  void awaitChief(std::uint32_t worker);

  ServerOptions options_;  // its initial values and optimizer are moved into the update rule
  ServerObserver& observer_;
  UpdateRule rule_;
  // Read when a channel is welcomed; set while others are served (setRequestHandle).
  std::atomic<RequestHandle*> handle_{&rule_};
  Checkpointer checkpointer_;  // after rule_: its thread ends before the shard does
  StepGate gate_;
  Membership members_;
  // Where pushes are received: taken for one push and given back once it is applied.
  std::shared_ptr<BufferPool> gradients_;
  // As with a TensorFlow chief: training starts when worker 0 arrives; the others wait for it,
  // so every worker starts from the same parameters and the clock starts once.
  std::mutex chiefMutex_;
  std::condition_variable chiefArrived_;
  bool chiefJoined_ = false;
  bool stopped_ = false;  // stop() ends the waits for the chief
};

}  // namespace pstrain::ps
