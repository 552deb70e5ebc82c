#define BOOST_TEST_MODULE auth
#include <boost/test/unit_test.hpp>

#include "pstrain/common/error.hpp"
#include "pstrain/net/auth.hpp"
#include "support/idx_files.hpp"

using namespace pstrain::net;

BOOST_AUTO_TEST_CASE(proofs_depend_on_key_role_and_both_nonces) {
  auto a = randomNonce();
  auto b = randomNonce();
  BOOST_TEST((a != b));
  auto proof = prove("secret", "worker", a, b);
  BOOST_TEST(sameDigest(proof, prove("secret", "worker", a, b)));
  BOOST_TEST(!sameDigest(proof, prove("secret2", "worker", a, b)));
  BOOST_TEST(!sameDigest(proof, prove("secret", "ps", a, b)));
  BOOST_TEST(!sameDigest(proof, prove("secret", "worker", b, a)));
}

BOOST_AUTO_TEST_CASE(proof_is_hmac_sha256_of_role_and_nonces) {
  // Expected value computed independently (Python's hmac module): HMAC-SHA256 with key "Jefe"
  // over "what do ya want for nothing?" followed by two all-zero 16-byte nonces.
  auto digest = prove("Jefe", "what do ya want for nothing?", Nonce{}, Nonce{});
  std::string hex;
  for (auto byte : digest) hex += "0123456789abcdef"[byte >> 4], hex += "0123456789abcdef"[byte & 15];
  BOOST_TEST(hex == "32f1aabea28597a6c5363a7c30068534bd8e483898ed42abc3159e7d5b93878c");
}

BOOST_AUTO_TEST_CASE(key_file_is_read_without_trailing_newline) {
  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("key"), "s3cret\n");
  BOOST_TEST(loadAuthKey(dir.file("key")) == "s3cret");
  BOOST_TEST(loadAuthKey("").empty());
  pstrain::testing::writeFile(dir.file("empty"), "\n");
  BOOST_CHECK_THROW(loadAuthKey(dir.file("empty")), pstrain::ConfigError);
  BOOST_CHECK_THROW(loadAuthKey(dir.file("missing")), pstrain::ConfigError);
}
