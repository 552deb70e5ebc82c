#pragma once

#include <map>
#include <string>

namespace pstrain::testing {

// Parses Prometheus text exposition into "name{labels}" -> value, the labels sorted by name,
// throwing std::runtime_error on any line that is neither a comment (# HELP / # TYPE) nor a
// well-formed sample.
std::map<std::string, double> parsePrometheus(const std::string& text);

}  // namespace pstrain::testing
