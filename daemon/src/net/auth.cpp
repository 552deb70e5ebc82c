#include "pstrain/net/auth.hpp"

#include <Poco/HMACEngine.h>
#include <Poco/RandomStream.h>
#include <Poco/SHA2Engine.h>

#include <fstream>
#include <iterator>

#include "pstrain/common/error.hpp"

namespace pstrain::net {
namespace {

// SHA-256 with the block and digest sizes HMACEngine asks of its engine.
class Sha256 : public Poco::SHA2Engine {
 public:
  enum { BLOCK_SIZE = 64, DIGEST_SIZE = 32 };
  Sha256() : Poco::SHA2Engine(Poco::SHA2Engine::SHA_256) {}
};

}  // namespace

Nonce randomNonce() {
  Nonce nonce;
  Poco::RandomInputStream random;
  random.read(reinterpret_cast<char*>(nonce.data()), std::streamsize(nonce.size()));
  return nonce;
}

Digest prove(const std::string& key, const std::string& role, const Nonce& first,
             const Nonce& second) {
  Poco::HMACEngine<Sha256> hmac(key);
  hmac.update(role);
  hmac.update(first.data(), first.size());
  hmac.update(second.data(), second.size());
  const auto& bytes = hmac.digest();
  Digest digest;
  std::copy(bytes.begin(), bytes.end(), digest.begin());
  return digest;
}

bool sameDigest(const Digest& a, const Digest& b) {
  std::uint8_t difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= std::uint8_t(a[i] ^ b[i]);
  return difference == 0;
}

std::string loadAuthKey(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("authKeyFile " + path + " cannot be read");
  std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.empty()) throw ConfigError("authKeyFile " + path + " is empty");
  return key;
}

}  // namespace pstrain::net
