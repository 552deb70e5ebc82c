#include "pstrain/ps/server.hpp"

#include <algorithm>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/ps/worker_session.hpp"

namespace pstrain::ps {

Server::Server(ServerOptions options, ServerObserver& observer)
    : options_(std::move(options)),
      observer_(observer),
      rule_({options_.index, options_.shard}, std::move(options_.initial),
            std::move(options_.optimizer), observer,
            [this] {
              gate_.open();
              checkpointer_.write();
            }),
      checkpointer_({options_.index, options_.checkpointPath, options_.checkpointEverySeconds,
                     options_.runId, options_.range.offset},
                    rule_.shard(), observer),
      gate_(options_.concurrentWorkers),
      members_([this](int connected) { rule_.shard().setWorkers(connected); }),
      gradients_(BufferPool::create(options_.range.count)) {
  const auto state = rule_.shard().state();
  if (state.globalStep > 0) {  // restored under way: the chief has been here before
    chiefJoined_ = true;
    rule_.startClock();
  }
  observer_.serving(state.done);
  log::logger("ps")->info("PS {}: serving parameters [{}, {}) of {} ({})", options_.index,
                          options_.range.offset, options_.range.offset + options_.range.count,
                          options_.layout.parameterCount(), options_.description);
}

std::uint32_t Server::maxPayload() const {
  // A push or a shard copy: at most the shard's values after the fixed fields.
  const auto fixed = std::max(net::fixedFieldsSize(net::MessageType::kPush),
                              net::fixedFieldsSize(net::MessageType::kShardCopy));
  return std::uint32_t(fixed + options_.range.count * sizeof(float));
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(chiefMutex_);
    stopped_ = true;
  }
  chiefArrived_.notify_all();
  rule_.stop();
  gate_.open();
  checkpointer_.write();
}

void Server::setRequestHandle(RequestHandle& handle) { handle_ = &handle; }

void Server::serve(net::Channel& channel) {
  const auto hello =
      net::admit(channel, options_.authKey, [this](const net::Hello& h) { admit(h); });
  const std::uint32_t worker = hello.index;
  channel.setReceiveTimeout(options_.idleTimeoutSeconds);
  observer_.workerArrived(worker, channel.peerName());
  awaitChief(worker);
  const auto state = rule_.shard().state();
  // Joined before it is welcomed (a sync step that comes after its welcome waits for it too),
  // until serve() returns, however it ends.
  observer_.workerJoined(worker, channel.peerName(), state.globalStep);
  members_.join(worker);
  struct Leaving {
    Server& server;
    std::uint32_t worker;
    ~Leaving() {
      server.members_.leave(worker);
      server.observer_.workerLeft(worker);
    }
  } leaving{*this, worker};
  channel.send(net::MessageType::kWelcome,
               net::encode(net::Welcome{options_.range.offset, options_.range.count,
                                        state.globalStep, options_.shard.trainSteps,
                                        std::uint32_t(options_.httpPort)}));
  const WorkerSession::Shared shared{options_.index, options_.range,  options_.layout,
                                     options_.shard.trainSteps, *handle_, rule_.shard(),
                                     gate_, members_, *gradients_, observer_};
  WorkerSession(shared, channel, worker, state.paramsStep).serve();
}

void Server::admit(const net::Hello& hello) const {
  // Any worker index: workers join and leave during a run (a StatefulSet scaled up), each
  // known by its index alone.
  if (hello.role != Role::kWorker) {
    throw ProtocolError("hello from " + roleName(hello.role) + " " +
                        std::to_string(hello.index) + ": only workers connect to a ps");
  }
  // Shards are cut by the number of ps: a run keeps it from start to end (it is part of the run
  // id too; this says which setting differs, and what to do).
  if (hello.psCount != std::uint32_t(options_.ps)) {
    throw ProtocolError(
        "worker " + std::to_string(hello.index) + " is configured for " +
        std::to_string(hello.psCount) + " ps, this run has " + std::to_string(options_.ps) +
        ": the number of ps cannot change during a run; configure " + std::to_string(options_.ps) +
        ", or start a new run with " + std::to_string(hello.psCount) + " on every ps and worker");
  }
  if (hello.parameterCount != options_.layout.parameterCount() || hello.runId != options_.runId) {
    throw ProtocolError("worker " + std::to_string(hello.index) +
                        " runs a different configuration (model of " +
                        std::to_string(hello.parameterCount) + " parameters, run " +
                        std::to_string(hello.runId) + "; this ps has " +
                        std::to_string(options_.layout.parameterCount()) + ", run " +
                        std::to_string(options_.runId) + ")");
  }
}

void Server::awaitChief(std::uint32_t worker) {
  std::unique_lock<std::mutex> lock(chiefMutex_);
  if (worker == 0) {
    rule_.startClock();
    chiefJoined_ = true;
    chiefArrived_.notify_all();
  } else if (!chiefJoined_) {
    observer_.workerWaitsForChief(worker);
    // No longer than the worker waits for its welcome (0: for ever): one that went away meanwhile
    // would hold this thread and its connection until the chief came, if ever.
    const auto done = [this] { return chiefJoined_ || stopped_; };
    const std::chrono::duration<double> timeout(options_.peerTimeoutSeconds);
    if (timeout.count() > 0) {
      chiefArrived_.wait_for(lock, timeout, done);
    } else {
      chiefArrived_.wait(lock, done);
    }
    if (!chiefJoined_) {
      throw UnreachableError(stopped_ ? std::string("the ps stopped before worker 0 arrived")
                                      : fmt::format("worker 0 has not arrived within {:g} s",
                                                    options_.peerTimeoutSeconds));
    }
  }
}

}  // namespace pstrain::ps
