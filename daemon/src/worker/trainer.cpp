#include "pstrain/worker/trainer.hpp"

#include <chrono>
#include <thread>
#include <limits>

#include <Poco/Timespan.h>

#include "pstrain/cluster/peer_connector.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/worker/batch_sampler.hpp"

namespace pstrain::worker {

Trainer::Trainer(const config::Config& config, const cluster::Placement& placement,
                 std::string authKey, observe::Metrics& metrics)
    : config_(config),
      placement_(placement),
      authKey_(std::move(authKey)),
      layout_(model::Layout::mnist(config.hiddenUnits)),
      params_(layout_.parameterCount()),
      gradient_(layout_.parameterCount()),
      metrics_(metrics) {}

namespace {

std::chrono::steady_clock::duration seconds(double value) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(value));
}

Poco::Timespan timespan(double seconds) {
  return Poco::Timespan(Poco::Timespan::TimeDiff(seconds * 1e6));
}

}  // namespace

Trainer::PsLink Trainer::open(const cluster::Endpoint& endpoint) {
  auto maxPayload = std::uint32_t(net::fixedFieldsSize(net::MessageType::kParams) +
                                  params_.size() * sizeof(float));
  auto deadline = std::chrono::steady_clock::now() + seconds(config_.peerTimeoutSeconds);
  net::Connection connection(cluster::connectWithRetry(endpoint, deadline), maxPayload,
                             &metrics_.traffic);
  // The welcome may wait for the chief to arrive: as long as any peer may take to appear.
  connection.socket().setReceiveTimeout(timespan(config_.peerTimeoutSeconds));
  auto nonce = net::randomNonce();
  connection.send(net::MessageType::kHello,
                  net::encode(net::Hello{config::Role::kWorker, std::uint32_t(placement_.index),
                                         layout_.parameterCount(),
                                         config::runFingerprint(config_), nonce}));
  auto challenge =
      net::decodeChallenge(connection.receiveExpected(net::MessageType::kChallenge));
  if (!net::sameDigest(challenge.proof, net::prove(authKey_, "ps", nonce, challenge.nonce))) {
    throw PeerError("ps " + endpoint.toString() + " failed authentication: it does not hold "
                    "this run's key");
  }
  connection.send(net::MessageType::kProof,
                  net::encode(net::Proof{net::prove(authKey_, "worker", challenge.nonce, nonce)}));
  auto welcome = net::decodeWelcome(connection.receiveExpected(net::MessageType::kWelcome));
  connection.socket().setReceiveTimeout(timespan(config_.idleTimeoutSeconds));
  return PsLink{endpoint, std::move(connection), welcome, welcome.globalStep, false, false, {}};
}

