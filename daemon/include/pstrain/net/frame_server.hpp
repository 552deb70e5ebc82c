#pragma once

#include <Poco/Net/TCPServer.h>
#include <Poco/ThreadPool.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "pstrain/net/connection.hpp"

namespace pstrain::net {

// Accepts connections on a port and runs `serve` for each on a thread of its own, until the
// peer leaves. A peer that breaks the protocol or vanishes ends only its own connection: the
// server logs it and goes on serving everyone else.
class FrameServer {
 public:
  using Serve = std::function<void(Connection&)>;

  struct Options {
    std::string name;  // of the logger
    int port = 0;
    std::uint32_t maxPayload = 0;
    int maxConnections = 8;
    double idleTimeoutSeconds = 0;  // a connection silent this long is closed; 0: never
    TrafficCounters* traffic = nullptr;               // counts every connection's bytes
    std::atomic<std::uint64_t>* rejected = nullptr;  // counts protocol faults
  };

  FrameServer(Options options, Serve serve);
  ~FrameServer();

  FrameServer(const FrameServer&) = delete;
  FrameServer& operator=(const FrameServer&) = delete;

  int port() const;

 private:
  Poco::ThreadPool pool_;
  std::unique_ptr<Poco::Net::TCPServer> server_;
};

}  // namespace pstrain::net
