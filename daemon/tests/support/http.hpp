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

}  // namespace pstrain::testing
