#include "pstrain/ps/client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/incarnation.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/net/limits.hpp"
#include "pstrain/net/retry.hpp"
#include "pstrain/ps/cut_assembly.hpp"

namespace pstrain::ps {

Client::Client(ClientOptions options, net::Dialer dial, ClientObserver& observer)
    : options_(std::move(options)),
      dial_(std::move(dial)),
      observer_(observer),
      incarnation_(drawIncarnation()),
      unsent_(options_.pushEncoding == net::WireEncoding::kFp32 ? 0
                                                                : options_.layout.parameterCount()) {}

namespace {

// The ps the settings name changed while a ps was waited for.
struct SettingsChanged : std::exception {
  const char* what() const noexcept override { return "the settings name other ps now"; }
};

bool sameSlice(const net::Welcome& a, const net::Welcome& b) {
  return a.generation == b.generation && a.psCount == b.psCount && a.offset == b.offset &&
         a.count == b.count;
}

// How long worker 0 tries to reach a ps that leaves the cut, for its slice and optimizer state:
// a pod scaled away may be gone already; its parameters are in worker 0's copy.
constexpr double kLeavingPsSeconds = 5;

}  // namespace

Client::Link Client::open(const net::Endpoint& endpoint, double timeoutSeconds,
                          const std::function<void(Link&)>& then,
                          const std::vector<net::Endpoint>* watched, std::uint64_t knownStep) {
  const auto parameters = options_.layout.parameterCount();
  // Worker 0 receives the ps's slices with their optimizer state when it re-cuts them.
  using net::MessageType;
  const auto maxPayload =
      options_.worker == 0
          ? net::maxFrameBytes({MessageType::kParams, MessageType::kSliceState}, parameters)
          : net::maxFrameBytes({MessageType::kParams}, parameters);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeoutSeconds));
  Link link;
  net::retryUntil(endpoint, deadline, [&] {
    // A ps the settings no longer name may never come back: the cut is followed instead.
    if (watched && options_.currentPs && currentPs() != *watched) throw SettingsChanged();
    auto channel = dial_(endpoint, maxPayload);
    // The welcome may wait for the chief to arrive: as long as any peer may take to appear.
    channel->setReceiveTimeout(options_.peerTimeoutSeconds);
    auto welcome = net::introduce(
        *channel,
        net::Hello{Role::kWorker, options_.worker, parameters, options_.runId, knownStep, {},
                   options_.pushEncoding, options_.pullEncoding},
        options_.authKey);
    if (welcome.offset + welcome.count > parameters) {
      throw ProtocolError("ps " + endpoint.toString() + " serves parameters beyond the model");
    }
    channel->setReceiveTimeout(options_.idleTimeoutSeconds);
    Link made;
    made.endpoint = endpoint;
    made.channel = std::move(channel);
    made.shard = welcome;
    made.globalStep = welcome.globalStep;
    if (then) then(made);
    link = std::move(made);
  }, [&](int attempt, const std::string& failure) {
    observer_.waiting(endpoint, attempt, failure);
  });
  return link;
}

std::optional<std::vector<Client::Link>> Client::openCut(
    const std::vector<net::Endpoint>& endpoints, bool& oneCut) {
  std::vector<Link> links;
  for (const auto& endpoint : endpoints) {
    links.push_back(open(endpoint, options_.peerTimeoutSeconds, {}, &endpoints));
  }
  const auto& first = links.front().shard;
  // A ps out of the cut serves no parameters (count 0). A cut older than the one this worker
  // served is not the run's: a ps restarted without its checkpoint serves the configured cut,
  // from step 0, and worker 0 re-cuts it from its copy.
  oneCut = first.generation >= generation_ &&
           std::all_of(links.begin(), links.end(), [&](const Link& link) {
             return link.shard.generation == first.generation &&
                    link.shard.psCount == links.size() && link.shard.count > 0;
           });
  size_t covered = 0;
  for (const auto& link : links) {
    // The shards tile the parameter vector in ps order; a name that led to another ps of the
    // cut (a stale DNS answer, a reused pod address) sorts itself out as the records catch up.
    if (link.shard.offset != covered) return std::nullopt;
    covered += link.shard.count;
  }
  if (!oneCut || covered != options_.layout.parameterCount()) return std::nullopt;
  return links;
}

