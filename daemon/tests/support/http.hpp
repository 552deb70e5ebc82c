#pragma once

#include <string>

#include "pstrain/observe/status_client.hpp"

namespace pstrain::testing {

// status 0: nothing answered.
using HttpResult = pstrain::observe::HttpReply;

// GET http://127.0.0.1:port/path with a 2 s timeout.
HttpResult httpGet(int port, const std::string& path);

// POST `body` to http://127.0.0.1:port/path with a 10 s timeout.
HttpResult httpPost(int port, const std::string& path, const std::string& body,
                    const std::string& contentType = "application/json");

// Sends `request` as it is (a request line, header fields and any body) on a new connection to
// 127.0.0.1:port; with `trickle`, then a byte more every 200 ms until the server answers or
// closes. Returns every byte the server sent until it closed its side, within 20 s (empty:
// nothing, or a reset before anything).
std::string rawRequest(int port, const std::string& request, bool trickle = false);

}  // namespace pstrain::testing
