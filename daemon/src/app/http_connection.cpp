#include "pstrain/app/http_connection.hpp"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPChunkedStream.h>
#include <Poco/Net/HTTPFixedLengthStream.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPServerSession.h>
#include <Poco/String.h>
#include <Poco/Timestamp.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "pstrain/app/http_head.hpp"
#include "pstrain/serve/predict_request.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::app {

using Clock = std::chrono::steady_clock;
using serve::RequestError;

// Poco's server session (its buffer, its keep-alive wait) with its bytes in reach of the head's
// reader: HTTPSession::get() cannot tell a byte 0xff from the end of the stream, so the byte is
// taken as unsigned once the buffer is known to hold one.
class HttpConnection::Session : public Poco::Net::HTTPServerSession {
 public:
  using HTTPServerSession::HTTPServerSession;

  // The next byte, or -1 where the client has closed its side. Throws Poco::TimeoutException
  // where none came within the receive timeout.
  int next() {
    if (buffered() == 0) refill();
    if (buffered() == 0) return -1;
    return static_cast<unsigned char>(get());
  }
};

namespace {

// A body arriving slower than this is cut off: it holds one of the server's threads.
constexpr auto kBodyDeadline = std::chrono::seconds(5);

// What a client sends beyond what the server reads is read and dropped before the connection
// closes, up to this much for up to this long: closed with unread bytes, a socket answers them
// with a reset, which takes the answer from a client that sends its whole request before it
// reads (Python's urllib, requests) along with it.
constexpr size_t kDropBytes = size_t(128) << 20;
constexpr auto kDropTime = std::chrono::seconds(5);
// Where the end of what the client sends is not known (a head refused), the connection closes
// once it has been quiet this long: a client that has sent its request waits for the answer.
constexpr auto kLingerQuiet = std::chrono::milliseconds(500);
// The shortest wait for a read of what is dropped (a timeout of 0 would be none).
constexpr auto kDropPoll = std::chrono::milliseconds(1);

Poco::Timespan timespan(Clock::duration duration) {
  return Poco::Timespan(std::chrono::duration_cast<std::chrono::microseconds>(duration).count());
}

// Reads and drops what `read` gives (its count; 0 at the end) within the bounds above.
void dropWithin(const std::function<int(char*, int)>& read) {
  const auto deadline = Clock::now() + kDropTime;
  size_t dropped = 0;
  char buffer[65536];
  while (dropped < kDropBytes && Clock::now() < deadline) {
    const int n = read(buffer, int(sizeof buffer));
    if (n <= 0) return;
    dropped += size_t(n);
  }
}

// A request's body as the responder reads it, and what is left of it once it has answered.
class RequestBody {
 public:
  RequestBody(HttpConnection::Session& session, const Poco::Net::HTTPRequest& request,
              Poco::Net::StreamSocket& socket)
      : request_(request), socket_(socket) {
    // Neither a length nor chunks means no body (RFC 9112, 6.3): reading one would wait for the
    // client to close its side, and answer 408 after the deadline.
    if (request.getChunkedTransferEncoding()) {
      stream_ = std::make_unique<Poco::Net::HTTPChunkedInputStream>(session);
    } else if (request.hasContentLength() && request.getContentLength64() > 0) {
      stream_ = std::make_unique<Poco::Net::HTTPFixedLengthInputStream>(
          session, request.getContentLength64());
    }
    finished_ = !stream_;
  }

  // The whole body, within the size limit and the deadline; none is a 400 at once.
  std::string read() {
    const std::string none =
        "the request has no body: send one, e.g. curl --data-binary @request.json";
    if (!stream_) throw RequestError(400, none);
    const std::string limit =
        "the body is over the limit of " + std::to_string(serve::kMaxBodyBytes) + " bytes";
    if (request_.hasContentLength() &&
        request_.getContentLength64() > Poco::Int64(serve::kMaxBodyBytes)) {
      throw RequestError(413, limit);  // from its length, before a byte of it is read
    }
    continueIfAsked();
    const auto deadline = Clock::now() + kBodyDeadline;
    const std::string late =
        "the body did not arrive within " + std::to_string(kBodyDeadline.count()) + " s";
    std::string body;
    char buffer[65536];
    auto& in = *stream_;
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      body.append(buffer, size_t(in.gcount()));
      if (body.size() > serve::kMaxBodyBytes) throw RequestError(413, limit);
      if (Clock::now() > deadline) {
        broken_ = true;
        throw RequestError(408, late);
      }
    }
    // A read that timed out (the client went quiet) or broke leaves the stream bad.
    broken_ = in.bad();
    if (broken_) throw RequestError(408, late);
    finished_ = true;
    if (body.empty()) throw RequestError(400, none);
    return body;
  }

  // Read to its end, or there was none.
  bool finished() const { return finished_; }

  // Reads what is left of the body and drops it, within bounds, so that closing the connection
  // sends the client an end, not a reset. A client too slow to send it (408) is not waited for.
  void drop() {
    if (finished_ || broken_) return;
    const auto deadline = Clock::now() + kDropTime;
    dropWithin([&](char* buffer, int size) {
      const auto left = std::max<Clock::duration>(deadline - Clock::now(), kDropPoll);
      socket_.setReceiveTimeout(timespan(left));
      stream_->read(buffer, size);
      return int(stream_->gcount());
    });
  }