void Client::connectCut(float* params) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options_.peerTimeoutSeconds));
  std::chrono::milliseconds pause{50};
  for (int attempt = 1;; ++attempt) {
    const auto endpoints = currentPs();
    bool oneCut = false;
    std::optional<std::vector<Link>> links;
    try {
      links = openCut(endpoints, oneCut);
    } catch (const SettingsChanged&) {
      continue;
    }
    if (links) {
      links_ = std::move(*links);
      generation_ = links_.front().shard.generation;
      served_ = endpoints;
      return;
    }
    if (options_.worker == 0 && !oneCut) {
      try {
        recut(endpoints, params);
        continue;
      } catch (const UnreachableError&) {
        if (std::chrono::steady_clock::now() >= deadline) throw;
      }
    }
    const std::string why = oneCut ? "the ps serve slices that do not tile the parameters yet"
                                   : "the ps serve different cuts of the parameters: worker 0 "
                                     "re-cuts them";
    if (std::chrono::steady_clock::now() >= deadline) {
      throw UnreachableError(why + fmt::format(" (waited {:g} s)", options_.peerTimeoutSeconds));
    }
    if (attempt == 1 || attempt % 10 == 0) observer_.waiting(endpoints.front(), attempt, why);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
}

std::vector<net::Endpoint> Client::currentPs() const {
  return options_.currentPs ? options_.currentPs() : options_.ps;
}

std::vector<net::Endpoint> Client::endpoints() const {
  std::vector<net::Endpoint> endpoints;
  for (const auto& link : links_) endpoints.push_back(link.endpoint);
  return endpoints;
}

void Client::recut(const std::vector<net::Endpoint>& target, float* params) {
  drain(params);
  // Our copy is of the last answers: as of the lowest step they said.
  const auto copyStep = this->copyStep();
  // Every ps of the cut served now and of the target gives its slice.
  std::vector<Link> frozen;
  std::vector<bool> inTarget;
  std::string unreached;
  auto take = [&](Link link, bool targeted) {
    frozen.push_back(std::move(link));
    inTarget.push_back(targeted);
  };
  auto targeted = [&](const net::Endpoint& endpoint) {
    return std::find(target.begin(), target.end(), endpoint) != target.end();
  };
  auto taken = [&](const net::Endpoint& endpoint) {
    return std::any_of(frozen.begin(), frozen.end(),
                       [&](const Link& link) { return link.endpoint == endpoint; });
  };
  // Lost or not connected now, and leaving the cut: a pod scaled away may be gone already.
  std::vector<net::Endpoint> leaving;
  auto leaves = [&](const net::Endpoint& endpoint) {
    if (!targeted(endpoint) && !taken(endpoint) &&
        std::find(leaving.begin(), leaving.end(), endpoint) == leaving.end()) {
      leaving.push_back(endpoint);
    }
  };
  for (auto& link : links_) {
    if (link.failure.empty() && !link.recut) {
      take(std::move(link), targeted(link.endpoint));
    } else {
      leaves(link.endpoint);
    }
  }
  // No link holds a ps of the cut served last where this re-cut follows another one at once
  // (the settings changed again meanwhile) or a connection that found the ps serving different
  // cuts: those leaving give their slices and optimizer state all the same.
  for (const auto& endpoint : served_) leaves(endpoint);
  for (const auto& endpoint : leaving) {
    try {
      take(open(endpoint, kLeavingPsSeconds), false);
    } catch (const UnreachableError&) {
      unreached += (unreached.empty() ? "" : ", ") + endpoint.toString();
    }
  }
  links_.clear();
  for (const auto& endpoint : target) {
    if (!taken(endpoint)) take(open(endpoint, options_.peerTimeoutSeconds), true);
  }
  std::uint64_t generation = 0;
  for (const auto& link : frozen) generation = std::max(generation, link.shard.generation);
  generation = std::max(generation, generation_) + 1;
  CutAssembly assembly(params, options_.layout.parameterCount(), generation_, copyStep);
  for (size_t i = 0; i < frozen.size(); ++i) {
    auto& link = frozen[i];
    try {
      link.channel->send(net::MessageType::kCutFreeze, net::encode(net::CutFreeze{generation}));
      const auto& frame = link.channel->receive();
      if (frame.type != net::MessageType::kSliceState) {
        throw ProtocolError("expected slice-state but received " + net::messageName(frame.type));
      }
      const auto state = net::decodeSliceState(frame.fields, options_.layout.parameterCount());
      std::vector<float> values(state.count * (1 + state.moments));
      link.channel->receiveValues(values.data(), values.size());
      assembly.add(state, values);
    } catch (const UnreachableError& e) {
      if (inTarget[i]) throw;  // no cut without it: the frozen ps thaw, and it is tried again
      unreached += (unreached.empty() ? "" : ", ") + link.endpoint.toString();
    }
  }
  const int toPs = int(target.size());
  for (size_t i = 0; i < frozen.size(); ++i) {
    auto& link = frozen[i];
    const auto index = std::find(target.begin(), target.end(), link.endpoint) - target.begin();
    std::vector<float> values;
    auto state = inTarget[i]
                     ? assembly.slice(generation, toPs, int(index),
                                      shardRange(options_.layout.parameterCount(), toPs,
                                                 int(index)),
                                      values)
                     : assembly.slice(generation, toPs, 0, {0, 0}, values);
    try {
      link.channel->send(net::MessageType::kSliceState, net::encode(state), values.data(),
                         values.size());
      link.channel->receiveExpected(net::MessageType::kStatusReply);
    } catch (const UnreachableError&) {
      if (inTarget[i]) throw;
    }
  }
  served_ = target;
  observer_.recut(generation, assembly.fromPs(), toPs, assembly.globalStep(), assembly.movedState(),
                  assembly.lostState(), unreached);
}

