#include "pstrain/observe/http_endpoint.hpp"

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>

#include "pstrain/common/error.hpp"

namespace pstrain::observe {
namespace {

using Poco::Net::HTTPResponse;

class Handler : public Poco::Net::HTTPRequestHandler {
 public:
  explicit Handler(const Metrics& metrics) : metrics_(metrics) {}

  void handleRequest(Poco::Net::HTTPServerRequest& request,
                     Poco::Net::HTTPServerResponse& response) override {
    const std::string path = request.getURI().substr(0, request.getURI().find('?'));
    std::string body;
    std::string type = "text/plain; charset=utf-8";
    auto status = HTTPResponse::HTTP_OK;
    if (request.getMethod() != "GET" && request.getMethod() != "HEAD") {
      status = HTTPResponse::HTTP_METHOD_NOT_ALLOWED;
      body = "only GET\n";
    } else if (path == "/healthz") {
      body = "ok\n";
    } else if (path == "/readyz") {
      bool ready = metrics_.state() != State::kWaiting;
      status = ready ? HTTPResponse::HTTP_OK : HTTPResponse::HTTP_SERVICE_UNAVAILABLE;
      body = stateName(metrics_.state()) + "\n";
    } else if (path == "/metrics") {
      type = "text/plain; version=0.0.4; charset=utf-8";
      body = metrics_.prometheusText();
    } else if (path == "/status") {
      type = "application/json";
      body = metrics_.statusJson() + "\n";
    } else {
      status = HTTPResponse::HTTP_NOT_FOUND;
      body = "not found: try /healthz, /readyz, /metrics or /status\n";
    }
    response.setStatus(status);
    response.setContentType(type);
    response.sendBuffer(body.data(), body.size());
  }

 private:
  const Metrics& metrics_;
};

class HandlerFactory : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit HandlerFactory(const Metrics& metrics) : metrics_(metrics) {}
  Poco::Net::HTTPRequestHandler* createRequestHandler(
      const Poco::Net::HTTPServerRequest&) override {
    return new Handler(metrics_);
  }

 private:
  const Metrics& metrics_;
};

}  // namespace

HttpEndpoint::HttpEndpoint(int port, const Metrics& metrics) {
  Poco::Net::ServerSocket socket;
  try {
    socket.bind(Poco::Net::SocketAddress("0.0.0.0", static_cast<Poco::UInt16>(port)), true);
    socket.listen(32);
  } catch (const Poco::Exception& e) {
    throw IoError("cannot listen for HTTP on port " + std::to_string(port) + ": " +
                  e.displayText());
  }
  auto params = new Poco::Net::HTTPServerParams;
  params->setMaxThreads(4);
  params->setKeepAlive(false);
  server_ = std::make_unique<Poco::Net::HTTPServer>(new HandlerFactory(metrics), socket, params);
  server_->start();
}

HttpEndpoint::~HttpEndpoint() { server_->stop(); }

int HttpEndpoint::port() const { return server_->port(); }

}  // namespace pstrain::observe
