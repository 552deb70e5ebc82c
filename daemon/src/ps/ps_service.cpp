#include "pstrain/ps/ps_service.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/bytes.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/model/layout.hpp"

namespace pstrain::ps {
namespace {

Shard makeShard(const config::Config& config, const ShardRange& range) {
  auto all = model::initialParameters(model::Layout::mnist(config.hiddenUnits), config.seed);
  std::vector<float> mine(all.begin() + long(range.offset),
                          all.begin() + long(range.offset + range.count));
  return Shard(std::move(mine), makeOptimizer(config.optimizer, range.count, config.learningRate),
               std::uint64_t(config.trainSteps), config.sync ? config.workers : 0);
}

constexpr std::uint64_t kCheckpointMagic = 0x31544b4352545350;  // "PSTRCKT1"

}  // namespace

PsService::PsService(const config::Config& config, int index, int listenPort,
                     std::string authKey, observe::Metrics& metrics)
    : config_(config),
      index_(index),
      authKey_(std::move(authKey)),
      metrics_(metrics),
      runId_(config::runFingerprint(config)),
      parameterCount_(model::Layout::mnist(config.hiddenUnits).parameterCount()),
      range_(shardRange(parameterCount_, config.ps, index)),
      shard_(makeShard(config, range_)),
      checkpointPath_(config.checkpointDir + "/checkpoint.bin") {
  restoreCheckpoint();
  auto maxPayload = std::uint32_t(net::fixedFieldsSize(net::MessageType::kPush) +
                                  range_.count * sizeof(float));
  // One connection per worker, plus room for status queries and reconnects.
  int maxConnections = config.workers + 8;
  server_ = std::make_unique<net::FrameServer>(
      net::FrameServer::Options{"ps", listenPort, maxPayload, maxConnections,
                                config.idleTimeoutSeconds, &metrics_.traffic,
                                &metrics_.rejectedConnections},
      [this](net::Connection& connection) { serve(connection); });
  metrics_.setState(shard_.state().done ? observe::State::kCompleted : observe::State::kTraining);
  checkpointer_ = std::thread([this] { checkpointPeriodically(); });
  log::logger("ps")->info(
      "PS {}: serving parameters [{}, {}) of {} on port {} ({}, {}, {} train steps, {} workers)",
      index_, range_.offset, range_.offset + range_.count, parameterCount_, port(),
      config.sync ? "sync" : "async",
      config.optimizer == config::OptimizerKind::kAdam ? "adam" : "sgd", config.trainSteps,
      config.workers);
}

PsService::~PsService() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  stopRequested_.notify_all();
  checkpointer_.join();
}

void PsService::restoreCheckpoint() {
  std::ifstream file(checkpointPath_, std::ios::binary);
  if (!file) return;
  auto logger = log::logger("ps");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  try {
    ByteReader in(bytes.data(), bytes.size());
    if (in.get<std::uint64_t>() != kCheckpointMagic) throw ProtocolError("not a ps checkpoint");
    auto runId = in.get<std::uint64_t>();
    if (runId != runId_) {
      logger->info("PS {}: {} belongs to another run ({}); starting run {}", index_,
                   checkpointPath_, runId, runId_);
      return;
    }
    auto offset = in.get<std::uint64_t>();
    if (offset != range_.offset) throw ProtocolError("it holds another shard");
    shard_.restore(std::vector<std::uint8_t>(bytes.begin() + 16 + 8, bytes.end()));
  } catch (const ProtocolError& e) {
    throw IoError("checkpoint " + checkpointPath_ + " cannot be restored (" + e.what() +
                  "); move it away to start this run over");
  }
  auto state = shard_.state();
  checkpointedStep_ = state.globalStep;
  // Training was under way: the chief has been here before.
  chiefJoined_ = state.globalStep > 0;
  startTime_ = std::chrono::steady_clock::now();
  metrics_.recordStep(state.globalStep, std::numeric_limits<float>::quiet_NaN());
  logger->info("PS {}: restored {} at global step {}{}", index_, checkpointPath_,
               state.globalStep, state.done ? ": the run has completed, training stays done" : "");
}

void PsService::checkpoint() {
  std::lock_guard<std::mutex> lock(checkpointMutex_);
  auto shardBytes = shard_.serialize();
  std::uint64_t step = 0;
  std::memcpy(&step, shardBytes.data(), sizeof step);
  if (step == checkpointedStep_) return;
  std::vector<std::uint8_t> bytes;
  ByteWriter(bytes).put(kCheckpointMagic).put(runId_).put(std::uint64_t(range_.offset));
  bytes.insert(bytes.end(), shardBytes.begin(), shardBytes.end());
  std::filesystem::create_directories(config_.checkpointDir);
  writeFileAtomically(checkpointPath_, std::string(bytes.begin(), bytes.end()));
  checkpointedStep_ = step;
  log::logger("ps")->info("PS {}: checkpoint at global step {} in {}", index_, step,
                          checkpointPath_);
}

void PsService::stop() {
  shard_.close();
  checkpoint();
}

void PsService::checkpointPeriodically() {
  if (config_.checkpointEverySeconds <= 0) return;
  const auto period = std::chrono::duration<double>(config_.checkpointEverySeconds);
  std::unique_lock<std::mutex> lock(stopMutex_);
  while (!stopRequested_.wait_for(lock, period, [this] { return stopping_; })) {
    try {
      checkpoint();
    } catch (const IoError& e) {
      log::logger("ps")->error("PS {}: {}", index_, e.what());
    }
  }
}

std::uint64_t PsService::globalStep() const { return shard_.state().globalStep; }

