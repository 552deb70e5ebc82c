#include "pstrain/worker/trainer.hpp"

#include <chrono>
#include <limits>

#include "pstrain/cluster/peer_connector.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/worker/batch_sampler.hpp"

namespace pstrain::worker {

Trainer::Trainer(const config::Config& config, const cluster::Placement& placement,
                 observe::Metrics& metrics)
    : config_(config),
      placement_(placement),
      layout_(model::Layout::mnist(config.hiddenUnits)),
      params_(layout_.parameterCount()),
      gradient_(layout_.parameterCount()),
      metrics_(metrics) {}

void Trainer::connect() {
  auto logger = log::logger("worker");
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(config_.peerTimeoutSeconds));
  auto maxPayload = std::uint32_t(net::fixedFieldsSize(net::MessageType::kParams) +
                                  params_.size() * sizeof(float));
  net::Hello hello{config::Role::kWorker, std::uint32_t(placement_.index),
                   layout_.parameterCount(), config::runFingerprint(config_)};
  size_t covered = 0;
  std::vector<std::string> peers;
  for (const auto& endpoint : placement_.ps) {
    net::Connection connection(cluster::connectWithRetry(endpoint, deadline), maxPayload,
                               &metrics_.traffic);
    connection.send(net::MessageType::kHello, net::encode(hello));
    auto welcome = net::decodeWelcome(connection.receiveExpected(net::MessageType::kWelcome));
    // The shards must tile the parameter vector in ps order; anything else is a misconfiguration.
    if (welcome.offset != covered || welcome.offset + welcome.count > params_.size()) {
      throw PeerError("ps " + endpoint.toString() + " serves parameters [" +
                      std::to_string(welcome.offset) + ", " +
                      std::to_string(welcome.offset + welcome.count) + "), expected to start at " +
                      std::to_string(covered) + ": are the ps counts the same everywhere?");
    }
    covered += welcome.count;
    logger->info("Worker {}: connected to ps {} (parameters [{}, {}), global step {})",
                 placement_.index, endpoint.toString(), welcome.offset,
                 welcome.offset + welcome.count, welcome.globalStep);
    links_.push_back(PsLink{std::move(connection), welcome, welcome.globalStep, false});
    peers.push_back("ps " + endpoint.toString());
  }
  metrics_.setPeers(std::move(peers));
  if (covered != params_.size()) {
    throw PeerError("the ps together serve " + std::to_string(covered) + " of " +
                    std::to_string(params_.size()) + " parameters");
  }
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
}

void Trainer::pull() {
  const auto start = std::chrono::steady_clock::now();
  // Requests go out to every ps first, so the ps work and the transfers overlap.
  for (auto& link : links_) link.connection.send(net::MessageType::kPull);
  bool applied = false;
  for (auto& link : links_) receiveParams(link, applied);
  metrics_.pullSeconds.observe(secondsSince(start));
}

bool Trainer::push(std::uint64_t localStep, float loss) {
  const auto start = std::chrono::steady_clock::now();
  auto fields = net::encode(net::Push{localStep, loss});
  for (auto& link : links_) {
    if (link.done) continue;
    link.connection.send(net::MessageType::kPush, fields, gradient_.data() + link.shard.offset,
                         link.shard.count);
  }
  bool applied = false;
  for (auto& link : links_) {
    if (!link.done) receiveParams(link, applied);
  }
  metrics_.pushSeconds.observe(secondsSince(start));
  return applied;
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

  while (!allDone()) {
    const std::uint32_t* batch = sampler.next();
    model::gatherInputs(train.pixels.data(), train.imageSize(), batch, labels.size(), inputs);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = train.labels[batch[i]];
    float loss = mlp.lossAndGradient(params_.data(), inputs, labels.data(), gradient_.data());
    if (!push(result.localSteps + 1, loss)) continue;

    ++result.localSteps;
    const auto globalStep = minGlobalStep();
    metrics_.recordStep(globalStep, loss);
    metrics_.recordLocalStep(result.localSteps);
    if (result.localSteps % std::uint64_t(config_.logEverySteps) == 0) {
      logger->info("Worker {}: training step {} done (global step: {})", index, result.localSteps,
                   globalStep);
    }
    if (chief && config_.evalEverySteps > 0 &&
        result.localSteps % std::uint64_t(config_.evalEverySteps) == 0) {
      evaluate(result.localSteps);
    }
  }

  result.elapsedSeconds = secondsSince(start);
  logger->info("Training ends @ {:.6f}", unixTime());
  logger->info("Training elapsed time: {:.6f} s", result.elapsedSeconds);
  for (auto& link : links_) {
    link.connection.send(net::MessageType::kDone,
                         net::encode(net::Done{result.localSteps}));
    link.connection.receiveExpected(net::MessageType::kStatusReply);
  }
  if (chief) {
    // Every ps has stopped applying gradients, so this pull sees the final model.
    pull();
    result.testAccuracy = evaluate(result.localSteps);
  }
  result.globalStep = minGlobalStep();
  metrics_.recordStep(result.globalStep, std::numeric_limits<float>::quiet_NaN());
  metrics_.setState(observe::State::kCompleted);
  return result;
}

}  // namespace pstrain::worker
