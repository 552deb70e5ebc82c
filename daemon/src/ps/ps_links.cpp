#include "pstrain/ps/ps_links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/net/limits.hpp"
#include "pstrain/net/retry.hpp"

namespace pstrain::ps {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::uint32_t frameLimit(size_t parameters, bool sliceStates) {
  using net::MessageType;
  return sliceStates ? net::maxFrameBytes({MessageType::kParams, MessageType::kSliceState},
                                          parameters)
                     : net::maxFrameBytes({MessageType::kParams}, parameters);
}

bool sameSlice(const net::Welcome& a, const net::Welcome& b) {
  return a.generation == b.generation && a.psCount == b.psCount && a.offset == b.offset &&
         a.count == b.count;
}

}  // namespace

void giveCopy(PsLink& link, std::uint64_t step, const float* params) {
  link.channel->send(net::MessageType::kShardCopy, net::encode(net::ShardCopy{step}),
                     params + link.shard.offset, link.shard.count);
}

PsLinks::PsLinks(ClientOptions options, net::Dialer dial, ClientObserver& observer,
                 bool sliceStates)
    : options_(std::move(options)),
      dial_(std::move(dial)),
      observer_(observer),
      maxPayload_(frameLimit(options_.layout.parameterCount(), sliceStates)) {}

PsLink PsLinks::handshake(const net::Endpoint& endpoint, std::uint64_t knownStep) {
  const auto parameters = options_.layout.parameterCount();
  auto channel = dial_(endpoint, maxPayload_);
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
  PsLink made;
  made.endpoint = endpoint;
  made.channel = std::move(channel);
  made.shard = welcome;
  made.globalStep = welcome.globalStep;
  return made;
}

std::optional<PsLink> PsLinks::openWatched(const net::Endpoint& endpoint, double timeoutSeconds,
                                           const std::vector<net::Endpoint>* watched,
                                           const Then& then, std::uint64_t knownStep) {
  std::optional<PsLink> link;
  net::retryUntil(endpoint, after(timeoutSeconds), [&] {
    // Settings that no longer name a ps watched end the wait for it: nothing is made.
    if (watched && options_.currentPs && currentPs() != *watched) return;
    auto made = handshake(endpoint, knownStep);
    if (then) then(made);
    link = std::move(made);
  }, [&](int attempt, const std::string& failure) {
    observer_.waiting(endpoint, attempt, failure);
  });
  return link;
}

PsLink PsLinks::open(const net::Endpoint& endpoint, double timeoutSeconds) {
  return std::move(*openWatched(endpoint, timeoutSeconds, nullptr));  // unwatched: made or thrown
}

PsLinks::CutFound PsLinks::openCut(const std::vector<net::Endpoint>& endpoints) {
  std::vector<PsLink> links;
  for (const auto& endpoint : endpoints) {
    auto link = openWatched(endpoint, options_.peerTimeoutSeconds, &endpoints);
    if (!link) return CutFound::kSettingsChanged;
    links.push_back(std::move(*link));
  }
  const auto& first = links.front().shard;
  // A ps out of the cut serves no parameters (count 0). A cut older than the one this worker
  // served is not the run's: a ps restarted without its checkpoint serves the configured cut,
  // from step 0, and worker 0 re-cuts it from its copy.
  const bool oneCut = first.generation >= generation_ &&
                      std::all_of(links.begin(), links.end(), [&](const PsLink& link) {
                        return link.shard.generation == first.generation &&
                               link.shard.psCount == links.size() && link.shard.count > 0;
                      });
  if (!oneCut) return CutFound::kDifferentCuts;
  size_t covered = 0;
  for (const auto& link : links) {
    // The shards tile the parameter vector in ps order; a name that led to another ps of the
    // cut (a stale DNS answer, a reused pod address) sorts itself out as the records catch up.
    if (link.shard.offset != covered) return CutFound::kUntiled;
    covered += link.shard.count;
  }
  if (covered != options_.layout.parameterCount()) return CutFound::kUntiled;
  links_ = std::move(links);
  generation_ = first.generation;
  served_ = endpoints;
  return CutFound::kOneCut;
}

