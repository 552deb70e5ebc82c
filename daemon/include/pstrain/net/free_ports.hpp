#pragma once

#include <vector>

namespace pstrain::net {

// `count` distinct loopback ports that were free a moment ago (bound to port 0, then released).
std::vector<int> freeLoopbackPorts(int count);

}  // namespace pstrain::net
