#pragma once

#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/TCPServer.h>
#include <Poco/ThreadPool.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pstrain/serve/http_reply.hpp"

namespace Poco::Net {
class TCPServerDispatcher;
}

namespace pstrain::app {

// What the server answers one request with.
struct HttpAnswer {
  serve::HttpReply reply;  // status, content type, body and a 405's Allow
  std::vector<std::pair<std::string, std::string>> headers = {};  // more header fields
  bool close = false;                                             // end the connection after it
  std::function<void()> sent = {};  // called once the answer is written, if set
};

// Reads the request's body within the server's size and time limits; throws
// serve::RequestError (400 none, 413 over the limit, 408 too slow) instead.
using ReadBody = std::function<std::string()>;

// Answers a request from its head, reading its body with `readBody` if it wants it. Throwing
// serve::RequestError answers its status with {"error": "..."}. Called on many threads at once.
using HttpResponder =
    std::function<HttpAnswer(const Poco::Net::HTTPRequest& request, const ReadBody& readBody)>;

// The limits of the HTTP server.
struct HttpLimits {
  int threads = 16;  // requests answered at once
  int queue = 64;    // connections waiting for one of them
  // Connections beyond the queue get 503 with Retry-After from threads of their own, so long
  // as no more than this many wait for them; beyond that they are closed unanswered.
  int refusalThreads = 4;
  int refusalQueue = 1024;
};

// An HTTP/1.1 server on a port of its own: `respond` answers each request. Every answer,
// refusals too, is an HTTP response with a JSON body where it is an error: a head that is not
// HTTP (400), too long (414, 431) or too slow (408), a body over the limit (413, the rest of the
// body read and dropped within bounds so that the client reads the answer, not a reset), and a
// connection beyond the threads and the queue (503 with Retry-After). Connections are kept alive
// 5 s at most between requests, and every read and write times out after 5 s, so a slow or
// stuck client holds one thread for seconds. The port is bound with SO_REUSEADDR (a restart
// binds while old connections linger in TIME_WAIT) but not SO_REUSEPORT: a port another process
// listens on is a ListenError, never a port shared with it.
class HttpServer {
 public:
  HttpServer(int port, HttpResponder respond, const HttpLimits& limits = {});
  // Stops accepting, ends every connection under way and waits for their threads.
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;

  struct Shared;  // what the connections share with the server

 private:
  std::shared_ptr<Shared> shared_;
  Poco::ThreadPool pool_;
  Poco::ThreadPool refusalPool_;
  Poco::Net::TCPServerDispatcher* refusals_ = nullptr;  // reference-counted: released, not deleted
  std::unique_ptr<Poco::Net::TCPServer> server_;
};

}  // namespace pstrain::app
