#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace pstrain::net {

// Challenge-response over a shared key (HMAC-SHA256): each side sends a fresh nonce and proves
// the key over both nonces, so a recorded handshake cannot be replayed and neither side can be
// impersonated without the key. The key never crosses the wire.
using Nonce = std::array<std::uint8_t, 16>;
using Digest = std::array<std::uint8_t, 32>;

Nonce randomNonce();

// HMAC-SHA256 over `role`, then `first` and `second`: the ps proves with role "ps" and the
// worker's nonce first; the worker with role "worker" and the ps's nonce first.
Digest prove(const std::string& key, const std::string& role, const Nonce& first,
             const Nonce& second);

// Compares in time independent of where the digests differ.
bool sameDigest(const Digest& a, const Digest& b);

// The shared key from a file (a mounted Secret), without a trailing newline; "" (the key of
// everyone: no authentication) when `path` is empty. Throws ConfigError when unreadable or empty.
std::string loadAuthKey(const std::string& path);

}  // namespace pstrain::net
