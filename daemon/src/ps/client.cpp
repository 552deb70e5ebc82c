#include "pstrain/ps/client.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/net/retry.hpp"

namespace pstrain::ps {

Client::Client(ClientOptions options, net::Dialer dial, ClientObserver& observer)
    : options_(std::move(options)), dial_(std::move(dial)), observer_(observer) {}

Client::Link Client::open(const net::Endpoint& endpoint, size_t offset,
                          const std::function<void(Link&)>& then) {
  const auto maxPayload = std::uint32_t(net::fixedFieldsSize(net::MessageType::kParams) +
                                        options_.layout.parameterCount() * sizeof(float));
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options_.peerTimeoutSeconds));
  Link link;
  net::retryUntil(endpoint, deadline, [&] {
    auto channel = dial_(endpoint, maxPayload);
    // The welcome may wait for the chief to arrive: as long as any peer may take to appear.
    channel->setReceiveTimeout(options_.peerTimeoutSeconds);
    auto welcome = net::introduce(*channel,
                                  net::Hello{Role::kWorker,
                                             options_.worker,
                                             options_.layout.parameterCount(),
                                             options_.runId,
                                             std::uint32_t(options_.ps.size()),
                                             {}},
                                  options_.authKey);
    if (welcome.offset != offset) {
      // Same run, other shard: the name led to another ps, as a stale DNS answer or a reused
      // pod address can; it sorts itself out as the records catch up.
      throw UnreachableError("the ps there serves parameters from " +
                             std::to_string(welcome.offset) + ", not those from " +
                             std::to_string(offset));
    }
    if (welcome.offset + welcome.count > options_.layout.parameterCount()) {
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

void Client::connect() {
  size_t covered = 0;
  for (const auto& endpoint : options_.ps) {
    // The shards tile the parameter vector in ps order.
    links_.push_back(open(endpoint, covered));
    covered += links_.back().shard.count;
    observer_.connected(endpoint, links_.back().shard);
  }
  if (covered != options_.layout.parameterCount()) {
    throw ProtocolError("the ps together serve " + std::to_string(covered) + " of " +
                        std::to_string(options_.layout.parameterCount()) + " parameters");
  }
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
      link.channel->send(net::MessageType::kPull);
      Exchange ignored;
      receiveParams(link, scratch.data(), ignored);
    }
  }
}

void Client::reconnect(Link& link, float* params) {
  const auto known = link.globalStep;
  const auto endpoint = link.endpoint;
  // The pull belongs to the attempt: a ps that goes away again before it has answered is
  // waited for once more, within the same deadline.
  link = open(endpoint, link.shard.offset, [&](Link& made) {
    // Back at step 0 where we knew it further on: it lost its checkpoint. Our copy of its shard
    // is its parameters as of the last answer we had (or of one cut short, read partly); the ps
    // adopts the first copy it is given, if it has applied nothing yet.
    if (made.globalStep == 0 && known > 0) {
      made.channel->send(net::MessageType::kShardCopy, net::encode(net::ShardCopy{known}),
                         params + made.shard.offset, made.shard.count);
    }
    // It may have gone back to its last checkpoint: its parameters replace ours.
    made.channel->send(net::MessageType::kPull);
    Exchange ignored;
    receiveParams(made, params, ignored);
  });
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
  std::vector<std::exception_ptr> errors(lost.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < lost.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        reconnect(*lost[i], params);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  for (const auto* link : lost) observer_.reconnected(link->endpoint, link->shard, link->globalStep);
}

void Client::receiveParams(Link& link, float* params, Exchange& exchange) {
  const auto& frame = link.channel->receive();
  if (frame.type != net::MessageType::kParams) {
    throw ProtocolError("expected params but received " + net::messageName(frame.type));
  }
  auto answer = net::decodeParams(frame.fields);
  link.channel->receiveValues(params + link.shard.offset, link.shard.count);
  link.globalStep = answer.globalStep;
  link.done = answer.done;
  link.held = answer.held;
  // ps 0 (whose shard starts the vector) divides the training set, so all workers hear one count.
  if (link.shard.offset == 0) division_ = {answer.rank, answer.workers};
  exchange.held = exchange.held || answer.held;
  exchange.applied = exchange.applied || answer.applied;
  exchange.serviceSeconds = std::max(exchange.serviceSeconds, answer.serviceMicros * 1e-6);
}

void Client::post(net::MessageType type, const std::vector<std::uint8_t>& fields,
                  const Gradient* gradient) {
  // Requests go out to every ps first, so the ps work and the transfers overlap.
  for (auto& link : links_) {
    if (gradient && link.done) continue;  // a finished ps applies nothing more
    try {
      if (!gradient) {
        link.channel->send(type, fields);
      } else {
        if (!link.encoding || link.encoding->batch() != gradient->batch) {
          link.encoding.emplace(options_.layout, ShardRange{link.shard.offset, link.shard.count},
                                gradient->batch);
          link.values.resize(link.encoding->dense() ? 0 : link.encoding->valueCount());
        }
        const float* values = gradient->dense + link.shard.offset;
        if (!link.encoding->dense()) {
          link.encoding->encode(*gradient, link.values.data());
          values = link.values.data();
        }
        link.channel->send(type, fields, values, link.encoding->valueCount());
      }
      link.awaiting = true;
    } catch (const UnreachableError& e) {
      link.failure = e.what();
    }
  }
}

Client::Exchange Client::receiveAnswers(float* params) {
  Exchange exchange;
  for (auto& link : links_) {
    if (!link.awaiting) continue;
    link.awaiting = false;
    try {
      receiveParams(link, params, exchange);
    } catch (const UnreachableError& e) {
      link.failure = e.what();  // a ps that refuses or speaks nonsense is not cured by reconnecting
    }
  }
  reconnectLost(params);
  exchange.globalStep = UINT64_MAX;
  for (const auto& link : links_) exchange.globalStep = std::min(exchange.globalStep, link.globalStep);
  return exchange;
}

Client::Exchange Client::collect(float* params) {
  auto exchange = receiveAnswers(params);
  if (!exchange.held) return exchange;
  for (auto& link : links_) {
    if (link.held || link.done) continue;
    try {
      link.channel->send(net::MessageType::kPull);
      link.awaiting = true;
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
  post(net::MessageType::kPull, {}, nullptr);
  return collect(params);
}

Client::Exchange Client::pushPull(const Gradient& gradient, float* params,
                                  std::uint64_t localStep, float loss) {
  post(net::MessageType::kPush,
       net::encode(net::Push{localStep, loss, std::uint32_t(gradient.batch)}), &gradient);
  return collect(params);
}

bool Client::done() const {
  return std::all_of(links_.begin(), links_.end(), [](const Link& link) { return link.done; });
}

void Client::finish(std::uint64_t localSteps) {
  for (auto& link : links_) {
    try {
      link.channel->send(net::MessageType::kDone, net::encode(net::Done{localSteps}));
      link.channel->receiveExpected(net::MessageType::kStatusReply);
    } catch (const PeerError& e) {
      log::logger("worker")->info("Worker {}: could not say goodbye to ps {}: {}",
                                  options_.worker, link.endpoint.toString(), e.what());
    }
  }
  links_.clear();  // a finished worker holds no ps channel
}

}  // namespace pstrain::ps
