#include "pstrain/ps/server.hpp"

#include <algorithm>
#include <optional>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/ps/push_encoding.hpp"

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

void Server::serve(net::Channel& channel) {
  const auto hello =
      net::admit(channel, options_.authKey, [this](const net::Hello& h) { admit(h); });
  const std::uint32_t worker = hello.index;
  channel.setReceiveTimeout(options_.idleTimeoutSeconds);
  observer_.workerArrived(worker, channel.peerName());
  awaitChief(worker);
  auto state = rule_.shard().state();
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

  // The step of the parameters this worker was sent last: its next gradient's.
  std::uint64_t sentStep = state.paramsStep;
  // Inside the gate from an answer until the worker's request that ends its turn.
  StepGate::Place place(gate_);
  // Answers a pull or a push with the parameters after it, and how long the ps held it. An
  // answer that waited at the gate carries the parameters as they are when it goes.
  auto answer = [&](UpdateRule::Answer given) {
    auto& result = given.result;
    const auto start = std::chrono::steady_clock::now();
    const bool held = !result.done && place.enter();
    if (held) {
      auto now = rule_.shard().read();
      result.params = std::move(now.params);
      result.paramsStep = now.paramsStep;
    }
    sentStep = result.paramsStep;
    const double seconds = given.seconds + secondsSince(start);
    const auto part = members_.divisionOf(worker);
    channel.send(net::MessageType::kParams,
                 net::encode(net::Params{result.globalStep, result.applied, result.done,
                                         std::uint32_t(seconds * 1e6), held, part.rank,
                                         part.workers}),
                 result.params.get(), options_.range.count);
  };
  std::optional<PushEncoding> encoding;  // of this worker's latest push
  for (;;) {
    const auto& frame = channel.receive();
    // The worker's step is over once its next request is here (a push: once it is applied).
    if (frame.type != net::MessageType::kPush) place.leave();
    switch (frame.type) {
      case net::MessageType::kPull:
        answer(rule_.pull());
        break;
      case net::MessageType::kPush: {
        auto push = net::decodePush(frame.fields);
        if (!encoding || encoding->batch() != push.batch) {
          encoding.emplace(options_.layout, options_.range, push.batch);
        }
        encoding->expectValues(frame.valueCount);
        auto gradient = gradients_->take();
        if (encoding->dense()) {
          channel.receiveValues(gradient.get(), options_.range.count);
        } else {
          auto values = gradients_->take();
          channel.receiveValues(values.get(), encoding->valueCount());
          encoding->decode(values.get(), gradient.get());
        }
        auto given = rule_.push(worker, push.localStep, push.loss, gradient.get(), sentStep);
        place.leave();
        gradient.reset();
        answer(given);
        break;
      }
      case net::MessageType::kShardCopy: {
        auto copy = net::decodeShardCopy(frame.fields);
        if (copy.globalStep == 0 || copy.globalStep > options_.shard.trainSteps) {
          throw ProtocolError("a shard copy at global step " + std::to_string(copy.globalStep) +
                              " in a run of " + std::to_string(options_.shard.trainSteps));
        }
        auto values = gradients_->take();
        channel.receiveValues(values.get(), options_.range.count);
        rule_.adopt(worker, copy.globalStep, values.get());
        break;
      }
      case net::MessageType::kDone: {
        auto done = net::decodeDone(frame.fields);
        observer_.workerFinished(worker, done.localSteps);
        auto now = rule_.shard().state();
        channel.send(net::MessageType::kStatusReply,
                     net::encode(net::StatusReply{Role::kPs,
                                                  std::uint32_t(options_.index),
                                                  now.globalStep, now.done}));
        break;
      }
      default:
        throw ProtocolError("a ps does not accept " + net::messageName(frame.type) +
                            " messages after the handshake");
    }
  }
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
