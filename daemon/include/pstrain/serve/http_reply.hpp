#pragma once

#include <string>

namespace pstrain::serve {

// An answer to an HTTP request: its status, content type and body.
struct HttpReply {
  int status = 200;
  std::string type = "application/json";
  std::string body;
  // A 405's Allow header: the methods the path does take. Initialised, so the replies
  // written as {status, type, body} need not name it.
  std::string allow = {};
};

// A JSON answer (`body` is JSON text).
inline HttpReply jsonReply(int status, const std::string& body) {
  return {status, "application/json", body + "\n"};
}

// A JSON string literal of `text`, quoted and escaped.
std::string jsonString(const std::string& text);

// A refusal as KServe, TF Serving and this server's other routes answer one: {"error": "..."}.
HttpReply errorReply(int status, const std::string& message);

// A 405 for a path that takes only the methods `allow` ("GET, HEAD"), as RFC 9110 asks.
inline HttpReply methodNotAllowed(const std::string& allow, const std::string& message) {
  HttpReply reply = errorReply(405, message);
  reply.allow = allow;
  return reply;
}

}  // namespace pstrain::serve