Trainer::PsLink Trainer::openShard(const cluster::Endpoint& endpoint, size_t offset) {
  auto logger = log::logger("worker");
  const auto deadline = std::chrono::steady_clock::now() + seconds(config_.peerTimeoutSeconds);
  auto backoff = std::chrono::milliseconds(100);
  for (;;) {
    auto link = open(endpoint);
    const auto& shard = link.shard;
    if (shard.offset == offset && shard.offset + shard.count <= params_.size()) return link;
    // Same run, other shard: the name led to another ps, as a stale DNS answer or a reused pod
    // address can; it sorts itself out as the records catch up.
    std::string what = "ps " + endpoint.toString() + " serves parameters [" +
                       std::to_string(shard.offset) + ", " +
                       std::to_string(shard.offset + shard.count) + "), not those from " +
                       std::to_string(offset);
    if (std::chrono::steady_clock::now() + backoff > deadline) {
      throw PeerError(what + ", until the peer timeout");
    }
    logger->warn("Worker {}: {}; trying again", placement_.index, what);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

void Trainer::connect() {
  auto logger = log::logger("worker");
  size_t covered = 0;
  std::vector<std::string> peers;
  for (const auto& endpoint : placement_.ps) {
    // The shards tile the parameter vector in ps order.
    auto link = openShard(endpoint, covered);
    const auto& shard = link.shard;
    covered += shard.count;
    logger->info("Worker {}: connected to ps {} (parameters [{}, {}), global step {})",
                 placement_.index, endpoint.toString(), shard.offset, shard.offset + shard.count,
                 shard.globalStep);
    links_.push_back(std::move(link));
    peers.push_back("ps " + endpoint.toString());
  }
  metrics_.setPeers(std::move(peers));
  if (covered != params_.size()) {
    throw PeerError("the ps together serve " + std::to_string(covered) + " of " +
                    std::to_string(params_.size()) + " parameters");
  }
}

void Trainer::reconnect(PsLink& link, const std::string& reason) {
  auto logger = log::logger("worker");
  logger->warn("Worker {}: lost ps {} ({}); reconnecting", placement_.index,
               link.endpoint.toString(), reason);
  ++metrics_.reconnects;
  link = openShard(link.endpoint, link.shard.offset);
  // It may have gone back to its last checkpoint: its parameters replace ours.
  link.connection.send(net::MessageType::kPull);
  bool applied = false;
  receiveParams(link, applied);
  logger->info("Worker {}: reconnected to ps {} at global step {}", placement_.index,
               link.endpoint.toString(), link.globalStep);
}

void Trainer::receiveParams(PsLink& link, bool& applied) {
  const auto& frame = link.connection.receive();
  if (frame.type != net::MessageType::kParams) {
    throw ProtocolError("expected params but received " + net::messageName(frame.type));
  }
  auto params = net::decodeParams(frame.fields);
  link.connection.receiveValues(params_.data() + link.shard.offset, link.shard.count);
  link.globalStep = params.globalStep;
  link.done = params.done;
  applied = applied || params.applied;
  lastServiceSeconds_ = std::max(lastServiceSeconds_, params.serviceMicros * 1e-6);
}

void Trainer::post(net::MessageType type, const std::vector<std::uint8_t>& fields) {
  const bool isPush = type == net::MessageType::kPush;
  // Requests go out to every ps first, so the ps work and the transfers overlap.
  for (auto& link : links_) {
    if (isPush && link.done) continue;
    try {
      link.connection.send(type, fields, isPush ? gradient_.data() + link.shard.offset : nullptr,
                           isPush ? link.shard.count : 0);
      link.awaiting = true;
    } catch (const PeerError& e) {
      link.failure = e.what();
    }
  }
}

bool Trainer::collect() {
  bool applied = false;
  lastServiceSeconds_ = 0;
  for (auto& link : links_) {
    if (!link.awaiting) continue;
    link.awaiting = false;
    try {
      receiveParams(link, applied);
    } catch (const ProtocolError&) {
      throw;  // a ps that speaks nonsense is not cured by reconnecting
    } catch (const PeerError& e) {
      link.failure = e.what();
    }
  }
  for (auto& link : links_) {
    if (!link.failure.empty()) reconnect(link, link.failure);
  }
  return applied;
}

void Trainer::pull() {
  const auto start = std::chrono::steady_clock::now();
  post(net::MessageType::kPull, {});
  collect();
  metrics_.pullSeconds.observe(secondsSince(start));
}

bool Trainer::allDone() const {
  for (const auto& link : links_) {
    if (!link.done) return false;
  }
  return true;
}

// The global step every shard has reached; it rises with each of this worker's applied pushes.
std::uint64_t Trainer::minGlobalStep() const {
  std::uint64_t step = UINT64_MAX;
  for (const auto& link : links_) step = std::min(step, link.globalStep);
  return step;
}

TrainingResult Trainer::run(const data::Examples& train, const data::Examples* test) {
  auto logger = log::logger("worker");
  const int index = placement_.index;
  const bool chief = index == 0 && test != nullptr;
  connect();
  pull();
  metrics_.setState(observe::State::kTraining);

  model::Mlp mlp(layout_);
  std::optional<model::Mlp> evaluator;
  if (chief) evaluator.emplace(layout_);
  auto evaluate = [&](std::uint64_t localStep) {
    double accuracy = model::accuracy(*evaluator, params_.data(), test->pixels.data(),
                                      test->labels.data(), test->count);
    logger->info("Accuracy at local step {}: {:.4f}", localStep, accuracy);
    metrics_.recordAccuracy(accuracy);
    return accuracy;
  };

  BatchSampler sampler(train.count, size_t(config_.batchSize), config_.seed + 1 + size_t(index));
  arma::fmat inputs;
  std::vector<std::uint8_t> labels(size_t(config_.batchSize));
  TrainingResult result;
  const auto start = std::chrono::steady_clock::now();
  logger->info("Worker {}: training on {} examples, batch {}, until global step {}", index,
               train.count, config_.batchSize, config_.trainSteps);

  const auto bytesBefore = metrics_.traffic.sent + metrics_.traffic.received;
  // The gradient of the next batch, on the parameters at hand.
  auto computeGradient = [&] {
    const auto computeStart = std::chrono::steady_clock::now();
    const std::uint32_t* batch = sampler.next();
    model::gatherInputs(train.pixels.data(), train.imageSize(), batch, labels.size(), inputs);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = train.labels[batch[i]];
    float loss = mlp.lossAndGradient(params_.data(), inputs, labels.data(), gradient_.data());
    result.computeSeconds += secondsSince(computeStart);
    return loss;
  };
  while (!allDone()) {
    float loss = computeGradient();
    const auto exchangeStart = std::chrono::steady_clock::now();
    post(net::MessageType::kPush, net::encode(net::Push{result.localSteps + 1, loss}));
    bool applied = collect();
    const double exchangeSeconds = secondsSince(exchangeStart);
    metrics_.pushSeconds.observe(exchangeSeconds);
    result.waitingSeconds += std::min(lastServiceSeconds_, exchangeSeconds);
    result.communicationSeconds += std::max(0.0, exchangeSeconds - lastServiceSeconds_);

    if (applied) {
      ++result.localSteps;
      const auto globalStep = minGlobalStep();
      metrics_.recordStep(globalStep, loss);
      metrics_.recordLocalStep(result.localSteps);
      if (result.localSteps % std::uint64_t(config_.logEverySteps) == 0) {
        logger->info("Worker {}: training step {} done (global step: {})", index,
                     result.localSteps, globalStep);
      }
      if (chief && config_.evalEverySteps > 0 &&
          result.localSteps % std::uint64_t(config_.evalEverySteps) == 0) {
        evaluate(result.localSteps);
      }
    }
  }

  result.elapsedSeconds = secondsSince(start);
  result.bytesExchanged = metrics_.traffic.sent + metrics_.traffic.received - bytesBefore;
  if (result.localSteps > 0) {
    const double steps = double(result.localSteps);
    logger->info("Worker {}: per step {:.3f} ms computing, {:.3f} ms communicating, {:.3f} ms "
                 "waiting for the ps, {:.0f} bytes exchanged",
                 index, 1e3 * result.computeSeconds / steps,
                 1e3 * result.communicationSeconds / steps, 1e3 * result.waitingSeconds / steps,
                 double(result.bytesExchanged) / steps);
  }
  logger->info("Training ends @ {:.6f}", unixTime());
  logger->info("Training elapsed time: {:.6f} s", result.elapsedSeconds);
  if (chief) {
    // Every ps has stopped applying gradients, so this pull sees the final model.
    pull();
    result.testAccuracy = evaluate(result.localSteps);
  }
  result.globalStep = minGlobalStep();
  for (auto& link : links_) {
    try {
      link.connection.send(net::MessageType::kDone, net::encode(net::Done{result.localSteps}));
      link.connection.receiveExpected(net::MessageType::kStatusReply);
    } catch (const PeerError& e) {
      logger->info("Worker {}: could not say goodbye to ps {}: {}", index,
                   link.endpoint.toString(), e.what());
    }
  }
  links_.clear();  // a finished worker holds no ps connection
  metrics_.recordStep(result.globalStep, std::numeric_limits<float>::quiet_NaN());
  metrics_.setState(observe::State::kCompleted);
  return result;
}

}  // namespace pstrain::worker
