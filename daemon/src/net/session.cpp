#include "pstrain/net/session.hpp"

#include <Poco/Exception.h>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::net {

void runSession(Channel& channel, const Serve& serve, const std::string& loggerName,
                std::atomic<std::uint64_t>* rejected) {
  auto logger = log::logger(loggerName);
  const std::string peer = channel.peerName();
  try {
    try {
      serve(channel);
    } catch (const ProtocolError& e) {
      if (rejected) ++*rejected;
      // Tell a confused peer why before closing; it may not be listening any more.
      logger->warn("closing connection from {}: {}", peer, e.what());
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
