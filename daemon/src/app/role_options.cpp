#include "pstrain/app/role_options.hpp"

#include <chrono>

#include "pstrain/common/incarnation.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/net/auth.hpp"
#include "pstrain/net/handshake.hpp"

namespace pstrain::app {
namespace {

// How long a new connection may take to send its hello before it is closed: a worker sends it
// at once, so this only bounds what strangers can hold.
constexpr double kHandshakeSeconds = 5;

}  // namespace

ps::ServerOptions serverOptions(const config::Config& settings, int index) {
  const auto layout = model::Layout::mnist(settings.hiddenUnits);
  ps::ServerOptions options;
  options.index = index;
  options.layout = layout;
  // A ps beyond the run's ps serves no configured slice (ps::Server: only its checkpoint's).
  if (index < settings.ps) {
    options.range = ps::shardRange(layout.parameterCount(), settings.ps, index);
  }
  auto all = model::initialParameters(layout, settings.seed);
  options.initial.assign(all.begin() + long(options.range.offset),
                         all.begin() + long(options.range.offset + options.range.count));
  options.makeOptimizer = [kind = settings.optimizer, rate = settings.learningRate](size_t size) {
    return ps::makeOptimizer(kind, size, rate);
  };
  options.runId = config::runFingerprint(settings);
  options.ps = settings.ps;
  options.shard.trainSteps = std::uint64_t(settings.trainSteps);
  const bool sync = config::synchronous(settings);
  options.shard.sync = sync;
  options.shard.syncLearningRate = {settings.scaleLearningRate,
                                    settings.optimizer == ps::OptimizerKind::kAdam,
                                    std::uint64_t(settings.warmupSteps)};
  // ps 0 alone holds answers back, so every worker's place is decided in one spot.
  options.concurrentWorkers = index == 0 && !sync ? config::concurrentWorkers(settings) : 0;
  options.shard.syncTimeout =
      std::chrono::milliseconds(std::int64_t(settings.syncTimeoutSeconds * 1e3));
  options.authKey = net::loadAuthKey(settings.authKeyFile);
  options.idleTimeoutSeconds = settings.idleTimeoutSeconds;
  options.peerTimeoutSeconds = settings.peerTimeoutSeconds;
  options.checkpointPath = settings.checkpointDir + "/checkpoint.bin";
  options.checkpointEverySeconds = settings.checkpointEverySeconds;
  options.pushEncoding = settings.pushEncoding;
  options.pullEncoding = settings.pullEncoding;
  options.description = config::describeMode(settings) + ", " +
                        (settings.optimizer == ps::OptimizerKind::kAdam ? "adam" : "sgd") +
                        ", " + std::to_string(settings.trainSteps) + " train steps";
  return options;
}

ps::ClientOptions clientOptions(const config::Config& settings, int index,
                                std::vector<net::Endpoint> ps) {
  return ps::ClientOptions{std::uint32_t(index),
                           config::runFingerprint(settings),
                           model::Layout::mnist(settings.hiddenUnits),
                           net::loadAuthKey(settings.authKeyFile),
                           std::move(ps),
                           settings.peerTimeoutSeconds,
                           settings.idleTimeoutSeconds,
                           {},
                           1.0,
                           settings.pushesInFlight,
                           settings.pushEncoding,
                           settings.pullEncoding,
                           settings.seed};
}

std::unique_ptr<ps::RecutCoordinator> recutCoordinator(int index, ps::ClientObserver& observer) {
  if (index != 0) return nullptr;
  return std::make_unique<ps::RecutCoordinator>(observer);
}

worker::TrainerOptions trainerOptions(const config::Config& settings, int index) {
  return worker::TrainerOptions{index,
                                settings.hiddenUnits,
                                settings.batchSize,
                                std::uint64_t(settings.trainSteps),
                                settings.seed,
                                int(settings.evalEverySteps),
                                settings.pushEncoding == net::WireEncoding::kFp32};
}

net::Listener::Options listenerOptions(const ps::Server& server, int port,
                                       net::TrafficCounters* traffic,
                                       net::SessionObserver* observer) {
  return net::Listener::Options{port, server.maxPayload(), net::helloFrameBytes(),
                                kHandshakeSeconds, traffic, observer};
}

std::unique_ptr<observe::HistoryRecorder> historyRecorder(const config::Config& settings,
                                                          Role role, int index,
                                                          const std::string& path,
                                                          std::uint64_t incarnation) {
  if (!settings.recordHistory) return nullptr;
  observe::HistoryHeader header;
  header.role = role;
  header.sync = config::synchronous(settings);
  header.index = std::uint32_t(index);
  header.incarnation = incarnation != 0 ? incarnation : drawIncarnation();
  header.runId = config::runFingerprint(settings);
  header.trainSteps = std::uint64_t(settings.trainSteps);
  header.parameterCount = model::Layout::mnist(settings.hiddenUnits).parameterCount();
  header.startedAt = std::uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
  return std::make_unique<observe::HistoryRecorder>(path, header);
}

}  // namespace pstrain::app
