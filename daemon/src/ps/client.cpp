#include "pstrain/ps/client.hpp"

#include <algorithm>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/incarnation.hpp"

namespace pstrain::ps {

Client::Client(ClientOptions options, net::Dialer dial, ClientObserver& observer,
               std::unique_ptr<RecutCoordinator> coordinator)
    // Worker 0's links also receive the ps's slices with their optimizer state, to re-cut them.
    : links_(std::move(options), std::move(dial), observer, coordinator != nullptr),
      options_(links_.options()),
      observer_(observer),
      coordinator_(std::move(coordinator)),
      incarnation_(drawIncarnation()),
      unsent_(options_.pushEncoding == net::WireEncoding::kFp32
                  ? 0
                  : options_.layout.parameterCount()) {}

PsLinks::Recut Client::recutter(float* params) {
  if (!coordinator_) return {};  // worker 0 re-cuts; this client waits for its cut
  return [this, params](const std::vector<net::Endpoint>& target) { return recut(target, params); };
}

RecutResult Client::recut(const std::vector<net::Endpoint>& target, float* params) {
  if (params) drain(params);
  return coordinator_->recut(links_, target, params);
}

void Client::followSettings(float* params) {
  if (!coordinator_) return;
  if (auto target = coordinator_->changedSettings(links_)) recutAndRejoin(*target, params);
}

void Client::recutAndRejoin(const std::vector<net::Endpoint>& target, float* params) {
  if (coordinator_) {
    // A ps went away during it: some may serve the new cut and some the old, which connecting
    // again finds and re-cuts.
    const auto result = recut(target, params);
    if (!result.complete) observer_.recutIncomplete(result.failure);
  }
  rejoin(params);
}

void Client::rejoin(float* params) {
  links_.rejoin(recutter(params));
  if (coordinator_) coordinator_->remember(links_.served());
  for (auto& link : links_) pullNow(link, params);
}

void Client::connect() {
  links_.connectCut(recutter(nullptr));  // no copy yet: a re-cut takes every slice from the ps
  if (coordinator_) coordinator_->remember(links_.served());
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
                              std::to_string(furthest) +
                              ": waiting for a worker's copy of its shard");
      }
      std::this_thread::sleep_for(pause);
      pause = std::clamp(pause * 2, kShardRecoveryPoll / 16, kShardRecoveryPoll);
      try {
        pullNow(link, scratch.data());
      } catch (const UnreachableError& e) {
        link.failure = e.what();  // gone again: the first exchange reconnects it
        break;
      }
    }
  }
}

void Client::pullNow(PsLink& link, float* params) {
  link.channel->send(net::MessageType::kPull);
  Exchange ignored;
  receiveParams(link, params, ignored);
}

void Client::reconnectLost(float* params) {
  const auto reconnected =
      links_.reconnectLost(params, [&](PsLink& made) { pullNow(made, params); });
  // The lost ps left the settings (scaled away): the cut follows them.
  if (reconnected == PsLinks::Reconnected::kSettingsChanged) {
    recutAndRejoin(links_.currentPs(), params);
  }
}