void PsLinks::connectCut(const Recut& recut) {
  const auto deadline = after(options_.peerTimeoutSeconds);
  std::chrono::milliseconds pause{50};
  for (int attempt = 1;; ++attempt) {
    const auto endpoints = currentPs();
    const auto found = openCut(endpoints);
    if (found == CutFound::kOneCut) return;
    if (found == CutFound::kSettingsChanged) continue;
    std::string why = found == CutFound::kUntiled
                          ? "the ps serve slices that do not tile the parameters yet"
                          : "the ps serve different cuts of the parameters: worker 0 re-cuts them";
    if (recut && found == CutFound::kDifferentCuts) {
      const auto result = recut(endpoints);
      if (result.complete) continue;
      if (Clock::now() >= deadline) throw UnreachableError(result.failure);
      why = "the ps serve different cuts of the parameters, and the re-cut did not complete: " +
            result.failure;
    }
    if (Clock::now() >= deadline) {
      throw UnreachableError(why + fmt::format(" (waited {:g} s)", options_.peerTimeoutSeconds));
    }
    if (attempt == 1 || attempt % 10 == 0) observer_.waiting(endpoints.front(), attempt, why);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
}

void PsLinks::rejoin(const Recut& recut) {
  copyStep_ = copyStep();
  links_.clear();
  connectCut(recut);
  for (const auto& link : links_) observer_.reconnected(link.endpoint, link.shard, link.globalStep);
}

bool PsLinks::reconnect(PsLink& link, float* params, const std::vector<net::Endpoint>& known,
                        const Then& then) {
  const auto step = link.globalStep;
  const auto shard = link.shard;
  const auto restore = [&](PsLink& made) {
    // Serving another cut (a re-cut meanwhile, or the configured one where it lost its
    // checkpoint after a re-cut): its parameters are not of our slices, and our copy stays as of
    // `step` for the client to rejoin the cut with, worker 0 re-cutting it if need be.
    if (made.shard.generation != shard.generation) {
      made.globalStep = step;
      return;
    }
    // Behind the step we knew it at, serving the same slice: it lost its checkpoint, or
    // restored one older than its last (a kill between checkpoints, a stale copy put back). Our
    // copy of its shard is its parameters as of the last answer we had (or of one cut short,
    // read partly); the ps adopts a copy later than its own step.
    if (made.globalStep < step && sameSlice(made.shard, shard)) giveCopy(made, step, params);
    then(made);  // it may have gone back to its last checkpoint: its parameters replace ours
  };
  auto opened = openWatched(link.endpoint, options_.peerTimeoutSeconds, &known, restore, step);
  if (!opened) return false;
  link = std::move(*opened);
  return true;
}

PsLinks::Reconnected PsLinks::reconnectLost(float* params, const Then& then) {
  std::vector<PsLink*> lost;
  for (auto& link : links_) {
    if (link.failure.empty()) continue;
    observer_.lost(link.endpoint, link.failure);
    lost.push_back(&link);
  }
  // All at once, each into its own slice of `params`: a ps that stays away holds up none of
  // the others.
  const auto known = endpoints();
  std::vector<char> made(lost.size());  // not vector<bool>: each thread writes its own element
  std::vector<std::exception_ptr> errors(lost.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < lost.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        made[i] = reconnect(*lost[i], params, known, then);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  // A lost ps left the settings (scaled away): the cut follows them.
  if (std::find(made.begin(), made.end(), false) != made.end()) {
    return Reconnected::kSettingsChanged;
  }
  for (const auto* link : lost) {
    observer_.reconnected(link->endpoint, link->shard, link->globalStep);
  }
  return Reconnected::kAll;
}

std::vector<PsLink> PsLinks::release() {
  copyStep_ = copyStep();  // the copy stays as of these links' answers
  std::vector<PsLink> links;
  links.swap(links_);
  return links;
}

std::vector<net::Endpoint> PsLinks::endpoints() const {
  std::vector<net::Endpoint> endpoints;
  for (const auto& link : links_) endpoints.push_back(link.endpoint);
  return endpoints;
}

std::vector<net::Endpoint> PsLinks::currentPs() const {
  return options_.currentPs ? options_.currentPs() : options_.ps;
}

std::uint64_t PsLinks::copyStep() const {
  if (links_.empty()) return copyStep_;
  std::uint64_t lowest = UINT64_MAX;
  for (const auto& link : links_) lowest = std::min(lowest, link.globalStep);
  return lowest;
}

}  // namespace pstrain::ps
