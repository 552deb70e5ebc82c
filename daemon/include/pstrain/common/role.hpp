#pragma once

#include <string>

namespace pstrain {

// What a process of a run is: configured (config/), carried in a hello (net/), reported (observe/).
enum class Role { kPs, kWorker };

// "ps" or "worker".
std::string roleName(Role role);

}  // namespace pstrain
