#pragma once

#include <Poco/Net/HTTPRequest.h>

#include <cstddef>
#include <functional>

namespace pstrain::app {

// What a request's head may hold. A request line longer than kMaxRequestLineBytes is refused
// with 414 where its URI is what runs long (else 400); header fields over kMaxFieldBytes in all,
// or more than kMaxFields of them, with 431. nginx's defaults are of the same order (8 KB a line).
constexpr size_t kMaxRequestLineBytes = 8192;
constexpr size_t kMaxFieldBytes = 16384;
constexpr size_t kMaxFields = 100;

// Reads one request's head, its request line and header fields through the empty line, from
// `next` (the next byte, or a negative number where the stream ends), into `request`, and
// checks it as RFC 9112 asks: `METHOD TARGET HTTP/1.x`, fields `Name: value`, a Content-Length
// of digits (repeated only with the same value), no Transfer-Encoding but chunked and not beside
// a Content-Length, so that the body's end is never in doubt. Returns false where the stream ends
// before the head's first byte (a kept-alive connection the client closed). Throws
// serve::RequestError with the status to answer (400, 414, 431, 505) and one line saying why.
bool readRequestHead(const std::function<int()>& next, Poco::Net::HTTPRequest& request);

}  // namespace pstrain::app
