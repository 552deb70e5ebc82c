#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/net/channel.hpp"
#include "pstrain/net/dialer.hpp"
#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/message.hpp"
#include "pstrain/ps/client_observer.hpp"
#include "pstrain/ps/client_options.hpp"
#include "pstrain/ps/push_encoding.hpp"

namespace pstrain::ps {

// A channel to one ps of the cut, what its welcome said and what its latest answer said.
struct PsLink {
  // What the client keeps for the requests on this channel (Client); a new channel starts afresh.
  struct Requests {
    // Those out whose answers have not been read, oldest first: their push numbers (0: a pull).
    std::deque<std::uint64_t> awaited;
    std::optional<PushEncoding> encoding;  // for the shard and the latest push's batch
    AlignedVector<float> values;           // a push's values when they are not a dense slice
    AlignedVector<std::uint32_t> pushWords, answerWords;  // lossy encodings' (net::WireEncoding)
    // With a lossy pull encoding: the slice as this channel's answers built it, which the ps
    // tracks too (AnswerEncoder); the changes it sends are added to it. Empty until a whole
    // answer.
    AlignedVector<float> copy;
  };

  net::Endpoint endpoint;
  std::unique_ptr<net::Channel> channel;
  net::Welcome shard{};
  std::uint64_t globalStep = 0;
  bool done = false;
  bool held = false;      // its latest answer waited at the ps's StepGate
  bool recut = false;     // it answered that the ps were re-cut
  bool applied = false;   // its latest answer said the push was applied
  std::string failure;    // why the channel broke, until it is made again
  Requests requests;
};

// Gives the ps of `link` the worker's copy of its slice as of `step` (`params`: the whole
// parameter vector). A ps behind `step` (it lost its checkpoint, or restored an older one than
// the workers saw) adopts it (Shard::adopt).
void giveCopy(PsLink& link, std::uint64_t step, const float* params);

// What a re-cut of the ps came to: complete, or why not (a ps of the new cut could not be
// reached; the ps it froze thaw).
struct RecutResult {
  bool complete = true;
  std::string failure;
};

// A worker's links to the ps of one cut, in shard order, in the manner of ps-lite's Van: the
// dial, the handshake and its retries until the peer timeout, the links of a cut made together,
// and a lost link made again. What goes over them is the Client's; worker 0's re-cuts are the
// RecutCoordinator's, which connectCut() is handed.
class PsLinks {
 public:
  // `sliceStates`: the links also receive the ps's slices with their optimizer state, as a
  // re-cut's coordinator does; they make the largest frames.
  PsLinks(ClientOptions options, net::Dialer dial, ClientObserver& observer, bool sliceStates);
  PsLinks(const PsLinks&) = delete;
  PsLinks& operator=(const PsLinks&) = delete;

  // What a link just made must do first (a shard copy, a pull) before it counts as made: a ps
  // that goes away meanwhile is waited for once more, within the same deadline.
  using Then = std::function<void(PsLink&)>;
  // Re-cuts the ps of `target`, those the settings name (RecutCoordinator::recut).
  using Recut = std::function<RecutResult(const std::vector<net::Endpoint>& target)>;
  enum class Reconnected { kAll, kSettingsChanged };

  // Connects to the ps of one cut, those the settings say now, until the peer timeout. Where
  // they serve different cuts or fewer or more than the settings say, `recut`, if given,
  // re-cuts them; without it, the client waits for worker 0 to.
  void connectCut(const Recut& recut);
  // Closes every link and connects to the cut served now (connectCut); each ps is reported
  // reconnected.
  void rejoin(const Recut& recut);
  // Opens every failed link again, all at once, each `then` on its new channel, `params` the
  // worker's copy (a ps that lost its checkpoint takes its slice of it). kSettingsChanged: a
  // lost ps left the settings (scaled away) and was given up; the cut is to follow them.
  Reconnected reconnectLost(float* params, const Then& then);
  // A link to `endpoint`, retried until `timeoutSeconds` have passed (UnreachableError).
  PsLink open(const net::Endpoint& endpoint, double timeoutSeconds);
  // Hands the links over (a re-cut freezes their ps), leaving none.
  std::vector<PsLink> release();
  // Closes every link.
  void close() { links_.clear(); }

  // The links, in shard order.
  std::vector<PsLink>::iterator begin() { return links_.begin(); }
  std::vector<PsLink>::iterator end() { return links_.end(); }
  std::vector<PsLink>::const_iterator begin() const { return links_.begin(); }
  std::vector<PsLink>::const_iterator end() const { return links_.end(); }
  size_t size() const { return links_.size(); }
  bool empty() const { return links_.empty(); }
  PsLink& operator[](size_t index) { return links_[index]; }

  const ClientOptions& options() const { return options_; }
  // The generation of the cut the links serve.
  std::uint64_t generation() const { return generation_; }
  // The ps of the cut served last, links or none; a re-cut serves `target` from now on.
  const std::vector<net::Endpoint>& served() const { return served_; }
  void serve(std::vector<net::Endpoint> target) { served_ = std::move(target); }
  // The ps connected now, in shard order, and those the settings name now.
  std::vector<net::Endpoint> endpoints() const;
  std::vector<net::Endpoint> currentPs() const;
  // The global step of the worker's copy of the parameters: the lowest its ps last said (as of
  // the links it had before a rejoin, while it has none; 0 before any).
  std::uint64_t copyStep() const;

 private:
  enum class CutFound { kOneCut, kDifferentCuts, kUntiled, kSettingsChanged };

  // A link to `endpoint` once `then` has succeeded on it too, retried until `timeoutSeconds`
  // have passed; nothing once the settings name other ps than `watched`, if given (the ps
  // watched may never come back). `knownStep`: the step the worker last had from that ps, which
  // its hello says.
  std::optional<PsLink> openWatched(const net::Endpoint& endpoint, double timeoutSeconds,
                                    const std::vector<net::Endpoint>* watched,
                                    const Then& then = {}, std::uint64_t knownStep = 0);
  // A channel to `endpoint` and its handshake: one attempt.
  PsLink handshake(const net::Endpoint& endpoint, std::uint64_t knownStep);
  // The links to every ps of `endpoints`, kept if they serve one cut of the parameters together
  // (the same generation, as many ps, slices that tile the parameters in order).
  CutFound openCut(const std::vector<net::Endpoint>& endpoints);
  // Opens `link` again (openWatched, `known` the ps connected when it failed); false where
  // the settings gave its ps up meanwhile.
  bool reconnect(PsLink& link, float* params, const std::vector<net::Endpoint>& known,
                 const Then& then);

  const ClientOptions options_;
  const net::Dialer dial_;
  ClientObserver& observer_;
  const std::uint32_t maxPayload_;
  std::vector<PsLink> links_;
  std::uint64_t generation_ = 0;
  std::vector<net::Endpoint> served_;
  std::uint64_t copyStep_ = 0;  // copyStep() while there are no links
};

}  // namespace pstrain::ps
