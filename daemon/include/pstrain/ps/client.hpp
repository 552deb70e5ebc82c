#pragma once

#include <chrono>
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
#include "pstrain/ps/membership.hpp"
#include "pstrain/ps/push_encoding.hpp"

namespace pstrain::ps {

struct ClientOptions {
  std::uint32_t worker = 0;
  std::uint64_t runId = 0;
  model::Layout layout = model::Layout::mnist({});  // the run's model
  std::string authKey;
  std::vector<net::Endpoint> ps;  // in shard order
  double peerTimeoutSeconds = 300;    // for a ps to appear, or to come back
  double idleTimeoutSeconds = 0;      // for an answer; 0: wait for ever
  // The ps as the settings say now, read again (empty: `ps` for ever). Worker 0 re-cuts the
  // parameters over them when they change; every worker connects to them after a re-cut.
  std::function<std::vector<net::Endpoint>()> currentPs;
  double settingsEverySeconds = 1;  // how often worker 0 reads them again while it trains
  // Pushes sent before the oldest one's answer is read (Li et al.'s bounded delay): 1, each
  // push waits for its answer; more overlap the round trip with the next gradients' compute,
  // each computed on parameters that many answers old. At most net::kMaxPushesInFlight.
  int pushesInFlight = 1;
  // How pushes and answers go on the wire (net::WireEncoding); the ps must be set the same.
  net::WireEncoding pushEncoding = net::WireEncoding::kFp32;
  net::WireEncoding pullEncoding = net::WireEncoding::kFp32;
};

// A worker's side of the ps: a channel to every ps, the handshake, push and pull to all of them
// at once, and reconnection. The training loop sees parameters and gradients, never a channel.
class Client {
 public:
  // What an exchange with every ps gave.
  struct Exchange {
    bool applied = false;           // some ps applied the push
    std::uint64_t globalStep = 0;   // the lowest global step of the ps
    double serviceSeconds = 0;      // the longest any ps held the request
    bool held = false;              // ps 0 held its answer (StepGate): the others were pulled again
    bool answered = true;           // false: the push is in flight, no answer was read
  };

  Client(ClientOptions options, net::Dialer dial, ClientObserver& observer);

  // Connects to every ps, retrying each with backoff until the peer timeout; throws
  // UnreachableError when a ps never appeared, RefusedError or ProtocolError at once when a ps
  // refuses this worker or cannot prove the key.
  void connect();

  // Every ps's slice of the parameters into `params`.
  Exchange pull(float* params);
  // Sends each ps its part of `gradient` (PushEncoding) and, once pushesInFlight pushes are
  // out, puts the slices the ps answer the oldest with, the parameters after its step, into
  // `params`. A ps that went away is reconnected and pulled afresh: its part of the pushes in
  // flight is lost, as with a TensorFlow ps that restarts.
  Exchange pushPull(const Gradient& gradient, float* params, std::uint64_t localStep, float loss);
  // Pushes sent whose answers have not been read.
  int inFlight() const;

  // Every ps has reached the last step.
  bool done() const;

  // Drawn once per client: with the push number, what tells each of its pushes apart in a run.
  std::uint64_t incarnation() const { return incarnation_; }

  // The ps connected now, in shard order.
  std::vector<net::Endpoint> endpoints() const;

  // This worker's part of the training set as ps 0 last told it: its rank among the workers
  // connected now, and their number ({0, 1} until told).
  Membership::Division division() const { return division_; }

  // Tells every ps this worker has finished after `localSteps`, and closes the channels.
  void finish(std::uint64_t localSteps);

 private:
  struct Link {
    net::Endpoint endpoint;
    std::unique_ptr<net::Channel> channel;
    net::Welcome shard{};
    std::uint64_t globalStep = 0;
    bool done = false;
    // The requests out whose answers have not been read, oldest first: their push numbers (0: a
    // pull).
    std::deque<std::uint64_t> awaited;
    bool held = false;      // its latest answer waited at the ps's StepGate
    bool recut = false;     // it answered that the ps were re-cut
    bool applied = false;   // its latest answer said the push was applied
    std::string failure;    // why the channel broke, until it is made again
    std::optional<PushEncoding> encoding;  // for the shard and the latest push's batch
    AlignedVector<float> values;           // a push's values when they are not a dense slice
    AlignedVector<std::uint32_t> pushWords, answerWords;  // lossy encodings' (net::WireEncoding)
    // With a lossy pull encoding: the slice as this link's answers built it, which the ps tracks
    // too (AnswerEncoder); the changes it sends are added to it. Empty until a whole answer.
    AlignedVector<float> copy;
  };