 private:
  // A client that asked whether to send its body (Expect: 100-continue) is told to, once the
  // body is wanted: one refused from its head alone never sends it.
  void continueIfAsked() {
    if (request_.getVersion() != Poco::Net::HTTPMessage::HTTP_1_1 ||
        Poco::icompare(request_.get("Expect", ""), "100-continue") != 0) {
      return;
    }
    const std::string line = "HTTP/1.1 100 Continue\r\n\r\n";
    socket_.sendBytes(line.data(), int(line.size()));
  }

  const Poco::Net::HTTPRequest& request_;
  Poco::Net::StreamSocket& socket_;
  std::unique_ptr<std::istream> stream_;  // null: no body
  bool finished_ = false;
  bool broken_ = false;
};

void sendAnswer(Poco::Net::StreamSocket& socket, const HttpAnswer& answer, bool withBody,
                bool keepAlive) {
  const auto& reply = answer.reply;
  Poco::Net::HTTPResponse head(Poco::Net::HTTPResponse::HTTPStatus(reply.status));
  head.setVersion(Poco::Net::HTTPMessage::HTTP_1_1);
  head.setDate(Poco::Timestamp());
  if (reply.status != Poco::Net::HTTPResponse::HTTP_NO_CONTENT) {
    head.setContentType(reply.type);
    head.setContentLength64(Poco::Int64(reply.body.size()));
  }
  if (!reply.allow.empty()) head.set("Allow", reply.allow);
  for (const auto& [name, value] : answer.headers) head.set(name, value);
  head.setKeepAlive(keepAlive);
  std::ostringstream text;
  head.write(text);
  if (withBody) text << reply.body;
  const std::string bytes = text.str();
  socket.sendBytes(bytes.data(), int(bytes.size()));
}

// Closes the connection as nginx's lingering close does: the sending side shut down, then what
// the client still sends read and dropped until it closes its side or goes quiet.
void lingeringClose(Poco::Net::StreamSocket& socket) {
  socket.shutdownSend();
  socket.setReceiveTimeout(timespan(kLingerQuiet));
  dropWithin([&](char* buffer, int size) { return socket.receiveBytes(buffer, size); });
}

HttpAnswer respondTo(const HttpResponder& respond, const Poco::Net::HTTPRequest& request,
                     RequestBody& body) {
  try {
    return respond(request, [&body] { return body.read(); });
  } catch (const RequestError& e) {
    return {serve::errorReply(e.status(), e.what())};
  } catch (const std::exception& e) {
    return {serve::errorReply(500, std::string("internal error: ") + e.what())};
  }
}

}  // namespace

bool LiveConnections::add(const Poco::Net::StreamSocket& socket, Entry* entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_) return false;
  *entry = sockets_.insert(sockets_.end(), socket);
  return true;
}

void LiveConnections::remove(Entry entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.erase(entry);
}

bool LiveConnections::stopped() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopped_;
}

void LiveConnections::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  for (auto& socket : sockets_) {
    try {
      socket.shutdown();
    } catch (const Poco::Exception&) {
      // already closed by its client
    }
  }
}

HttpConnection::HttpConnection(const Poco::Net::StreamSocket& socket,
                               std::shared_ptr<HttpServer::Shared> shared,
                               const HttpResponder& respond)
    : TCPServerConnection(socket), shared_(std::move(shared)), respond_(respond) {}

void HttpConnection::run() {
  LiveConnections::Entry entry;
  if (!shared_->live.add(socket(), &entry)) return;
  try {
    socket().setReceiveTimeout(shared_->params->getTimeout());
    socket().setSendTimeout(shared_->params->getTimeout());
    Session session(socket(), shared_->params);
    while (!shared_->live.stopped() && session.hasMoreRequests() && serveRequest(session)) {
    }
  } catch (const Poco::Exception&) {
    // The client went away, or stopped reading its answer: nothing more to tell it.
  }
  shared_->live.remove(entry);
}

bool HttpConnection::serveRequest(Session& session) {
  Poco::Net::HTTPRequest request;
  try {
    if (!readRequestHead([&session] { return session.next(); }, request)) return false;
  } catch (const RequestError& e) {
    refuseHead(e.status(), e.what());
    return false;
  } catch (const Poco::TimeoutException&) {
    refuseHead(408, "the request's head did not arrive within " +
                        std::to_string(shared_->params->getTimeout().totalSeconds()) + " s");
    return false;
  }
  RequestBody body(session, request, socket());
  const HttpAnswer answer = respondTo(respond_, request, body);
  const bool keepAlive = !answer.close && body.finished() && request.getKeepAlive() &&
                         shared_->params->getKeepAlive() && !shared_->live.stopped();
  sendAnswer(socket(), answer, request.getMethod() != Poco::Net::HTTPRequest::HTTP_HEAD,
             keepAlive);
  if (answer.sent) answer.sent();
  if (!keepAlive) {
    socket().shutdownSend();  // the client sees the answer's end at once
    body.drop();
  }
  session.setKeepAlive(keepAlive);
  return keepAlive;
}

void HttpConnection::refuseHead(int status, const std::string& message) {
  sendAnswer(socket(), {serve::errorReply(status, message)}, true, false);
  lingeringClose(socket());
}

}  // namespace pstrain::app
