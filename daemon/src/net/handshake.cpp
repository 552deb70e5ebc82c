#include "pstrain/net/handshake.hpp"

#include "pstrain/common/error.hpp"
#include "pstrain/net/auth.hpp"

namespace pstrain::net {

size_t helloFrameBytes() { return kHeaderSize + fixedFieldsSize(MessageType::kHello); }

Welcome introduce(Channel& channel, Hello hello, const std::string& key) {
  hello.nonce = randomNonce();
  channel.send(MessageType::kHello, encode(hello));
  auto challenge = decodeChallenge(channel.receiveExpected(MessageType::kChallenge));
  if (!sameDigest(challenge.proof, prove(key, "ps", hello.nonce, challenge.nonce))) {
    throw ProtocolError("ps " + channel.peerName() +
                        " failed authentication: it does not hold this run's key");
  }
  channel.send(MessageType::kProof,
               encode(Proof{prove(key, "worker", challenge.nonce, hello.nonce)}));
  return decodeWelcome(channel.receiveExpected(MessageType::kWelcome));
}

Hello admit(Channel& channel, const std::string& key,
            const std::function<void(const Hello&)>& check) {
  auto hello = decodeHello(channel.receiveExpected(MessageType::kHello));
  check(hello);
  auto nonce = randomNonce();
  channel.send(MessageType::kChallenge,
               encode(Challenge{nonce, prove(key, "ps", hello.nonce, nonce)}));
  auto proof = decodeProof(channel.receiveExpected(MessageType::kProof));
  if (!sameDigest(proof.proof, prove(key, "worker", nonce, hello.nonce))) {
    throw ProtocolError(roleName(hello.role) + " " + std::to_string(hello.index) +
                        " failed authentication: it does not hold this run's key");
  }
  return hello;
}

}  // namespace pstrain::net
