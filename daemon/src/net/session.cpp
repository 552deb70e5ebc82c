#include "pstrain/net/session.hpp"

#include <Poco/Exception.h>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::net {

void reject(const Rejected& rejected, const std::string& address, const std::string& reason) {
  if (rejected) rejected(address, reason);
}

void runSession(Channel& channel, const Serve& serve, const std::string& loggerName,
                const Rejected& rejected) {
  auto logger = log::logger(loggerName);
  const std::string peer = channel.peerName();
  try {
    try {
      serve(channel);
    } catch (const ProtocolError& e) {
      reject(rejected, peer, e.what());
      // Tell a confused peer why before closing; it may not be listening any more.
      channel.sendError(e.what());
    }
  } catch (const PeerError& e) {
    logger->info("connection from {} ended: {}", peer, e.what());
  } catch (const Poco::Exception& e) {
    logger->warn("connection from {} failed: {}", peer, e.displayText());
  } catch (const std::exception& e) {
    logger->error("connection from {} failed: {}", peer, e.what());
  }
}

}  // namespace pstrain::net
