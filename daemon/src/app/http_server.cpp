#include "pstrain/app/http_server.hpp"

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/TCPServerConnectionFactory.h>
#include <Poco/Net/TCPServerDispatcher.h>

#include "pstrain/app/http_connection.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::app {
namespace {

// How long a client that got 503 is asked to wait before it tries again.
constexpr int kRetryAfterSeconds = 1;

constexpr int kSpareThreads = 4;

class ConnectionFactory : public Poco::Net::TCPServerConnectionFactory {
 public:
  ConnectionFactory(std::shared_ptr<HttpServer::Shared> shared, const HttpResponder& respond)
      : shared_(std::move(shared)), respond_(respond) {}

  Poco::Net::TCPServerConnection* createConnection(
      const Poco::Net::StreamSocket& socket) override {
    return new HttpConnection(socket, shared_, respond_);
  }

 private:
  const std::shared_ptr<HttpServer::Shared> shared_;
  const HttpResponder& respond_;  // one of shared_'s
};

// Hands the connections that the server's queue has no room for to the threads that refuse
// them with 503; Poco's own server would close them unanswered, which a client that has sent
// its request reads as a reset.
class OverflowFilter : public Poco::Net::TCPServerConnectionFilter {
 public:
  OverflowFilter(const Poco::Net::TCPServer& server, int queue,
                 Poco::Net::TCPServerDispatcher& refusals)
      : server_(server), queue_(queue), refusals_(refusals) {}

  // Called by the server's one accepting thread, the only one that adds to its queue: room
  // seen here is room when the connection is queued.
  bool accept(const Poco::Net::StreamSocket& socket) override {
    if (server_.queuedConnections() < queue_) return true;
    refusals_.enqueue(socket);
    return false;
  }

 private:
  const Poco::Net::TCPServer& server_;
  const int queue_;
  Poco::Net::TCPServerDispatcher& refusals_;
};

Poco::Net::ServerSocket listenOn(int port, int backlog) {
  Poco::Net::ServerSocket socket;
  try {
    // SO_REUSEADDR, so a restart binds while old connections linger in TIME_WAIT; not
    // SO_REUSEPORT, which would let a second server share the port and split its requests.
    socket.bind(Poco::Net::SocketAddress("0.0.0.0", static_cast<Poco::UInt16>(port)), true, false);
    socket.listen(backlog);
  } catch (const Poco::Exception& e) {
    throw ListenError("cannot listen for HTTP on port " + std::to_string(port) + ": " +
                      e.displayText());
  }
  return socket;
}

HttpResponder busy(const HttpLimits& limits) {
  const std::string message = "the server is busy: " + std::to_string(limits.threads) +
                              " requests are being answered and " +
                              std::to_string(limits.queue) + " more wait; try again in " +
                              std::to_string(kRetryAfterSeconds) + " s";
  return [message](const Poco::Net::HTTPRequest&, const ReadBody&) {
    return HttpAnswer{serve::errorReply(503, message),
                      {{"Retry-After", std::to_string(kRetryAfterSeconds)}},
                      true};
  };
}

}  // namespace

HttpServer::HttpServer(int port, HttpResponder respond, const HttpLimits& limits)
    : shared_(std::make_shared<Shared>()),
      // Room beyond the limits, which the dispatchers keep: a thread that has just finished a
      // connection is counted free by its dispatcher a moment before the pool has it back.
      pool_(1, limits.threads + kSpareThreads),
      refusalPool_(1, limits.refusalThreads + kSpareThreads) {
  // Bounded: a few threads, a short queue, and a timeout on every read and write, so a slow or
  // stuck client holds one thread for seconds and the probes are still answered. A kept-alive
  // connection holds its thread between requests too, at most 5 s idle.
  Poco::Net::HTTPServerParams::Ptr params(new Poco::Net::HTTPServerParams);
  params->setMaxThreads(limits.threads);
  params->setMaxQueued(limits.queue);
  params->setTimeout(Poco::Timespan(5, 0));
  params->setKeepAlive(true);
  params->setKeepAliveTimeout(Poco::Timespan(5, 0));
  shared_->params = params;
  shared_->respond = std::move(respond);
  shared_->refuse = busy(limits);
  Poco::Net::TCPServerParams::Ptr refusalParams(new Poco::Net::TCPServerParams);
  refusalParams->setMaxThreads(limits.refusalThreads);
  refusalParams->setMaxQueued(limits.refusalQueue);
  // The kernel's queue of connections not yet accepted holds a burst beyond both.
  auto socket = listenOn(port, limits.queue + limits.refusalQueue);
  refusals_ = new Poco::Net::TCPServerDispatcher(
      new ConnectionFactory(shared_, shared_->refuse), refusalPool_, refusalParams);
  server_ = std::make_unique<Poco::Net::TCPServer>(
      new ConnectionFactory(shared_, shared_->respond), pool_, socket, params);
  server_->setConnectionFilter(new OverflowFilter(*server_, limits.queue, *refusals_));
  server_->start();
}

HttpServer::~HttpServer() {
  server_->stop();  // accepts no more; its queue is dropped
  refusals_->stop();
  shared_->live.stop();  // ends the connections under way
  pool_.joinAll();
  refusalPool_.joinAll();
  server_.reset();
  refusals_->release();
}

int HttpServer::port() const { return server_->port(); }

}  // namespace pstrain::app
