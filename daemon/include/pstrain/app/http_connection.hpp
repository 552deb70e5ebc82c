#pragma once

#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/Net/TCPServerConnection.h>

#include <list>
#include <memory>
#include <mutex>

#include "pstrain/app/http_server.hpp"

namespace pstrain::app {

// The connections a server has open, so that stopping it ends them.
class LiveConnections {
 public:
  using Entry = std::list<Poco::Net::StreamSocket>::iterator;

  // Takes `socket` in as `*entry`; false, and nothing taken, once stopped.
  bool add(const Poco::Net::StreamSocket& socket, Entry* entry);
  void remove(Entry entry);
  bool stopped();
  // From now on takes nothing in, and shuts every connection down (a read under way ends).
  void stop();

 private:
  std::mutex mutex_;
  bool stopped_ = false;
  std::list<Poco::Net::StreamSocket> sockets_;
};

struct HttpServer::Shared {
  Poco::Net::HTTPServerParams::Ptr params;  // timeouts and keep-alive
  HttpResponder respond;                    // what the server answers
  HttpResponder refuse;                     // what it answers when it has no room (503)
  LiveConnections live;
};

// One client connection: its requests, one after another while it is kept alive, each head
// read and checked (readRequestHead), answered by `respond`, its body read only as the
// responder asks, and what it leaves unread dropped within bounds before the connection closes.
class HttpConnection : public Poco::Net::TCPServerConnection {
 public:
  HttpConnection(const Poco::Net::StreamSocket& socket, std::shared_ptr<HttpServer::Shared> shared,
                 const HttpResponder& respond);

  void run() override;

  class Session;  // Poco's server session, with its bytes in reach

 private:
  bool serveRequest(Session& session);  // whether the connection goes on
  void refuseHead(int status, const std::string& message);

  const std::shared_ptr<HttpServer::Shared> shared_;
  const HttpResponder& respond_;
};

}  // namespace pstrain::app
