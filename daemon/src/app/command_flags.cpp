#include "pstrain/app/command_flags.hpp"

#include <algorithm>

namespace pstrain::app {

std::string takeFlag(std::vector<std::string>& args, const std::string& name) {
  std::string value;
  const auto prefix = name + "=";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) {
      value = args[i + 1];
      args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
      --i;
    } else if (args[i].rfind(prefix, 0) == 0) {
      value = args[i].substr(prefix.size());
      args.erase(args.begin() + long(i));
      --i;
    }
  }
  return value;
}

bool takeSwitch(std::vector<std::string>& args, const std::string& name) {
  auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

}  // namespace pstrain::app
