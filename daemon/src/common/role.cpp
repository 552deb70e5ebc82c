#include "pstrain/common/role.hpp"

namespace pstrain {

std::string roleName(Role role) { return role == Role::kPs ? "ps" : "worker"; }

}  // namespace pstrain
