#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "pstrain/net/wire_encoding.hpp"

namespace pstrain::config {

// The parsers of the configuration's values, one per kind of value a key takes.

// Thrown by a value parser; what() is what the key allows. load() turns it into a ConfigError
// naming the key, the value and where it came from.
class InvalidValue : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An integer from `min` to `max`.
std::int64_t parseInt(const std::string& text, std::int64_t min, std::int64_t max);
// A number in (minExclusive, max].
double parseDouble(const std::string& text, double minExclusive, double max);
// Seconds from 0 to a day.
double parseNonNegative(const std::string& text);
net::WireEncoding parseEncoding(const std::string& text);
bool parseBool(const std::string& text);
// "a,b,,c": the non-empty items.
std::vector<std::string> splitList(const std::string& text);
std::string nonEmpty(const std::string& text);
// A run id appears in logs and records, a model name in URL paths, so they stay short and plain.
std::string plainName(const std::string& text);
// A CORS origin goes into a response header as it is: no spaces or control characters.
std::string validOrigin(const std::string& text);
// "host:port".
std::string validHostPort(const std::string& text);

// One of a few named values; the allowed text lists the names: "ps or worker".
template <typename T>
T parseChoice(const std::string& text, std::initializer_list<std::pair<const char*, T>> choices) {
  std::string allowed;
  for (const auto& [name, value] : choices) {
    if (text == name) return value;
    allowed += (allowed.empty() ? "" : " or ") + std::string(name);
  }
  throw InvalidValue{allowed};
}

}  // namespace pstrain::config
