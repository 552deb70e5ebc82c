#include "pstrain/net/session.hpp"

#include <Poco/Exception.h>

#include "pstrain/common/error.hpp"

namespace pstrain::net {

SessionObserver& unobserved() {
  class Unobserved : public SessionObserver {
    void rejected(const std::string&, const std::string&) override {}
    void sessionEnded(const std::string&, const std::string&, bool) override {}
    void listenerFailed(const std::string&) override {}
  };
  static Unobserved nobody;
  return nobody;
}

void runSession(Channel& channel, const Serve& serve, SessionObserver* observer) {
  const std::string peer = channel.peerName();
  auto ended = [&](const std::string& reason, bool failed) {
    if (observer) observer->sessionEnded(peer, reason, failed);
  };
  try {
    try {
      serve(channel);
    } catch (const ProtocolError& e) {
      if (observer) observer->rejected(peer, e.what());
      // Tell a confused peer why before closing; it may not be listening any more.
      channel.sendError(e.what());
    }
  } catch (const PeerError& e) {
    ended(e.what(), false);
  } catch (const Poco::Exception& e) {
    ended(e.displayText(), true);
  } catch (const std::exception& e) {
    ended(e.what(), true);
  }
}

}  // namespace pstrain::net