void PsService::serve(net::Connection& connection) {
  auto logger = log::logger("ps");
  std::optional<std::uint32_t> worker;
  std::vector<float> gradient;
  std::vector<float> reply(range_.count);
  for (;;) {
    const auto& frame = connection.receive();
    switch (frame.type) {
      case net::MessageType::kHello: {
        if (worker) throw ProtocolError("a second hello on one connection");
        auto hello = net::decodeHello(frame.fields);
        admit(connection, hello);
        worker = hello.index;
        gradient.resize(range_.count);
        awaitChief(*worker, connection.peerName());
        auto state = shard_.state();
        connection.send(net::MessageType::kWelcome,
                        net::encode(net::Welcome{range_.offset, range_.count, state.globalStep,
                                                 shard_.trainSteps()}));
        logger->info("PS {}: worker {} connected from {} (global step {})", index_, *worker,
                     connection.peerName(), state.globalStep);
        break;
      }
      case net::MessageType::kPull: {
        if (!worker) throw ProtocolError("pull before hello");
        const auto start = std::chrono::steady_clock::now();
        auto state = shard_.read(reply.data());
        const double seconds = secondsSince(start);
        metrics_.pullSeconds.observe(seconds);
        connection.send(net::MessageType::kParams,
                        net::encode(net::Params{state.globalStep, false, state.done,
                                                std::uint32_t(seconds * 1e6)}),
                        reply.data(), reply.size());
        break;
      }
      case net::MessageType::kPush: {
        if (!worker) throw ProtocolError("push before hello");
        auto push = net::decodePush(frame.fields);
        connection.receiveValues(gradient.data(), gradient.size());
        const auto start = std::chrono::steady_clock::now();
        auto result = shard_.push(gradient.data(), reply.data());
        const double seconds = secondsSince(start);
        metrics_.pushSeconds.observe(seconds);
        connection.send(net::MessageType::kParams,
                        net::encode(net::Params{result.globalStep, result.applied, result.done,
                                                std::uint32_t(seconds * 1e6)}),
                        reply.data(), reply.size());
        if (result.advanced) logStep(result, push.localStep, push.loss, *worker);
        break;
      }
      case net::MessageType::kStatus:
      case net::MessageType::kDone: {
        auto state = shard_.state();
        if (frame.type == net::MessageType::kDone) {
          auto done = net::decodeDone(frame.fields);
          logger->info("PS {}: worker {} finished after {} local steps", index_,
                       worker.value_or(0), done.localSteps);
        }
        connection.send(net::MessageType::kStatusReply,
                        net::encode(net::StatusReply{config::Role::kPs, std::uint32_t(index_),
                                                     state.globalStep, state.done}));
        break;
      }
      default:
        throw ProtocolError("a ps does not accept " + net::messageName(frame.type) + " messages");
    }
  }
}

void PsService::admit(net::Connection& connection, const net::Hello& hello) {
  if (hello.role != config::Role::kWorker || hello.index >= std::uint32_t(config_.workers)) {
    throw ProtocolError("hello from " + config::roleName(hello.role) + " " +
                        std::to_string(hello.index) + ": this run has workers 0 to " +
                        std::to_string(config_.workers - 1));
  }
  if (hello.parameterCount != parameterCount_ || hello.runId != runId_) {
    throw ProtocolError("worker " + std::to_string(hello.index) +
                        " runs a different configuration (model of " +
                        std::to_string(hello.parameterCount) + " parameters, run " +
                        std::to_string(hello.runId) + "; this ps has " +
                        std::to_string(parameterCount_) + ", run " + std::to_string(runId_) +
                        ")");
  }
  auto nonce = net::randomNonce();
  connection.send(net::MessageType::kChallenge,
                  net::encode(net::Challenge{nonce, net::prove(authKey_, "ps", hello.nonce, nonce)}));
  auto proof = net::decodeProof(connection.receiveExpected(net::MessageType::kProof));
  if (!net::sameDigest(proof.proof, net::prove(authKey_, "worker", nonce, hello.nonce))) {
    throw ProtocolError("worker " + std::to_string(hello.index) +
                        " failed authentication: it does not hold this run's key");
  }
}

void PsService::awaitChief(std::uint32_t worker, const std::string& peer) {
  std::unique_lock<std::mutex> lock(chiefMutex_);
  workersSeen_.push_back("worker " + std::to_string(worker) + " at " + peer);
  metrics_.setPeers(workersSeen_);
  if (worker == 0) {
    if (!chiefJoined_) startTime_ = std::chrono::steady_clock::now();
    chiefJoined_ = true;
    chiefArrived_.notify_all();
  } else if (!chiefJoined_) {
    log::logger("ps")->info("PS {}: worker {} waits for the chief, worker 0", index_, worker);
    chiefArrived_.wait(lock, [this] { return chiefJoined_; });
  }
}

void PsService::logStep(const Shard::StepResult& result, std::uint64_t localStep, float loss,
                        std::uint32_t worker) {
  auto logger = log::logger("ps");
  metrics_.recordStep(result.globalStep, loss);
  if (result.globalStep % std::uint64_t(config_.logEverySteps) == 0 || result.done) {
    logger->info("PS {}: global step {} done (worker {}, local step {}, loss {:.4f})", index_,
                 result.globalStep, worker, localStep, loss);
  }
  if (result.done) {
    logger->info("Training ends @ {:.6f}", unixTime());
    logger->info("Training elapsed time: {:.6f} s", secondsSince(startTime_));
    metrics_.setState(observe::State::kCompleted);
    checkpoint();
    log::flush();
  }
}

}  // namespace pstrain::ps