void Client::receiveParams(PsLink& link, float* params, Exchange& exchange) {
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
  auto& copy = link.requests.copy;
  if (answer.encoding == net::WireEncoding::kFp32) {
    link.channel->receiveValues(slice, count);
    if (options_.pullEncoding != net::WireEncoding::kFp32) copy.assign(slice, slice + count);
  } else {
    if (answer.encoding != options_.pullEncoding || copy.size() != count) {
      throw ProtocolError("ps " + link.endpoint.toString() + " answered a " +
                          net::encodingName(answer.encoding) + " change to parameters " +
                          (copy.size() != count ? "it never sent this worker"
                                                : "this worker pulls in " +
                                                      net::encodingName(options_.pullEncoding)));
    }
    auto& words = link.requests.answerWords;
    words.resize(net::encodedWords(answer.encoding, count));
    // The channel receives 32-bit words; they are floats only in fp32.
    link.channel->receiveValues(reinterpret_cast<float*>(words.data()), words.size());
    net::decodeValues(answer.encoding, words.data(), count, copy.data(), true);
    std::copy(copy.begin(), copy.end(), slice);
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

void Client::postPull(PsLink& link) {
  try {
    link.channel->send(net::MessageType::kPull);
    link.requests.awaited.push_back(0);
  } catch (const UnreachableError& e) {
    link.failure = e.what();
  }
}

void Client::postPush(net::Push push, const Gradient& gradient) {
  // Requests go out to every ps first, so the ps work and the transfers overlap.
  for (auto& link : links_) {
    if (link.done) continue;  // a finished ps applies nothing more
    auto& requests = link.requests;
    try {
      if (!requests.encoding || requests.encoding->batch() != gradient.batch) {
        requests.encoding.emplace(options_.layout,
                                  ShardRange{link.shard.offset, link.shard.count}, gradient.batch);
        requests.values.resize(requests.encoding->dense() ? 0 : requests.encoding->valueCount());
      }
      const float* values = gradient.dense + link.shard.offset;
      size_t valueCount = requests.encoding->valueCount();
      if (options_.pushEncoding != net::WireEncoding::kFp32) {
        values = encodePush(link, gradient, valueCount);
        push.encoding = options_.pushEncoding;
      } else if (!requests.encoding->dense()) {
        requests.encoding->encode(gradient, requests.values.data());
        values = requests.values.data();
      }
      push.lag = std::uint32_t(requests.awaited.size());
      link.channel->send(net::MessageType::kPush, net::encode(push), values, valueCount);
      requests.awaited.push_back(push.pushNumber);
    } catch (const UnreachableError& e) {
      link.failure = e.what();
    }
  }
}

const float* Client::encodePush(PsLink& link, const Gradient& gradient, size_t& words) {
  if (gradient.batch != 0) {
    throw ConfigError("gradient factors cannot be pushed " +
                      net::encodingName(options_.pushEncoding));
  }
  const auto count = size_t(link.shard.count);
  auto& pushWords = link.requests.pushWords;
  pushWords.resize(net::encodedWords(options_.pushEncoding, count));
  net::encodeValues(options_.pushEncoding, unsent_.data() + link.shard.offset,
                    gradient.dense + link.shard.offset, count, pushWords.data());
  words = pushWords.size();
  // The channel sends 32-bit words; they are floats only in fp32.
  return reinterpret_cast<const float*>(pushWords.data());
}

int Client::inFlight() const {
  int most = 0;
  for (const auto& link : links_) most = std::max(most, int(link.requests.awaited.size()));
  return most;
}

void Client::settle(float* params) {
  while (inFlight() > 0) receiveAnswers(params);
}

void Client::receiveAnswer(size_t index, std::uint64_t pushNumber, float* params,
                           Exchange& exchange) {
  auto& link = links_[index];
  try {
    receiveParams(link, params, exchange);
    if (!link.recut) {
      observer_.answered(int(index), link.shard.generation, pushNumber, link.applied,
                         link.globalStep);
    }
  } catch (const UnreachableError& e) {
    link.failure = e.what();  // a ps that refuses or speaks nonsense is not cured by reconnecting
  }
}

void Client::drain(float* params) {
  Exchange ignored;
  for (size_t i = 0; i < links_.size(); ++i) {
    auto& link = links_[i];
    auto& awaited = link.requests.awaited;
    for (; !awaited.empty() && link.failure.empty() && !link.recut; awaited.pop_front()) {
      receiveAnswer(i, awaited.front(), params, ignored);
    }
    awaited.clear();
  }
}

Client::Exchange Client::receiveAnswers(float* params) {
  Exchange exchange;
  for (size_t i = 0; i < links_.size(); ++i) {
    auto& awaited = links_[i].requests.awaited;
    if (awaited.empty()) continue;
    const auto pushNumber = awaited.front();
    awaited.pop_front();
    receiveAnswer(i, pushNumber, params, exchange);
  }
  const bool recut = std::any_of(links_.begin(), links_.end(),
                                 [](const PsLink& link) { return link.recut; });
  if (!recut) reconnectLost(params);
  // Re-cut meanwhile (or while a lost ps was away): the parameters are all cut anew.
  if (recut || std::any_of(links_.begin(), links_.end(), [&](const PsLink& link) {
        return link.shard.generation != links_.generation();
      })) {
    rejoin(params);
  }
  exchange.globalStep = UINT64_MAX;
  for (const auto& link : links_) {
    exchange.globalStep = std::min(exchange.globalStep, link.globalStep);
  }
  return exchange;
}

Client::Exchange Client::collect(float* params) {
  auto exchange = receiveAnswers(params);
  // Answers still in flight bring fresher parameters than a pull sent behind them would.
  if (!exchange.held || inFlight() > 0) return exchange;
  for (auto& link : links_) {
    if (!link.held && !link.done) postPull(link);
  }
  const auto fresh = receiveAnswers(params);
  exchange.globalStep = fresh.globalStep;
  exchange.serviceSeconds = std::max(exchange.serviceSeconds, fresh.serviceSeconds);
  return exchange;
}

Client::Exchange Client::pull(float* params) {
  settle(params);
  for (auto& link : links_) postPull(link);
  return collect(params);
}

Client::Exchange Client::pushPull(const Gradient& gradient, float* params,
                                  std::uint64_t localStep, float loss) {
  followSettings(params);
  std::uint64_t basedOn = links_.empty() ? 0 : UINT64_MAX;
  for (const auto& link : links_) basedOn = std::min(basedOn, link.globalStep);
  ++pushes_;
  observer_.pushSent(links_.generation(), pushes_, localStep, basedOn);
  postPush(net::Push{localStep, loss, std::uint32_t(gradient.batch), 0, incarnation_, pushes_},
           gradient);
  const bool failed = std::any_of(links_.begin(), links_.end(),
                                  [](const PsLink& link) { return !link.failure.empty(); });
  if (!failed && inFlight() < options_.pushesInFlight) return Exchange{false, 0, 0, false, false};
  return collect(params);  // which reconnects a ps the push did not reach
}

bool Client::done() const {
  return std::all_of(links_.begin(), links_.end(), [](const PsLink& link) { return link.done; });
}

std::vector<net::Endpoint> Client::endpoints() const { return links_.endpoints(); }

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
  links_.close();  // a finished worker holds no ps channel
}

}  // namespace pstrain::ps
