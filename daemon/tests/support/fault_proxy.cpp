#include "support/fault_proxy.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace pstrain::testing {
namespace {

// How long a direction sleeps at most before it looks at the toxics and its link again.
constexpr std::chrono::milliseconds kPollPeriod{20};
// Bytes a direction holds at most (latency, a black hole) before it stops reading: beyond it
// the sender's socket buffer fills, as a real link's would.
constexpr size_t kMaxHeld = 16 << 20;

std::runtime_error systemError(const std::string& what) {
  return std::runtime_error("fault proxy: " + what + ": " + std::strerror(errno));
}

void setNoDelay(int fd) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

// Closing with a zero linger sends RST instead of FIN, as a reset connection does.
void closeWithReset(int fd) {
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

// A connected socket to `target`, or -1 (it does not listen: the client is reset, as it would
// be by the target itself).
int connectTo(const net::Endpoint& target) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(target.host.c_str(), std::to_string(target.port).c_str(), &hints, &found) !=
      0) {
    return -1;
  }
  int fd = -1;
  for (auto* address = found; address && fd < 0; address = address->ai_next) {
    fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd >= 0 && ::connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

timespec timeoutOf(std::chrono::nanoseconds wait) {
  wait = std::max(wait, std::chrono::nanoseconds(0));
  return {time_t(wait.count() / 1000000000), long(wait.count() % 1000000000)};
}

}  // namespace

class FaultProxy::Link {
 public:
  Link(FaultProxy& proxy, int client, int server, std::uint64_t number)
      : proxy_(proxy), client_(client), server_(server), opened_(Clock::now()) {
    threads_[0] = std::thread([this, number] { pump(client_, server_, number, 0); });
    threads_[1] = std::thread([this, number] { pump(server_, client_, number, 1); });
  }

  ~Link() {
    abort();
    for (auto& thread : threads_) thread.join();
  }

  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  void resetAfter(size_t bytes) { budget_ = std::int64_t(bytes); }
  bool finished() const { return running_ == 0; }

  // Ends both directions; the last one out resets both ends. Whether this call ended them.
  bool abort() {
    std::lock_guard<std::mutex> lock(closing_);
    if (aborted_.exchange(true) || closed_) return false;
    // Wakes a direction polling its source (nothing is sent to the peer).
    ::shutdown(client_, SHUT_RD);
    ::shutdown(server_, SHUT_RD);
    return true;
  }

 private:
  // What a toxic's reset does: both ends get RST.
  void reset() {
    if (abort()) ++proxy_.resets_;
  }

  struct Chunk {
    Clock::time_point due;
    std::vector<char> bytes;
    size_t sent = 0;
  };

  // Forwards `from` to `to` through the toxics until `from` ends (passed on as FIN), either
  // side fails (passed on as RST), the reset toxic fires or the proxy stops.
  void pump(int from, int to, std::uint64_t number, std::uint64_t direction) {
    Jitter jitter(proxy_.seed_, number, direction);
    std::deque<Chunk> queue;
    size_t held = 0;
    Clock::time_point lastDue{};
    Clock::time_point nextWrite{};
    bool ended = false;  // `from` has sent its last byte
    std::vector<char> buffer(64 * 1024);
    while (!aborted_) {
      if (ended && queue.empty()) {
        ::shutdown(to, SHUT_WR);
        break;
      }
      auto toxics = proxy_.toxics();
      auto now = Clock::now();
      // A dropping black hole resets the connections it swallowed bytes of, when it ends.
      if (toxics.blackHole == BlackHole::kDrop && toxics.blackHoleUntil <= now &&
          opened_ < toxics.blackHoleUntil) {
        reset();
        break;
      }
      auto writeAt = Clock::time_point::max();
      if (!queue.empty()) {
        writeAt = std::max(queue.front().due, nextWrite);
        if (toxics.blackHole == BlackHole::kHold) {
          writeAt = std::max(writeAt, toxics.blackHoleUntil);
        }
      }
      const bool reading = !ended && held < kMaxHeld;
      const bool due = writeAt <= now;
      pollfd fds[2];
      nfds_t count = 0;
      if (reading) fds[count++] = {from, POLLIN, 0};
      if (due) fds[count++] = {to, POLLOUT, 0};
      const auto wait = due ? kPollPeriod
                            : std::min<Clock::duration>(writeAt - now, kPollPeriod);
      const auto timeout = timeoutOf(wait);
      if (::ppoll(fds, count, &timeout, nullptr) < 0 && errno != EINTR) break;
      if (aborted_) break;
      // What arrived during the wait goes through the toxics as they are now.
      toxics = proxy_.toxics();
      if (reading && fds[0].revents != 0) {
        const auto got = ::recv(from, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got == 0) {
          ended = true;
        } else if (got < 0) {
          if (errno != EAGAIN && errno != EINTR) break;  // reset by its peer: reset the other
        } else {
          now = Clock::now();
          const bool dropped =
              toxics.blackHole == BlackHole::kDrop && now < toxics.blackHoleUntil;
          if (!dropped) {
            auto delay = toxics.latency;
            if (toxics.jitter.count() > 0) delay += jitter.next(toxics.jitter);
            lastDue = std::max(lastDue, now + std::max(delay, Duration(0)));
            queue.push_back({lastDue, std::vector<char>(buffer.begin(), buffer.begin() + got)});
            held += size_t(got);
          }
        }
      }
      now = Clock::now();
      if (queue.empty() || writeAt > now) continue;
      auto& front = queue.front();
      size_t piece = front.bytes.size() - front.sent;
      if (toxics.slice > 0) piece = std::min(piece, toxics.slice);
      if (toxics.bytesPerSecond > 0) {
        // 10 ms of the cap at a time, so that the pace is even.
        piece = std::min(piece, std::max<size_t>(1, size_t(toxics.bytesPerSecond / 100)));
      }
      const auto budget = budget_.load();
      if (budget >= 0) piece = std::min(piece, size_t(budget));
      if (piece == 0) {
        reset();
        break;
      }
      const auto put = ::send(to, front.bytes.data() + front.sent, piece,
                              MSG_DONTWAIT | MSG_NOSIGNAL);
      if (put < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        break;
      }
      front.sent += size_t(put);
      held -= size_t(put);
      proxy_.forwarded_ += std::uint64_t(put);
      if (front.sent == front.bytes.size()) queue.pop_front();
      nextWrite = now;
      if (toxics.bytesPerSecond > 0) {
        nextWrite += std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(double(put) / toxics.bytesPerSecond));
      }
      if (toxics.slice > 0) nextWrite = std::max(nextWrite, now + toxics.sliceGap);
      if (budget >= 0 && budget_.fetch_sub(put) - put <= 0) {
        reset();
        break;
      }
    }
    // Ended by anything but the source's FIN: both ends are reset.
    if (!ended || !queue.empty()) abort();
    if (running_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(closing_);
      closed_ = true;
      if (aborted_) {
        closeWithReset(client_);
        closeWithReset(server_);
      } else {
        ::close(client_);
        ::close(server_);
      }
    }
  }

