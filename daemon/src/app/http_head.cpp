#include "pstrain/app/http_head.hpp"

#include <Poco/String.h>

#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/serve/request_error.hpp"

namespace pstrain::app {
namespace {

using serve::RequestError;

// How many empty lines may come before a request line (RFC 9112, 2.2: at least one is ignored).
constexpr int kMaxLeadingEmptyLines = 8;

struct Line {
  std::string text;     // without its CR LF
  bool ended = false;   // the stream ended before its LF
  bool tooLong = false; // longer than the limit; `text` holds the limit's worth
};

const char* const kRequestLineUsage = "the request line is not METHOD TARGET HTTP/1.1";

bool isTokenChar(int ch) {
  return ch > 0 && ch < 0x7f && (std::isalnum(ch) || std::strchr("!#$%&'*+-.^_`|~", ch));
}

// A token (RFC 9110, 5.6.2): a method or a field name.
bool isToken(const std::string& text) {
  if (text.empty()) return false;
  for (const char ch : text) {
    if (!isTokenChar(static_cast<unsigned char>(ch))) return false;
  }
  return true;
}

// One line through its LF, reading no further than `limit` bytes of it. A request line is
// refused at its first byte that no method holds, so bytes that are not HTTP at all (a TLS
// hello) are answered at once, not once a line's worth of them came or the client went quiet.
Line readLine(const std::function<int()>& next, size_t limit, bool requestLine = false) {
  Line line;
  bool inMethod = requestLine;
  for (;;) {
    const int ch = next();
    if (ch < 0) {
      line.ended = true;
      break;
    }
    if (ch == '\n') break;
    if (inMethod && ch != '\r') {
      if (ch == ' ') inMethod = false;
      else if (!isTokenChar(ch)) throw RequestError(400, kRequestLineUsage);
    }
    if (line.text.size() == limit) {
      line.tooLong = true;
      return line;
    }
    line.text += char(ch);
  }
  if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
  return line;
}

bool isTarget(const std::string& text) {
  if (text.empty()) return false;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

// HTTP/<digit>.<digit>, as RFC 9112, 2.3 spells a version.
bool isVersion(const std::string& text) {
  return text.size() == 8 && text.compare(0, 5, "HTTP/") == 0 && std::isdigit(text[5]) &&
         text[6] == '.' && std::isdigit(text[7]);
}

// The request line, checked, into `request`; `line` is longer than its limit where `tooLong`.
void takeRequestLine(const Line& line, Poco::Net::HTTPRequest& request) {
  const std::string usage = kRequestLineUsage;
  const size_t first = line.text.find(' ');
  if (line.tooLong) {
    // Only a method and the start of a target: it is the URI that runs long.
    const bool uri = first != std::string::npos && isToken(line.text.substr(0, first)) &&
                     line.text.find(' ', first + 1) == std::string::npos;
    throw RequestError(uri ? 414 : 400, std::string(uri ? "the request URI" : "the request line") +
                                            " is over the limit of " +
                                            std::to_string(kMaxRequestLineBytes) + " bytes");
  }
  const size_t second = first == std::string::npos ? first : line.text.find(' ', first + 1);
  if (second == std::string::npos || line.ended) throw RequestError(400, usage);
  const std::string method = line.text.substr(0, first);
  const std::string target = line.text.substr(first + 1, second - first - 1);
  const std::string version = line.text.substr(second + 1);
  if (!isToken(method) || !isTarget(target) || !isVersion(version)) {
    throw RequestError(400, usage);
  }
  if (version[5] != '1') {
    throw RequestError(505, version + " is not spoken here: send HTTP/1.1");
  }
  request.setMethod(method);
  request.setURI(target);
  request.setVersion(version);
}

// The header fields through the empty line that ends them, checked, into `request`.
void takeFields(const std::function<int()>& next, Poco::Net::HTTPRequest& request) {
  const std::string tooLarge = "the request's header fields are over the limit of " +
                               std::to_string(kMaxFieldBytes) + " bytes";
  size_t used = 0;
  for (size_t fields = 0;; ++fields) {
    const Line line = readLine(next, kMaxFieldBytes - used);
    if (line.tooLong) throw RequestError(431, tooLarge);
    if (line.ended) throw RequestError(400, "the request's head ended before its empty line");
    if (line.text.empty()) return;
    used += line.text.size() + 2;
    if (fields == kMaxFields) {
      throw RequestError(431, "the request has over " + std::to_string(kMaxFields) +
                                  " header fields");
    }
    const size_t colon = line.text.find(':');
    if (colon == std::string::npos || !isToken(line.text.substr(0, colon))) {
      // A line that starts with a space continues the one before (obs-fold), which RFC 9112,
      // 5.2 lets a server refuse.
      throw RequestError(400, "a header line is not NAME: value");
    }
    request.add(line.text.substr(0, colon), Poco::trim(line.text.substr(colon + 1)));
  }
}

// Every value of the field `name`.
std::vector<std::string> valuesOf(const Poco::Net::HTTPRequest& request, const std::string& name) {
  std::vector<std::string> values;
  for (auto it = request.find(name); it != request.end() && Poco::icompare(it->first, name) == 0;
       ++it) {
    values.push_back(it->second);
  }
  return values;
}

// Where the body ends must be certain: a request that two parties could read apart (request
// smuggling) or whose length is not a number is refused.
void checkFraming(const Poco::Net::HTTPRequest& request) {
  const auto lengths = valuesOf(request, Poco::Net::HTTPMessage::CONTENT_LENGTH);
  for (const auto& length : lengths) {
    const bool digits = !length.empty() && length.size() <= 18 &&
                        length.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      throw RequestError(400, "Content-Length \"" + length + "\" is not a number of bytes");
    }
    if (length != lengths.front()) {
      throw RequestError(400, "Content-Length is given twice, as " + lengths.front() + " and " +
                                  length);
    }
  }
  const auto codings = valuesOf(request, Poco::Net::HTTPMessage::TRANSFER_ENCODING);
  if (codings.empty()) return;
  if (codings.size() > 1 || Poco::icompare(codings.front(), "chunked") != 0) {
    throw RequestError(400, "Transfer-Encoding \"" + codings.back() +
                                "\" is not read here: send the body chunked or with a "
                                "Content-Length");
  }
  if (!lengths.empty()) {
    throw RequestError(400, "both Content-Length and Transfer-Encoding: send one of them");
  }
}

}  // namespace

bool readRequestHead(const std::function<int()>& next, Poco::Net::HTTPRequest& request) {
  Line line;
  for (int empty = 0;; ++empty) {
    line = readLine(next, kMaxRequestLineBytes, true);
    if (line.ended && line.text.empty()) {
      if (empty == 0) return false;  // nothing came: the client closed a kept-alive connection
      throw RequestError(400, "the request's head ended before its request line");
    }
    if (!line.text.empty() || line.tooLong || empty == kMaxLeadingEmptyLines) break;
  }
  takeRequestLine(line, request);
  takeFields(next, request);
  checkFraming(request);
  return true;
}

}  // namespace pstrain::app
