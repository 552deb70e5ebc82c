#include "pstrain/net/frame_server.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/TCPServerConnection.h>
#include <Poco/Net/TCPServerConnectionFactory.h>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::net {
namespace {

class Session : public Poco::Net::TCPServerConnection {
 public:
  Session(const Poco::Net::StreamSocket& socket, const std::string& name,
          std::uint32_t maxPayload, const FrameServer::Serve& serve)
      : TCPServerConnection(socket), name_(name), maxPayload_(maxPayload), serve_(serve) {}

  void run() override {
    auto logger = log::logger(name_);
    std::string peer = "unknown peer";
    try {
      Connection connection(socket(), maxPayload_);
      peer = connection.peerName();
      try {
        serve_(connection);
      } catch (const ProtocolError& e) {
        // Tell a confused peer why before closing; it may not be listening any more.
        logger->warn("closing connection from {}: {}", peer, e.what());
        connection.sendError(e.what());
      }
    } catch (const PeerError& e) {
      logger->info("connection from {} ended: {}", peer, e.what());
    } catch (const Poco::Exception& e) {
      logger->warn("connection from {} failed: {}", peer, e.displayText());
    } catch (const std::exception& e) {
      logger->error("connection from {} failed: {}", peer, e.what());
    }
  }

 private:
  const std::string& name_;
  std::uint32_t maxPayload_;
  const FrameServer::Serve& serve_;
};

class SessionFactory : public Poco::Net::TCPServerConnectionFactory {
 public:
  SessionFactory(std::string name, std::uint32_t maxPayload, FrameServer::Serve serve)
      : name_(std::move(name)), maxPayload_(maxPayload), serve_(std::move(serve)) {}

  Poco::Net::TCPServerConnection* createConnection(
      const Poco::Net::StreamSocket& socket) override {
    return new Session(socket, name_, maxPayload_, serve_);
  }

 private:
  std::string name_;
  std::uint32_t maxPayload_;
  FrameServer::Serve serve_;
};

}  // namespace

FrameServer::FrameServer(const std::string& name, int port, std::uint32_t maxPayload,
                         int maxConnections, Serve serve)
    : pool_(2, maxConnections) {
  Poco::Net::ServerSocket socket;
  try {
    socket.bind(Poco::Net::SocketAddress("0.0.0.0", static_cast<Poco::UInt16>(port)), true);
    socket.listen(64);
  } catch (const Poco::Exception& e) {
    throw IoError("cannot listen on port " + std::to_string(port) + ": " + e.displayText());
  }
  auto params = new Poco::Net::TCPServerParams;
  params->setMaxThreads(maxConnections);
  params->setMaxQueued(64);
  server_ = std::make_unique<Poco::Net::TCPServer>(
      new SessionFactory(name, maxPayload, std::move(serve)), pool_, socket, params);
  server_->start();
}

FrameServer::~FrameServer() { server_->stop(); }

int FrameServer::port() const { return server_->port(); }

}  // namespace pstrain::net
