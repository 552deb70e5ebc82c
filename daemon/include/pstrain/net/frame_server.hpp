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

  // Connections count their bytes into `traffic` when given; `rejected` counts the connections
  // closed for breaking the protocol.
  FrameServer(const std::string& name, int port, std::uint32_t maxPayload, int maxConnections,
              Serve serve, TrafficCounters* traffic = nullptr,
              std::atomic<std::uint64_t>* rejected = nullptr);
  ~FrameServer();

  FrameServer(const FrameServer&) = delete;
  FrameServer& operator=(const FrameServer&) = delete;

  int port() const;

 private:
  Poco::ThreadPool pool_;
  std::unique_ptr<Poco::Net::TCPServer> server_;
};

}  // namespace pstrain::net
