#pragma once

#include <vector>

namespace pstrain::net {

// `count` distinct loopback ports that were free a moment ago, kept from other binds to port 0
// and outgoing connections for a minute; a listener with SO_REUSEADDR can bind them.
std::vector<int> freeLoopbackPorts(int count);

}  // namespace pstrain::net
