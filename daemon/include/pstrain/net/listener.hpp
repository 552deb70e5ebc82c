#pragma once

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "pstrain/net/channel.hpp"
#include "pstrain/net/session.hpp"

namespace pstrain::net {

// Accepts TCP connections on a port. A connection is cheap until it proves itself: one thread
// watches every new connection until it has sent the bytes of a whole first frame (the kernel
// holds them; SO_RCVLOWAT keeps poll quiet until then), and closes those that have not within
// the handshake deadline. Only then does the connection get a thread of its own, running `serve`
// on it until the peer leaves. Port scans, stuck clients and trickling bytes cost no thread and
// no buffer, and no number of them keeps a real peer out.
class Listener {
 public:
  struct Options {
    int port = 0;
    std::uint32_t maxPayload = 0;
    size_t firstFrameBytes = 0;     // the size of the frame a real peer starts with
    double handshakeSeconds = 5;    // for the first frame, and the receive timeout after it
    TrafficCounters* traffic = nullptr;               // counts every connection's bytes
    SessionObserver* observer = nullptr;              // told of refusals, ends and failures
  };

  // Throws ListenError when the port cannot be listened on (another process holds it).
  Listener(Options options, Serve serve);
  // Stops accepting, ends every session (their sockets are shut down) and waits for them.
  ~Listener();

  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  int port() const { return port_; }

 private:
  struct Session {
    Poco::Net::StreamSocket socket;
    std::thread thread;
    std::atomic<bool> ended{false};
  };

  void watch();
  void startSession(Poco::Net::StreamSocket socket);
  void reapEndedSessions();

  const Options options_;
  const Serve serve_;
  SessionObserver& observer_;  // options_.observer, or one that records nothing
  Poco::Net::ServerSocket server_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // guards sessions_
  std::list<Session> sessions_;
  std::thread watcher_;
};

}  // namespace pstrain::net