  FaultProxy& proxy_;
  const int client_;
  const int server_;
  const Clock::time_point opened_;
  std::atomic<std::int64_t> budget_{-1};  // bytes until the reset toxic fires; -1: none
  std::atomic<bool> aborted_{false};
  std::atomic<int> running_{2};
  std::mutex closing_;  // the sockets are closed once, and not shut down after
  bool closed_ = false;
  std::thread threads_[2];
};

FaultProxy::Jitter::Jitter(std::uint64_t seed, std::uint64_t connection, std::uint64_t direction)
    : random_([&] {
        std::seed_seq sequence{seed, connection, direction};
        return std::mt19937_64(sequence);
      }()) {}

FaultProxy::Duration FaultProxy::Jitter::next(Duration jitter) {
  return Duration(std::uniform_int_distribution<long>(-jitter.count(), jitter.count())(random_));
}

FaultProxy::FaultProxy(net::Endpoint target, std::uint64_t seed, int listenPort)
    : target_(std::move(target)), seed_(seed) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw systemError("socket");
  int on = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(std::uint16_t(listenPort));
  socklen_t length = sizeof address;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listener_, 128) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const auto error = systemError("listening on 127.0.0.1:" + std::to_string(listenPort));
    ::close(listener_);
    throw error;
  }
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { acceptLoop(); });
}

FaultProxy::~FaultProxy() {
  stopping_ = true;
  acceptor_.join();
  ::close(listener_);
  reap(true);
}

FaultProxy::Toxics FaultProxy::toxics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return toxics_;
}

void FaultProxy::setLatency(Duration latency, Duration jitter) {
  std::lock_guard<std::mutex> lock(mutex_);
  toxics_.latency = latency;
  toxics_.jitter = jitter;
}

void FaultProxy::setBandwidth(double bytesPerSecond) {
  std::lock_guard<std::mutex> lock(mutex_);
  toxics_.bytesPerSecond = bytesPerSecond;
}

void FaultProxy::setSlice(size_t bytes, Duration gap) {
  std::lock_guard<std::mutex> lock(mutex_);
  toxics_.slice = bytes;
  toxics_.sliceGap = gap;
}

void FaultProxy::resetAfter(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& link : links_) link->resetAfter(bytes);
}

void FaultProxy::blackHole(Duration duration, BlackHole kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  toxics_.blackHoleUntil = Clock::now() + duration;
  toxics_.blackHole = kind;
}

void FaultProxy::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  toxics_ = Toxics{};
}

void FaultProxy::acceptLoop() {
  while (!stopping_) {
    reap(false);
    pollfd ready{listener_, POLLIN, 0};
    if (::poll(&ready, 1, int(kPollPeriod.count())) <= 0) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int server = connectTo(target_);
    if (server < 0) {
      closeWithReset(client);
      continue;
    }
    setNoDelay(client);
    setNoDelay(server);
    std::lock_guard<std::mutex> lock(mutex_);
    links_.push_back(std::make_unique<Link>(*this, client, server, accepted_++));
  }
}

void FaultProxy::reap(bool all) {
  std::list<std::unique_ptr<Link>> ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = links_.begin(); it != links_.end();) {
      auto next = std::next(it);
      if (all || (*it)->finished()) ended.splice(ended.end(), links_, it);
      it = next;
    }
  }
  ended.clear();  // joined outside the lock: their directions read the toxics under it
}

}  // namespace pstrain::testing