void Client::followSettings(float* params) {
  if (options_.worker != 0 || !options_.currentPs) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < nextSettingsRead_) return;
  nextSettingsRead_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(options_.settingsEverySeconds));
  const auto target = currentPs();
  if (target == endpoints()) return;
  recutAndRejoin(target, params);
}

void Client::recutAndRejoin(const std::vector<net::Endpoint>& target, float* params) {
  if (options_.worker == 0) {
    try {
      recut(target, params);
    } catch (const UnreachableError& e) {
      // A ps went away during it: some may serve the new cut and some the old, which connecting
      // again finds and re-cuts.
      observer_.recutIncomplete(e.what());
    }
  }
  rejoin(params);
}

std::uint64_t Client::copyStep() const {
  if (links_.empty()) return copyStep_;
  std::uint64_t lowest = UINT64_MAX;
  for (const auto& link : links_) lowest = std::min(lowest, link.globalStep);
  return lowest;
}

void Client::rejoin(float* params) {
  copyStep_ = copyStep();
  links_.clear();
  connectCut(params);
  for (const auto& link : links_) observer_.reconnected(link.endpoint, link.shard, link.globalStep);
  for (auto& link : links_) {
    link.channel->send(net::MessageType::kPull);
    Exchange ignored;
    receiveParams(link, params, ignored);
  }
}

void Client::connect() {
  std::vector<float> none(options_.layout.parameterCount());
  connectCut(none.data());
  for (const auto& link : links_) observer_.connected(link.endpoint, link.shard);
  awaitRecoveredShards();
}

