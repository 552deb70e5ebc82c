#include "pstrain/config/value_parsers.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace pstrain::config {

std::int64_t parseInt(const std::string& text, std::int64_t min, std::int64_t max) {
  std::string allowed = "an integer from " + std::to_string(min) +
                        (max == std::numeric_limits<std::int64_t>::max()
                             ? " up"
                             : " to " + std::to_string(max));
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max) {
    throw InvalidValue{allowed};
  }
  return value;
}

double parseDouble(const std::string& text, double minExclusive, double max) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > minExclusive) || !(value <= max)) {
    std::ostringstream allowed;
    allowed << "a number greater than " << minExclusive << " and at most " << max;
    throw InvalidValue{allowed.str()};
  }
  return value;
}

double parseNonNegative(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0) || !(value <= 86400)) {
    throw InvalidValue{"a number of seconds from 0 to 86400"};
  }
  return value;
}


net::WireEncoding parseEncoding(const std::string& text) {
  if (auto encoding = net::parseWireEncoding(text)) return *encoding;
  throw InvalidValue{"fp32, bf16, q8, q4, q3, q2 or log4"};
}

bool parseBool(const std::string& text) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  throw InvalidValue{"true or false"};
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string nonEmpty(const std::string& text) {
  if (text.empty()) throw InvalidValue{"a non-empty string"};
  return text;
}

std::string plainName(const std::string& text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](unsigned char ch) {
    return std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.';
  });
  if (text.size() > 64 || !plain) {
    throw InvalidValue{"up to 64 letters, digits, '-', '_' or '.'"};
  }
  return text;
}

std::string validOrigin(const std::string& text) {
  const bool printable =
      std::all_of(text.begin(), text.end(), [](unsigned char ch) { return ch > ' ' && ch < 0x7f; });
  if (text.size() > 256 || !printable) {
    throw InvalidValue{"an origin such as https://example.com, or * (no spaces)"};
  }
  return text;
}

std::string validHostPort(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw InvalidValue{"host:port entries"};
  parseInt(text.substr(colon + 1), 1, 65535);
  return text;
}

}  // namespace pstrain::config
