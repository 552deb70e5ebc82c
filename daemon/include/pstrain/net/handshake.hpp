#pragma once

#include <functional>
#include <string>

#include "pstrain/net/channel.hpp"
#include "pstrain/net/message.hpp"

namespace pstrain::net {

// The opening of every worker-ps channel, both sides in one place:
//   worker: hello (who, which model and run, a nonce)
//   ps:     challenge (its nonce, its proof of the shared key)   or an error frame: refused
//   worker: proof (its proof of the key)
//   ps:     welcome (the shard it serves, the global step)
// Each side proves the key over both nonces (see auth.hpp), so neither can be impersonated and
// a recorded handshake cannot be replayed.

// The bytes of the frame a worker opens with: a listener waits for that many before it spends
// a thread on a connection.
size_t helloFrameBytes();

// Worker side: says `hello` (its nonce is made here), checks the ps's proof of `key`, proves
// its own and returns the ps's welcome. Throws ProtocolError if the ps does not hold the key,
// RefusedError if the ps refuses, UnreachableError if the channel fails.
Welcome introduce(Channel& channel, Hello hello, const std::string& key);

// Ps side: takes the hello, lets `check` refuse it (by throwing ProtocolError), then challenges
// the worker to prove `key`; throws ProtocolError if it cannot. The caller sends the welcome.
Hello admit(Channel& channel, const std::string& key,
            const std::function<void(const Hello&)>& check);

}  // namespace pstrain::net
