#pragma once

#include <atomic>
#include <functional>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/model/layout.hpp"
#include "pstrain/net/channel.hpp"
#include "pstrain/net/message.hpp"
#include "pstrain/ps/checkpointer.hpp"
#include "pstrain/ps/cut_control.hpp"
#include "pstrain/ps/cut_position.hpp"
#include "pstrain/ps/membership.hpp"
#include "pstrain/ps/request_handle.hpp"
#include "pstrain/ps/served_cut.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/step_gate.hpp"
#include "pstrain/ps/update_rule.hpp"

namespace pstrain::ps {

// What a ps needs to know: its slice of the parameters and the run. Built from the
// configuration by the command that starts the ps.
struct ServerOptions {
  int index = 0;
  int ps = 1;  // the number of ps the configuration cuts the parameters for (generation 0)
  ShardRange range{0, 0};
  std::vector<float> initial;  // the slice's initial values
  // An optimizer for a slice of that many parameters: one for each cut the ps serves.
  std::function<std::unique_ptr<Optimizer>(size_t)> makeOptimizer;
  model::Layout layout = model::Layout::mnist({});  // the run's model: a worker's must match
  std::uint64_t runId = 0;
  Shard::Options shard;
  std::string authKey;
  double idleTimeoutSeconds = 0;  // for a worker's channel once admitted; 0: none
  double peerTimeoutSeconds = 300;  // as long as a worker waits for its welcome (the chief)
  std::string checkpointPath;  // "" for none
  double checkpointEverySeconds = 0;
  std::string description;  // of the training settings, for the start-up line
  int httpPort = 0;          // where its /status answers, told to each worker; 0: none
  int concurrentWorkers = 0;  // StepGate's capacity; 0: no bound
  // How workers push and are answered (net::WireEncoding): a worker set otherwise is refused.
  net::WireEncoding pushEncoding = net::WireEncoding::kFp32;
  net::WireEncoding pullEncoding = net::WireEncoding::kFp32;
};

// A parameter server's serving loop: serves each worker's channel, whatever carries it (TCP or
// in-process): the handshake, waiting for the chief, the welcome, then the worker's requests
// (WorkerSession), each handed to the request handle: the update rule unless another is set.
// Each applied push is one global step; after the last the ps goes on answering (with the final
// parameters) until stopped. It serves one cut of the parameters at a time (ServedCut): the one
// its checkpoint of this run holds, else the configured one; worker 0 re-cuts the ps (freeze(),
// prepare(), commit()). The cut is checkpointed periodically, at the last step, at a re-cut and
// on stop(). A checkpoint a full disk refuses is reported and the last one written stays, except
// at a re-cut, which it stops (the old cut goes on).
class Server : public CutControl {
 public:
  Server(ServerOptions options, ServerObserver& observer);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The channels served from now on hand their requests to `handle` instead of the update
  // rule, as ps-lite's KVServer::set_request_handle; it must outlive them.
  void setRequestHandle(RequestHandle& handle);

  // Reports that the ps serves (ServerObserver::serving), once workers can reach it: a ps whose
  // port cannot be bound has not reached its work, and a launcher tells the two apart by it.
  void announce();

  // Serves one worker until its channel ends; throws ProtocolError for a peer that breaks the
  // protocol (net::runSession tells it why).
  void serve(net::Channel& channel);

  // The size of the largest frame a worker sends: a slice of the whole model with its
  // optimizer state, which worker 0 gives a ps when it re-cuts them to one.
  std::uint32_t maxPayload() const;
  std::uint64_t globalStep() const { return current()->rule().globalStep(); }
  CutPosition cut() const override { return current()->position(); }
  // Sync mode: the pushes waiting at the barrier of the step under way.
  int syncArrivals() { return current()->shard().arrivals(); }

  // Writes a checkpoint unless nothing changed since the last one.
  void checkpoint() { current()->checkpointer().write(); }

  // A re-cut, as worker 0 makes it (CutControl); the sessions of a replaced cut answer kRecut.
  Frozen freeze(std::uint64_t generation) override;
  void prepare(const CutSlice& given) override;
  std::uint64_t commit(std::uint64_t generation) override;
  void thaw(std::uint64_t number) override;

  // Stops applying pushes, releases pushes waiting at the sync barrier and writes the last
  // checkpoint: for SIGTERM.
  void stop();
  // Stops as a killed process does (kill -9): no checkpoint beyond the periodic ones already
  // written, so a restart goes back to the last of them. For tests that kill a ps in-process.
  void crash();

 private:
  std::shared_ptr<ServedCut> current() const;
  // A cut to serve from `params` (the slice's values at step 0, or a re-cut's).
  std::shared_ptr<ServedCut> makeCut(const CutPosition& position, std::vector<float> params);
  // A cut serving `slice`: its values, step and optimizer state.
  std::shared_ptr<ServedCut> cutOf(const CutPosition& position, const Shard::Slice& slice);
  // Serves `cut` in place of the cut served now (a frozen one), which it returns; under
  // cutMutex_.
  std::shared_ptr<ServedCut> serveLocked(std::shared_ptr<ServedCut> cut);
  void admit(const net::Hello& hello) const;
  // Holds a worker new to the run (`knownStep` 0) until worker 0 has arrived.
  void awaitChief(std::uint32_t worker, std::uint64_t knownStep);
  // Applies no push from now on and releases whatever waits: for stop() and crash().
  void halt();

  ServerOptions options_;  // its initial values are moved into the first cut
  ServerObserver& observer_;
  // Read when a channel is welcomed; set while others are served (setRequestHandle).
  std::atomic<RequestHandle*> handle_{nullptr};
  StepGate gate_;
  Membership members_;
  mutable std::mutex cutMutex_;
  std::shared_ptr<ServedCut> cut_;  // the cut served now
  std::shared_ptr<ServedCut> frozen_;  // the cut a re-cut froze, until it commits the next
  std::uint64_t freezes_ = 0;          // the number of the last freeze
  std::optional<CutSlice> prepared_;   // the re-cut's slice for this ps, until committed
  // The slice frozen by the last re-cut committed here, with its checksum.
  std::optional<std::pair<CutSlice, std::uint64_t>> kept_;
  // The slice a re-cut gave this ps before it thawed uncommitted, with its checksum, while the
  // cut served again has applied nothing since (at step `unservedAt_`): other ps may have
  // committed theirs, and then it alone holds the new cut's values of its range.
  std::optional<std::pair<CutSlice, std::uint64_t>> unserved_;
  std::uint64_t unservedAt_ = 0;
  int connected_ = 0;                  // workers, as Membership last said
  // As with a TensorFlow chief: training starts when worker 0 arrives; the others wait for it,
  // so every worker starts from the same parameters and the clock starts once.
  std::mutex chiefMutex_;
  std::condition_variable chiefArrived_;
  bool chiefJoined_ = false;
  bool stopped_ = false;  // stop() and crash() end the waits for the chief
};

}  // namespace pstrain::ps