void Client::awaitRecoveredShards() {
  std::uint64_t furthest = 0;
  for (const auto& link : links_) furthest = std::max(furthest, link.globalStep);
  // A new run, or one a step in: in sync mode the ps are at most a step apart, and one at step 0
  // beside one at step 1 may be holding that step at its barrier for this worker's push.
  if (furthest <= 1) return;
  std::vector<float> scratch(options_.layout.parameterCount());
  const auto deadline = std::chrono::steady_clock::now() + kShardRecoveryWait;
  for (auto& link : links_) {
    // At first at once: at a run's start a ps may only be a push behind the others.
    std::chrono::milliseconds pause{0};
    for (int attempt = 1; link.globalStep == 0; ++attempt) {
      if (std::chrono::steady_clock::now() >= deadline) return;  // nobody has a copy: train on
      if (attempt == 2 || attempt % 10 == 0) {
        observer_.waiting(link.endpoint, attempt,
                          "it is at global step 0 while the run is at " +
                              std::to_string(furthest) + ": waiting for a worker's copy of its shard");
      }
      std::this_thread::sleep_for(pause);
      pause = std::clamp(pause * 2, kShardRecoveryPoll / 16, kShardRecoveryPoll);
      try {
        link.channel->send(net::MessageType::kPull);
        Exchange ignored;
        receiveParams(link, scratch.data(), ignored);
      } catch (const UnreachableError& e) {
        link.failure = e.what();  // gone again: the first exchange reconnects it
        break;
      }
    }
  }
}

void Client::reconnect(Link& link, float* params, const std::vector<net::Endpoint>& known) {
  const auto step = link.globalStep;
  const auto endpoint = link.endpoint;
  // The pull belongs to the attempt: a ps that goes away again before it has answered is
  // waited for once more, within the same deadline.
  const auto shard = link.shard;
  link = open(endpoint, options_.peerTimeoutSeconds, [&](Link& made) {
    // Serving another cut (a re-cut meanwhile, or the configured one where it lost its
    // checkpoint after a re-cut): its parameters are not of our slices, and our copy stays as of
    // `step` for the client to rejoin the cut with, worker 0 re-cutting it if need be.
    if (made.shard.generation != shard.generation) {
      made.globalStep = step;
      return;
    }
    // Back at step 0 where we knew it further on, serving the same slice: it lost its
    // checkpoint. Our copy of its shard is its parameters as of the last answer we had (or of
    // one cut short, read partly); the ps adopts the first copy it is given, if it has applied
    // nothing yet.
    if (made.globalStep == 0 && step > 0 && sameSlice(made.shard, shard)) {
      made.channel->send(net::MessageType::kShardCopy, net::encode(net::ShardCopy{step}),
                         params + made.shard.offset, made.shard.count);
    }
    // It may have gone back to its last checkpoint: its parameters replace ours.
    made.channel->send(net::MessageType::kPull);
    Exchange ignored;
    receiveParams(made, params, ignored);
  }, &known, step);
}

void Client::reconnectLost(float* params) {
  std::vector<Link*> lost;
  for (auto& link : links_) {
    if (link.failure.empty()) continue;
    observer_.lost(link.endpoint, link.failure);
    lost.push_back(&link);
  }
  // All at once, each into its own slice of `params`: a ps that stays away holds up none of
  // the others.
  const auto known = endpoints();
  std::vector<std::exception_ptr> errors(lost.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < lost.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        reconnect(*lost[i], params, known);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  bool settingsChanged = false;
  for (const auto& error : errors) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const SettingsChanged&) {
      settingsChanged = true;
    }
  }
  if (settingsChanged) {  // the lost ps left the settings (scaled away): the cut follows them
    recutAndRejoin(currentPs(), params);
    return;
  }
  for (const auto* link : lost) observer_.reconnected(link->endpoint, link->shard, link->globalStep);
}

