#pragma once

#include <string>
#include <vector>

namespace pstrain::app {

// Flags of one command (`pstrain local`, `pstrain single`) that are not configuration keys: each
// is taken out of `args` before the rest is read as the configuration.

// Pulls every `name VALUE` and `name=VALUE` out of `args`; returns the last VALUE, or "".
std::string takeFlag(std::vector<std::string>& args, const std::string& name);

// Pulls a flag without a value out of `args`; returns whether it was there.
bool takeSwitch(std::vector<std::string>& args, const std::string& name);

}  // namespace pstrain::app
