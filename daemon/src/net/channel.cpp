#include "pstrain/net/channel.hpp"

#include <algorithm>

#include "pstrain/common/error.hpp"

namespace pstrain::net {

void Channel::sendError(const std::string& reason) {
  auto length = static_cast<long>(std::min(reason.size(), kMaxErrorText));
  send(MessageType::kError, std::vector<std::uint8_t>(reason.begin(), reason.begin() + length));
}

const std::vector<std::uint8_t>& Channel::receiveExpected(MessageType type) {
  const auto& frame = receive();
  if (frame.type != type || frame.valueCount != 0) {
    throw ProtocolError("expected " + messageName(type) + " but received " +
                        messageName(frame.type));
  }
  return frame.fields;
}

}  // namespace pstrain::net