void Client::receiveParams(Link& link, float* params, Exchange& exchange) {
  const auto& frame = link.channel->receive();
  if (frame.type == net::MessageType::kRecut) {
    net::decodeRecut(frame.fields);
    link.recut = true;  // and the ps closes the channel
    return;
  }
  if (frame.type != net::MessageType::kParams) {
    throw ProtocolError("expected params but received " + net::messageName(frame.type));
  }
  auto answer = net::decodeParams(frame.fields);
  float* slice = params + link.shard.offset;
  const auto count = size_t(link.shard.count);
  if (answer.encoding == net::WireEncoding::kFp32) {
    link.channel->receiveValues(slice, count);
    if (options_.pullEncoding != net::WireEncoding::kFp32) link.copy.assign(slice, slice + count);
  } else {
    if (answer.encoding != options_.pullEncoding || link.copy.size() != count) {
      throw ProtocolError("ps " + link.endpoint.toString() + " answered a " +
                          net::encodingName(answer.encoding) + " change to parameters " +
                          (link.copy.size() != count ? "it never sent this worker"
                                                     : "this worker pulls in " +
                                                           net::encodingName(options_.pullEncoding)));
    }
    link.answerWords.resize(net::encodedWords(answer.encoding, count));
    // The channel receives 32-bit words; they are floats only in fp32.
    link.channel->receiveValues(reinterpret_cast<float*>(link.answerWords.data()),
                                link.answerWords.size());
    net::decodeValues(answer.encoding, link.answerWords.data(), count, link.copy.data(), true);
    std::copy(link.copy.begin(), link.copy.end(), slice);
  }
  link.globalStep = answer.globalStep;
  link.done = answer.done;
  link.held = answer.held;
  link.applied = answer.applied;
  // ps 0 (whose shard starts the vector) divides the training set, so all workers hear one count.
  if (link.shard.offset == 0) division_ = {answer.rank, answer.workers};
  exchange.held = exchange.held || answer.held;
  exchange.applied = exchange.applied || answer.applied;
  exchange.serviceSeconds = std::max(exchange.serviceSeconds, answer.serviceMicros * 1e-6);
}

void Client::postPull() {
  for (auto& link : links_) {
    try {
      link.channel->send(net::MessageType::kPull);
      link.awaited.push_back(0);
    } catch (const UnreachableError& e) {
      link.failure = e.what();
    }
  }
}

void Client::postPush(net::Push push, const Gradient& gradient) {
  // Requests go out to every ps first, so the ps work and the transfers overlap.
  for (auto& link : links_) {
    if (link.done) continue;  // a finished ps applies nothing more
    try {
      if (!link.encoding || link.encoding->batch() != gradient.batch) {
        link.encoding.emplace(options_.layout, ShardRange{link.shard.offset, link.shard.count},
                              gradient.batch);
        link.values.resize(link.encoding->dense() ? 0 : link.encoding->valueCount());
      }
      const float* values = gradient.dense + link.shard.offset;
      size_t valueCount = link.encoding->valueCount();
      if (options_.pushEncoding != net::WireEncoding::kFp32) {
        values = encodePush(link, gradient, valueCount);
        push.encoding = options_.pushEncoding;
      } else if (!link.encoding->dense()) {
        link.encoding->encode(gradient, link.values.data());
        values = link.values.data();
      }
      push.lag = std::uint32_t(link.awaited.size());
      link.channel->send(net::MessageType::kPush, net::encode(push), values, valueCount);
      link.awaited.push_back(push.pushNumber);
    } catch (const UnreachableError& e) {
      link.failure = e.what();
    }
  }
}

const float* Client::encodePush(Link& link, const Gradient& gradient, size_t& words) {
  if (gradient.batch != 0) {
    throw ConfigError("gradient factors cannot be pushed " + net::encodingName(options_.pushEncoding));
  }
  const auto count = size_t(link.shard.count);
  link.pushWords.resize(net::encodedWords(options_.pushEncoding, count));
  net::encodeValues(options_.pushEncoding, unsent_.data() + link.shard.offset,
                    gradient.dense + link.shard.offset, count, link.pushWords.data());
  words = link.pushWords.size();
  // The channel sends 32-bit words; they are floats only in fp32.
  return reinterpret_cast<const float*>(link.pushWords.data());
}

int Client::inFlight() const {
  int most = 0;
  for (const auto& link : links_) most = std::max(most, int(link.awaited.size()));
  return most;
}

void Client::settle(float* params) {
  while (inFlight() > 0) receiveAnswers(params);
}

