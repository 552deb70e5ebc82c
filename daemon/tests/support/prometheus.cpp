#include "support/prometheus.hpp"

#include <algorithm>
#include <regex>
#include <vector>
#include <sstream>
#include <stdexcept>

namespace pstrain::testing {
namespace {

// "name{b="1",a="2"}" as "name{a="2",b="1"}": the order of labels carries no meaning.
std::string canonical(const std::string& sample) {
  const auto open = sample.find('{');
  if (open == std::string::npos) return sample;
  static const std::regex label(R"([a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")");
  const std::string labels = sample.substr(open);
  std::vector<std::string> sorted;
  for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it) {
    sorted.push_back(it->str());
  }
  std::sort(sorted.begin(), sorted.end());
  std::string out = sample.substr(0, open) + "{";
  for (size_t i = 0; i < sorted.size(); ++i) out += (i ? "," : "") + sorted[i];
  return out + "}";
}

}  // namespace

std::map<std::string, double> parsePrometheus(const std::string& text) {
  static const std::regex comment(R"(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+)");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*)?\})?) (NaN|Nan|[+-]?Inf|[-+0-9.eE]+))");
  std::map<std::string, double> samples;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    std::smatch match;
    if (std::regex_match(line, comment)) continue;
    if (!std::regex_match(line, match, sample)) {
      throw std::runtime_error("not a Prometheus sample or comment: '" + line + "'");
    }
    samples[canonical(match[1])] = std::stod(match[5]);
  }
  return samples;
}

}  // namespace pstrain::testing