  // A channel to `endpoint`, once `then` (what the new channel must do first) has succeeded on
  // it too, retried until `timeoutSeconds` have passed, or until the settings name other ps
  // than `watched`, if given (SettingsChanged). `knownStep`: the step this worker last had from
  // that ps, which its hello says.
  Link open(const net::Endpoint& endpoint, double timeoutSeconds,
            const std::function<void(Link&)>& then = {},
            const std::vector<net::Endpoint>* watched = nullptr, std::uint64_t knownStep = 0);
  // Links to every ps of `endpoints` that serve one cut of the parameters together (the same
  // generation, as many ps, slices that tile the parameters in order), or nothing: the ps are
  // being re-cut, or the names led elsewhere for now.
  // `oneCut`: they serve one generation, as many ps as `endpoints`.
  std::optional<std::vector<Link>> openCut(const std::vector<net::Endpoint>& endpoints,
                                           bool& oneCut);
  // Connects to the ps of one cut, those the settings say now, until the peer timeout. Worker 0
  // re-cuts the ps where they serve different cuts or fewer or more than the settings say (its
  // copy of the parameters, `params`, fills what no ps gives); the others wait for it.
  void connectCut(float* params);
  // Worker 0: freezes the ps of the current cut and `target`, joins their slices and installs
  // the slices of a cut over `target` on each (CutAssembly), then connects to them.
  void recut(const std::vector<net::Endpoint>& target, float* params);
  std::vector<net::Endpoint> currentPs() const;
  // Worker 0: re-cuts when the settings name other ps than those connected (read every
  // settingsEverySeconds).
  void followSettings(float* params);
  // Worker 0 re-cuts the ps over `target` (a re-cut that a lost ps breaks off is left to
  // connectCut to make again); then every worker rejoins the cut.
  void recutAndRejoin(const std::vector<net::Endpoint>& target, float* params);
  // Connects to the ps of the cut served now (connectCut) and pulls their parameters.
  void rejoin(float* params);
  // The global step of this worker's copy of the parameters: the lowest its ps last said (as
  // of the links it had before a rejoin, while it has none; 0 before any).
  std::uint64_t copyStep() const;
  // A ps at global step 0 while another is past step 1 lost its state with its disk: a worker of
  // the run under way gives it its shard when it reconnects (reconnect). A worker new to the run
  // has no copy to give; it waits for that one, up to kShardRecoveryWait, before its first push,
  // which, applied first, would make the ps refuse the copy and start its shard over.
  void awaitRecoveredShards();
  static constexpr std::chrono::seconds kShardRecoveryWait{30};
  static constexpr std::chrono::milliseconds kShardRecoveryPoll{160};  // at most, between pulls
  // Opens `link` again and pulls its slice into `params`. A ps that serves another cut by then
  // (a re-cut while it was away) makes the client rejoin the cut.
  void reconnect(Link& link, float* params, const std::vector<net::Endpoint>& known);
  // Reconnects every link that failed, all at once.
  void reconnectLost(float* params);
  // Sends every ps a pull; a push of its part of `gradient`, with the lag of the link's answers
  // in flight.
  void postPull();
  void postPush(net::Push push, const Gradient& gradient);
  // The values of a push to `link` in a lossy push encoding: its slice of the gradient plus what
  // earlier pushes did not send, encoded; what this one does not send stays in unsent_.
  const float* encodePush(Link& link, const Gradient& gradient, size_t& words);
  // Reads every answer in flight, into `params`; reconnects what fails (receiveAnswers).
  void settle(float* params);
  // Reads the answers in flight of the links that work, into `params`, reconnecting none: a
  // re-cut's freeze and a goodbye expect answers of their own.
  void drain(float* params);
  // Receives the answers; when ps 0 held its answer back, pulls the other ps's slices again, so
  // that all of them are as fresh as the one that waited.
  Exchange collect(float* params);
  Exchange receiveAnswers(float* params);
  void receiveParams(Link& link, float* params, Exchange& exchange);

  const ClientOptions options_;
  const net::Dialer dial_;
  ClientObserver& observer_;
  const std::uint64_t incarnation_;
  std::uint64_t pushes_ = 0;  // sent so far: the last one's number
  std::vector<Link> links_;
  std::uint64_t generation_ = 0;  // of the cut the links serve
  std::vector<net::Endpoint> served_;  // the ps of the cut served last, links or none
  std::uint64_t copyStep_ = 0;    // copyStep() while there are no links
  std::chrono::steady_clock::time_point nextSettingsRead_{};
  Membership::Division division_{0, 1};
  AlignedVector<float> unsent_;  // of every parameter's gradient, by a lossy push encoding
};

}  // namespace pstrain::ps
