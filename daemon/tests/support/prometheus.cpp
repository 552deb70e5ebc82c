#include "support/prometheus.hpp"

#include <regex>
#include <sstream>
#include <stdexcept>

namespace pstrain::testing {

std::map<std::string, double> parsePrometheus(const std::string& text) {
  static const std::regex comment(R"(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+)");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*)?\})?) (NaN|[+-]?Inf|[-+0-9.eE]+))");
  std::map<std::string, double> samples;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    std::smatch match;
    if (std::regex_match(line, comment)) continue;
    if (!std::regex_match(line, match, sample)) {
      throw std::runtime_error("not a Prometheus sample or comment: '" + line + "'");
    }
    samples[match[1]] = std::stod(match[5]);
  }
  return samples;
}

}  // namespace pstrain::testing
