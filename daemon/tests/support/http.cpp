#include "support/http.hpp"

#include "pstrain/common/error.hpp"

namespace pstrain::testing {

HttpResult httpGet(int port, const std::string& path) {
  try {
    return pstrain::observe::httpRequest("127.0.0.1", port, "GET", path, "", "", 2);
  } catch (const pstrain::PeerError&) {
    return {};  // not listening (yet), or the connection broke
  }
}

HttpResult httpPost(int port, const std::string& path, const std::string& body,
                    const std::string& contentType) {
  try {
    return pstrain::observe::httpRequest("127.0.0.1", port, "POST", path, body, contentType, 10);
  } catch (const pstrain::PeerError&) {
    return {};
  }
}

}  // namespace pstrain::testing
