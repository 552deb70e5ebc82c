#include "pstrain/ps/server.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/ps/checkpoint.hpp"
#include "pstrain/ps/push_encoding.hpp"

namespace pstrain::ps {

Server::Server(ServerOptions options, observe::Metrics& metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      shard_(std::move(options_.initial), std::move(options_.optimizer), options_.shard),
      gate_(options_.concurrentWorkers),
      gradients_(BufferPool::create(options_.range.count)) {
  restoreCheckpoint();
  metrics_.setState(shard_.state().done ? observe::State::kCompleted : observe::State::kTraining);
  checkpointer_ = std::thread([this] { checkpointPeriodically(); });
  log::logger("ps")->info("PS {}: serving parameters [{}, {}) of {} ({})", options_.index,
                          options_.range.offset, options_.range.offset + options_.range.count,
                          options_.layout.parameterCount(), options_.description);
}

Server::~Server() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  stopRequested_.notify_all();
  checkpointer_.join();
}

std::uint32_t Server::maxPayload() const {
  return std::uint32_t(net::fixedFieldsSize(net::MessageType::kPush) +
                       options_.range.count * sizeof(float));
}

void Server::restoreCheckpoint() {
  if (options_.checkpointPath.empty()) return;
  std::ifstream file(options_.checkpointPath, std::ios::binary);
  if (!file) return;
  auto logger = log::logger("ps");
  const auto& path = options_.checkpointPath;
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  try {
    auto checkpoint = decodeCheckpoint(bytes);
    if (checkpoint.runId != options_.runId) {
      logger->info("PS {}: {} belongs to another run ({}); starting run {}", options_.index, path,
                   checkpoint.runId, options_.runId);
      return;
    }
    if (checkpoint.offset != options_.range.offset) throw DecodeError("it holds another shard");
    shard_.restore(checkpoint.globalStep, checkpoint.shard);
  } catch (const DecodeError& e) {
    throw IoError("checkpoint " + path + " cannot be restored (" + e.what() +
                  "); move it away to start this run over");
  }
  auto state = shard_.state();
  checkpointedStep_ = state.globalStep;
  // Training was under way: the chief has been here before.
  chiefJoined_ = state.globalStep > 0;
  startTime_ = std::chrono::steady_clock::now();
  metrics_.recordStep(state.globalStep, std::numeric_limits<float>::quiet_NaN());
  metrics_.events().restored(state.globalStep, path, state.done);
  logger->info("PS {}: restored {} at global step {}{}", options_.index, path, state.globalStep,
               state.done ? ": the run has completed, training stays done" : "");
}

void Server::checkpoint() {
  if (options_.checkpointPath.empty()) return;
  std::lock_guard<std::mutex> lock(checkpointMutex_);
  auto snapshot = shard_.serialize();
  const auto step = snapshot.globalStep;
  if (step == checkpointedStep_) return;
  auto bytes = encodeCheckpoint(
      Checkpoint{options_.runId, options_.range.offset, step, std::move(snapshot.bytes)});
  std::error_code failed;
  std::filesystem::create_directories(std::filesystem::path(options_.checkpointPath).parent_path(),
                                      failed);
  if (failed) throw IoError("cannot write " + options_.checkpointPath + ": " + failed.message());
  writeFileAtomically(options_.checkpointPath, std::string(bytes.begin(), bytes.end()));
  checkpointedStep_ = step;
  metrics_.events().checkpoint(step, options_.checkpointPath);
  log::logger("ps")->info("PS {}: checkpoint at global step {} in {}", options_.index, step,
                          options_.checkpointPath);
}

void Server::stop() {
  shard_.close();
  gate_.open();
  checkpoint();
}

void Server::checkpointPeriodically() {
  if (options_.checkpointEverySeconds <= 0) return;
  const auto period = std::chrono::duration<double>(options_.checkpointEverySeconds);
  std::unique_lock<std::mutex> lock(stopMutex_);
  while (!stopRequested_.wait_for(lock, period, [this] { return stopping_; })) {
    try {
      checkpoint();
    } catch (const IoError& e) {
      log::logger("ps")->error("PS {}: {}", options_.index, e.what());
    }
  }
}

void Server::serve(net::Channel& channel) {
  auto logger = log::logger("ps");
  const auto hello =
      net::admit(channel, options_.authKey, [this](const net::Hello& h) { admit(h); });
  const std::uint32_t worker = hello.index;
  channel.setReceiveTimeout(options_.idleTimeoutSeconds);
  awaitChief(worker, channel.peerName());
  // The roster counts this connection until serve() returns, however it ends.
  metrics_.workers.joined(worker);
  struct Leaving {
    observe::WorkerRoster& roster;
    std::uint32_t worker;
    ~Leaving() { roster.left(worker); }
  } leaving{metrics_.workers, worker};
  auto state = shard_.state();
  channel.send(net::MessageType::kWelcome,
               net::encode(net::Welcome{options_.range.offset, options_.range.count,
                                        state.globalStep, shard_.trainSteps(),
                                        std::uint32_t(options_.httpPort)}));
  logger->info("PS {}: worker {} connected from {} (global step {})", options_.index, worker,
               channel.peerName(), state.globalStep);
  metrics_.events().connected("worker " + std::to_string(worker), state.globalStep);

  // The step of the parameters this worker was sent last: its next gradient's.
  std::uint64_t sentStep = state.paramsStep;
  // Inside the gate from an answer until the worker's next request.
  StepGate::Place place(gate_);
  // Answers a pull or a push with the parameters after it, and how long the ps held it (since
  // `start`). An answer that waited at the gate carries the parameters as they are when it goes.
  auto answer = [&](Shard::StepResult result, std::chrono::steady_clock::time_point start) {
    const bool held = !result.done && place.enter();
    if (held) {
      auto now = shard_.read();
      result.params = std::move(now.params);
      result.paramsStep = now.paramsStep;
    }
    sentStep = result.paramsStep;
    channel.send(net::MessageType::kParams,
                 net::encode(net::Params{result.globalStep, result.applied, result.done,
                                         std::uint32_t(secondsSince(start) * 1e6), held}),
                 result.params.get(), shard_.size());
  };
  std::optional<PushEncoding> encoding;  // of this worker's latest push
  for (;;) {
    const auto& frame = channel.receive();
    // The worker's step is over once its next request is here (a push: once it is applied).
    if (frame.type != net::MessageType::kPush) place.leave();
    switch (frame.type) {
      case net::MessageType::kPull: {
        const auto start = std::chrono::steady_clock::now();
        auto result = shard_.read();
        const double seconds = secondsSince(start);
        metrics_.pullSeconds().Observe(seconds);
        answer(std::move(result), start);
        break;
      }
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
        const auto start = std::chrono::steady_clock::now();
        auto result = shard_.push(worker, gradient.get(), sentStep);
        place.leave();
        gradient.reset();
        const double seconds = secondsSince(start);
        metrics_.pushSeconds().Observe(seconds);
        if (result.applied) {
          metrics_.staleness().Observe(double(result.staleness));
          stalenessSince_.add(result.staleness);
        }
        answer(result, start);
        metrics_.workers.stepped(worker, push.localStep);
        if (result.advanced) logStep(result, push.localStep, push.loss, worker);
        break;
      }
      case net::MessageType::kDone: {
        auto done = net::decodeDone(frame.fields);
        logger->info("PS {}: worker {} finished after {} local steps", options_.index, worker,
                     done.localSteps);
        metrics_.events().finished("worker " + std::to_string(worker), done.localSteps);
        metrics_.workers.finished(worker, done.localSteps);
        auto now = shard_.state();
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
  if (hello.role != Role::kWorker || hello.index >= std::uint32_t(options_.workers)) {
    throw ProtocolError("hello from " + roleName(hello.role) + " " +
                        std::to_string(hello.index) + ": this run has workers 0 to " +
                        std::to_string(options_.workers - 1));
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

void Server::awaitChief(std::uint32_t worker, const std::string& peer) {
  std::unique_lock<std::mutex> lock(chiefMutex_);
  workerAddresses_[worker] = peer;
  std::vector<std::string> peers;
  for (const auto& [index, address] : workerAddresses_) {
    peers.push_back("worker " + std::to_string(index) + " at " + address);
  }
  metrics_.setPeers(std::move(peers));
  if (worker == 0) {
    if (!chiefJoined_) startTime_ = std::chrono::steady_clock::now();
    chiefJoined_ = true;
    chiefArrived_.notify_all();
  } else if (!chiefJoined_) {
    log::logger("ps")->info("PS {}: worker {} waits for the chief, worker 0", options_.index,
                            worker);
    chiefArrived_.wait(lock, [this] { return chiefJoined_; });
  }
}

void Server::logStep(const Shard::StepResult& result, std::uint64_t localStep, float loss,
                     std::uint32_t worker) {
  auto logger = log::logger("ps");
  metrics_.recordStep(result.globalStep, loss);
  if (options_.shard.syncWorkers > 0 && result.averaged < options_.shard.syncWorkers) {
    logger->warn("PS {}: global step {} averaged {} of {} workers' gradients: the others did not "
                 "come within {} ms",
                 options_.index, result.globalStep, result.averaged, options_.shard.syncWorkers,
                 options_.shard.syncTimeout.count());
    metrics_.events().averaged(result.globalStep, result.averaged, options_.shard.syncWorkers);
  }
  if (result.globalStep % std::uint64_t(options_.logEverySteps) == 0 || result.done) {
    logger->info("PS {}: global step {} done (worker {}, local step {}, loss {:.4f})",
                 options_.index, result.globalStep, worker, localStep, loss);
    metrics_.events().step(result.globalStep, loss, worker, localStep, stalenessSince_.take());
  }
  if (result.done) {
    const double elapsed = secondsSince(startTime_);
    const auto staleness = metrics_.stalenessSummary();
    logger->info("PS {}: a push's gradient was {:.2f} global steps old on average (99% within {})",
                 options_.index, staleness.mean, staleness.p99);
    metrics_.events().staleness(staleness.pushes, staleness.mean, staleness.p99);
    logger->info("Training ends @ {:.6f}", unixTime());
    logger->info("Training elapsed time: {:.6f} s", elapsed);
    metrics_.events().done(result.globalStep, elapsed);
    gate_.open();
    metrics_.setState(observe::State::kCompleted);
    checkpoint();
    log::flush();
  }
}

}  // namespace pstrain::ps