void Client::drain(float* params) {
  Exchange ignored;
  for (size_t i = 0; i < links_.size(); ++i) {
    auto& link = links_[i];
    for (; !link.awaited.empty() && link.failure.empty() && !link.recut; link.awaited.pop_front()) {
      try {
        receiveParams(link, params, ignored);
        if (!link.recut) {
          observer_.answered(int(i), link.shard.generation, link.awaited.front(), link.applied,
                             link.globalStep);
        }
      } catch (const UnreachableError& e) {
        link.failure = e.what();
      }
    }
    link.awaited.clear();
  }
}

Client::Exchange Client::receiveAnswers(float* params) {
  Exchange exchange;
  for (size_t i = 0; i < links_.size(); ++i) {
    auto& link = links_[i];
    if (link.awaited.empty()) continue;
    const auto pushNumber = link.awaited.front();
    link.awaited.pop_front();
    try {
      receiveParams(link, params, exchange);
      if (!link.recut) {
        observer_.answered(int(i), link.shard.generation, pushNumber, link.applied,
                           link.globalStep);
      }
    } catch (const UnreachableError& e) {
      link.failure = e.what();  // a ps that refuses or speaks nonsense is not cured by reconnecting
    }
  }
  const bool recut = std::any_of(links_.begin(), links_.end(), [&](const Link& link) {
    return link.recut;
  });
  if (!recut) reconnectLost(params);
  // Re-cut meanwhile (or while a lost ps was away): the parameters are all cut anew.
  if (recut || std::any_of(links_.begin(), links_.end(), [&](const Link& link) {
        return link.shard.generation != generation_;
      })) {
    rejoin(params);
  }
  exchange.globalStep = UINT64_MAX;
  for (const auto& link : links_) exchange.globalStep = std::min(exchange.globalStep, link.globalStep);
  return exchange;
}

Client::Exchange Client::collect(float* params) {
  auto exchange = receiveAnswers(params);
  // Answers still in flight bring fresher parameters than a pull sent behind them would.
  if (!exchange.held || inFlight() > 0) return exchange;
  for (auto& link : links_) {
    if (link.held || link.done) continue;
    try {
      link.channel->send(net::MessageType::kPull);
      link.awaited.push_back(0);
    } catch (const UnreachableError& e) {
      link.failure = e.what();
    }
  }
  const auto fresh = receiveAnswers(params);
  exchange.globalStep = fresh.globalStep;
  exchange.serviceSeconds = std::max(exchange.serviceSeconds, fresh.serviceSeconds);
  return exchange;
}

Client::Exchange Client::pull(float* params) {
  settle(params);
  postPull();
  return collect(params);
}

Client::Exchange Client::pushPull(const Gradient& gradient, float* params,
                                  std::uint64_t localStep, float loss) {
  followSettings(params);
  std::uint64_t basedOn = links_.empty() ? 0 : UINT64_MAX;
  for (const auto& link : links_) basedOn = std::min(basedOn, link.globalStep);
  ++pushes_;
  observer_.pushSent(generation_, pushes_, localStep, basedOn);
  postPush(net::Push{localStep, loss, std::uint32_t(gradient.batch), 0, incarnation_, pushes_},
           gradient);
  const bool failed = std::any_of(links_.begin(), links_.end(),
                                  [](const Link& link) { return !link.failure.empty(); });
  if (!failed && inFlight() < options_.pushesInFlight) return Exchange{false, 0, 0, false, false};
  return collect(params);  // which reconnects a ps the push did not reach
}

bool Client::done() const {
  return std::all_of(links_.begin(), links_.end(), [](const Link& link) { return link.done; });
}

void Client::finish(std::uint64_t localSteps) {
  if (inFlight() > 0) {
    std::vector<float> scratch(options_.layout.parameterCount());
    drain(scratch.data());
  }
  for (auto& link : links_) {
    try {
      link.channel->send(net::MessageType::kDone, net::encode(net::Done{localSteps}));
      link.channel->receiveExpected(net::MessageType::kStatusReply);
    } catch (const PeerError& e) {
      observer_.goodbyeFailed(link.endpoint, e.what());
    }
  }
  links_.clear();  // a finished worker holds no ps channel
}

}  // namespace pstrain::ps
