#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/net/dialer.hpp"
#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/message.hpp"
#include "pstrain/ps/client_observer.hpp"
#include "pstrain/ps/client_options.hpp"
#include "pstrain/ps/membership.hpp"
#include "pstrain/ps/ps_links.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "pstrain/ps/recut_coordinator.hpp"

namespace pstrain::ps {

// A worker's side of the ps, in the manner of ps-lite's KVWorker and Customer: push and pull to
// every ps at once, and the requests out on each link whose answers are awaited. The links and
// their reconnection are PsLinks'; worker 0's re-cuts its RecutCoordinator's. The training loop
// sees parameters and gradients, never a channel.
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

  // `coordinator`: worker 0's, which re-cuts the ps where they serve different cuts or the
  // settings name other ps; a client without one waits for worker 0's cut.
  Client(ClientOptions options, net::Dialer dial, ClientObserver& observer,
         std::unique_ptr<RecutCoordinator> coordinator = nullptr);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

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
  // What connecting to a cut does where the ps serve different cuts (PsLinks::connectCut):
  // re-cut them, given a coordinator, `params` (the worker's copy; null: none yet) filling what
  // no ps gives.
  PsLinks::Recut recutter(float* params);
  // Re-cuts the ps over `target` once the answers in flight are read into `params` (if any).
  RecutResult recut(const std::vector<net::Endpoint>& target, float* params);
  // With a coordinator: re-cuts when the settings name other ps than those connected.
  void followSettings(float* params);
  // With a coordinator, re-cuts the ps over `target` (a re-cut that a lost ps breaks off is left
  // to connecting again to make); then rejoins the cut.
  void recutAndRejoin(const std::vector<net::Endpoint>& target, float* params);
  // Connects to the ps of the cut served now (PsLinks::rejoin) and pulls their parameters.
  void rejoin(float* params);
  // A ps at global step 0 while another is past step 1 lost its state with its disk: a worker of
  // the run under way gives it its shard when it reconnects (PsLinks::reconnectLost). A worker
  // new to the run has no copy to give; it waits for that one, up to kShardRecoveryWait, before
  // its first push, whose steps, trained on the initial parameters, the copy would undo.
  void awaitRecoveredShards();
  static constexpr std::chrono::seconds kShardRecoveryWait{30};
  static constexpr std::chrono::milliseconds kShardRecoveryPoll{160};  // at most, between pulls
  // Reconnects every link that failed, all at once; follows the settings where a lost ps left
  // them.
  void reconnectLost(float* params);
  // Pulls `link`'s slice into `params`, there and then.
  void pullNow(PsLink& link, float* params);
  // Sends `link`'s ps a pull; every ps a push of its part of `gradient`, with the lag of the
  // link's answers in flight. A channel that breaks marks the link failed.
  void postPull(PsLink& link);
  void postPush(net::Push push, const Gradient& gradient);
  // The values of a push to `link` in a lossy push encoding: its slice of the gradient plus what
  // earlier pushes did not send, encoded; what this one does not send stays in unsent_.
  const float* encodePush(PsLink& link, const Gradient& gradient, size_t& words);
  // Reads every answer in flight, into `params`; reconnects what fails (receiveAnswers).
  void settle(float* params);
  // Reads the answers in flight of the links that work, into `params`, reconnecting none: a
  // re-cut's freeze and a goodbye expect answers of their own.
  void drain(float* params);
  // Receives the answers; when ps 0 held its answer back, pulls the other ps's slices again, so
  // that all of them are as fresh as the one that waited.
  Exchange collect(float* params);
  Exchange receiveAnswers(float* params);
  // Reads the answer of link `index` to request `pushNumber`; a channel that breaks marks the
  // link failed.
  void receiveAnswer(size_t index, std::uint64_t pushNumber, float* params, Exchange& exchange);
  void receiveParams(PsLink& link, float* params, Exchange& exchange);

  PsLinks links_;
  const ClientOptions& options_;  // the links'
  ClientObserver& observer_;
  const std::unique_ptr<RecutCoordinator> coordinator_;
  const std::uint64_t incarnation_;
  std::uint64_t pushes_ = 0;  // sent so far: the last one's number
  Membership::Division division_{0, 1};
  AlignedVector<float> unsent_;  // of every parameter's gradient, by a lossy push encoding
};

}  // namespace pstrain::ps
