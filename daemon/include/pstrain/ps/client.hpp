#pragma once

#include <chrono>
#include <cstdint>
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
  };

  Client(ClientOptions options, net::Dialer dial, ClientObserver& observer);

  // Connects to every ps, retrying each with backoff until the peer timeout; throws
  // UnreachableError when a ps never appeared, RefusedError or ProtocolError at once when a ps
  // refuses this worker or cannot prove the key.
  void connect();

  // Every ps's slice of the parameters into `params`.
  Exchange pull(float* params);
  // Sends each ps its part of `gradient` (PushEncoding) and puts the slice it answers, the
  // parameters after the step, into `params`. A ps that went away is reconnected and pulled
  // afresh: its part of this push is lost, as with a TensorFlow ps that restarts.
  Exchange pushPull(const Gradient& gradient, float* params, std::uint64_t localStep, float loss);

  // Every ps has reached the last step.
  bool done() const;

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
    bool awaiting = false;  // a request is out, its answer not yet read
    bool held = false;      // its latest answer waited at the ps's StepGate
    std::string failure;    // why the channel broke, until it is made again
    std::optional<PushEncoding> encoding;  // for the shard and the latest push's batch
    AlignedVector<float> values;           // a push's values when they are not a dense slice
  };

  // A channel to `endpoint` that serves the shard starting at `offset`, once `then` (what the
  // new channel must do first) has succeeded on it too: one attempt of the retry loop.
  Link open(const net::Endpoint& endpoint, size_t offset,
            const std::function<void(Link&)>& then = {});
  // A ps at global step 0 while another is past step 1 lost its state with its disk: a worker of
  // the run under way gives it its shard when it reconnects (reconnect). A worker new to the run
  // has no copy to give; it waits for that one, up to kShardRecoveryWait, before its first push,
  // which, applied first, would make the ps refuse the copy and start its shard over.
  void awaitRecoveredShards();
  static constexpr std::chrono::seconds kShardRecoveryWait{30};
  static constexpr std::chrono::milliseconds kShardRecoveryPoll{160};  // at most, between pulls
  // Opens `link` again and pulls its slice into `params`.
  void reconnect(Link& link, float* params);
  // Reconnects every link that failed, all at once.
  void reconnectLost(float* params);
  // Sends every ps the request; a push's values are each ps's part of `gradient`.
  void post(net::MessageType type, const std::vector<std::uint8_t>& fields,
            const Gradient* gradient);
  // Receives the answers; when ps 0 held its answer back, pulls the other ps's slices again, so
  // that all of them are as fresh as the one that waited.
  Exchange collect(float* params);
  Exchange receiveAnswers(float* params);
  void receiveParams(Link& link, float* params, Exchange& exchange);

  const ClientOptions options_;
  const net::Dialer dial_;
  ClientObserver& observer_;
  std::vector<Link> links_;
  Membership::Division division_{0, 1};
};

}  // namespace pstrain::ps
