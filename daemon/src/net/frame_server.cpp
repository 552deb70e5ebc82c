#include "pstrain/net/frame_server.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/TCPServerConnection.h>
#include <Poco/Net/TCPServerConnectionFactory.h>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::net {
namespace {

// What every session of one server shares; lives as long as the server.
struct Shared {
  FrameServer::Options options;
  FrameServer::Serve serve;
};

class Session : public Poco::Net::TCPServerConnection {
 public:
  Session(const Poco::Net::StreamSocket& socket, const Shared& shared)
      : TCPServerConnection(socket), shared_(shared) {}

  void run() override {
    const auto& options = shared_.options;
    auto logger = log::logger(options.name);
    std::string peer = "unknown peer";
    try {
      if (options.idleTimeoutSeconds > 0) {
        socket().setReceiveTimeout(
            Poco::Timespan(Poco::Timespan::TimeDiff(options.idleTimeoutSeconds * 1e6)));
      }
      Connection connection(socket(), options.maxPayload, options.traffic);
      peer = connection.peerName();
      try {
        shared_.serve(connection);
      } catch (const ProtocolError& e) {
        if (options.rejected) ++*options.rejected;
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
  const Shared& shared_;
};

class SessionFactory : public Poco::Net::TCPServerConnectionFactory {
 public:
  explicit SessionFactory(Shared shared) : shared_(std::move(shared)) {}

  Poco::Net::TCPServerConnection* createConnection(
      const Poco::Net::StreamSocket& socket) override {
    return new Session(socket, shared_);
  }

 private:
  Shared shared_;
};

}  // namespace

FrameServer::FrameServer(Options options, Serve serve) : pool_(2, options.maxConnections) {
  Poco::Net::ServerSocket socket;
  try {
    socket.bind(Poco::Net::SocketAddress("0.0.0.0", static_cast<Poco::UInt16>(options.port)),
                true);
    socket.listen(64);
  } catch (const Poco::Exception& e) {
    throw IoError("cannot listen on port " + std::to_string(options.port) + ": " +
                  e.displayText());
  }
  auto params = new Poco::Net::TCPServerParams;
  params->setMaxThreads(options.maxConnections);
  params->setMaxQueued(64);
  server_ = std::make_unique<Poco::Net::TCPServer>(
      new SessionFactory(Shared{std::move(options), std::move(serve)}), pool_, socket, params);
  server_->start();
}

FrameServer::~FrameServer() { server_->stop(); }

int FrameServer::port() const { return server_->port(); }

}  // namespace pstrain::net
