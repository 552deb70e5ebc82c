#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "pstrain/net/endpoint.hpp"

namespace pstrain::testing {

// A TCP proxy on 127.0.0.1 that does to the bytes between workers and a ps what networks do,
// with toxiproxy's toxics as the model: latency with jitter, a bandwidth cap, a reset in the
// middle of a frame, delivery a byte at a time, a black hole. Each accepted connection is
// forwarded to the target, both directions on threads of their own; a test changes the toxics
// while connections are open, and they apply to both directions of every connection.
//
// Jitter is drawn from a generator seeded by the proxy's seed, the connection's number and its
// direction (Jitter): the same seed draws the same delays. (Which bytes a delay applies to
// follows the chunks the kernel hands over, which timing decides.)
class FaultProxy {
 public:
  using Duration = std::chrono::microseconds;

  // The jitter of one direction of one connection, chunk after chunk.
  class Jitter {
   public:
    // `direction` 0: towards the target; 1: back.
    Jitter(std::uint64_t seed, std::uint64_t connection, std::uint64_t direction);
    // The next chunk's: uniform in [-jitter, jitter].
    Duration next(Duration jitter);

   private:
    std::mt19937_64 random_;
  };

  // What a black hole does with the bytes it takes in: holds them until it ends (a route that
  // stalls, or a peer paused, and TCP retransmits), or drops them and resets every connection it
  // swallowed bytes of when it ends (toxiproxy's timeout toxic: a route lost until the
  // connections are given up).
  enum class BlackHole { kHold, kDrop };

  // Listens on 127.0.0.1:`listenPort` (0: a free port).
  explicit FaultProxy(net::Endpoint target, std::uint64_t seed = 1, int listenPort = 0);
  // Closes every connection and its target's, as a proxy process that exits.
  ~FaultProxy();

  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  net::Endpoint endpoint() const { return {"127.0.0.1", port_}; }

  // Each chunk is delivered `latency` ± up to `jitter` (uniform) after it was read, and never
  // before the chunk read before it.
  void setLatency(Duration latency, Duration jitter = {});
  // At most `bytesPerSecond` in each direction of each connection; 0: no cap.
  void setBandwidth(double bytesPerSecond);
  // Writes pieces of `bytes` (1: a byte at a time), `gap` apart; 0: as read.
  void setSlice(size_t bytes, Duration gap = {});
  // Each connection open now is reset (RST to both ends) once `bytes` more bytes have gone
  // through it, either way: in the middle of a frame, unless a frame happens to end there.
  void resetAfter(size_t bytes);
  // For `duration` from now, every connection, new ones too, lets nothing through.
  void blackHole(Duration duration, BlackHole kind = BlackHole::kHold);
  // No toxics from now on; bytes already held keep their delivery time.
  void clear();

  std::uint64_t accepted() const { return accepted_; }
  std::uint64_t resets() const { return resets_; }  // connections the reset toxic ended
  std::uint64_t bytesForwarded() const { return forwarded_; }

 private:
  using Clock = std::chrono::steady_clock;

  struct Toxics {
    Duration latency{0};
    Duration jitter{0};
    double bytesPerSecond = 0;
    size_t slice = 0;
    Duration sliceGap{0};
    Clock::time_point blackHoleUntil{};
    BlackHole blackHole = BlackHole::kHold;
  };
  class Link;  // an accepted connection, its target's and the two directions between them

  Toxics toxics() const;
  void acceptLoop();
  // Joins the links whose directions have both ended; with `all`, ends the others first.
  void reap(bool all);

  const net::Endpoint target_;
  const std::uint64_t seed_;
  int listener_ = -1;
  int port_ = 0;
  mutable std::mutex mutex_;  // guards toxics_ and links_
  Toxics toxics_;
  std::list<std::unique_ptr<Link>> links_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> accepted_{0};
  std::atomic<std::uint64_t> resets_{0};
  std::atomic<std::uint64_t> forwarded_{0};
  std::thread acceptor_;
};

}  // namespace pstrain::testing
