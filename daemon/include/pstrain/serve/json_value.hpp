#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pstrain::serve {

// A JSON document from a request body, kept compact: an array of numbers holds them in one
// vector of doubles, so the 2.5 million pixel values an 8 MiB body can carry cost 20 MB, not a
// node each.
class JsonValue {
 public:
  enum class Type : std::uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  explicit JsonValue(Type type) : type_(type) {}
  static JsonValue number(double value);
  static JsonValue boolean(bool value);
  static JsonValue string(std::string text);

  Type type() const { return type_; }
  bool isArray() const { return type_ == Type::kArray; }
  bool isObject() const { return type_ == Type::kObject; }
  double asNumber() const { return number_; }
  const std::string& asString() const { return text_; }

  // An array's elements: numbers() while every element is a number, else items().
  size_t size() const { return numbers_.empty() ? items_.size() : numbers_.size(); }
  const std::vector<double>& numbers() const { return numbers_; }
  const std::vector<JsonValue>& items() const { return items_; }

  // An object's member, or nullptr.
  const JsonValue* find(const std::string& key) const;

  // A short rendering for error messages: the value, or [...] and {...}.
  std::string describe() const;

  // Building, for parseJson.
  JsonValue& append(JsonValue value);                   // to an array
  void appendNumber(double value);                      // to an array
  JsonValue& insert(std::string key, JsonValue value);  // to an object

 private:
  Type type_ = Type::kNull;
  double number_ = 0;  // a number; a boolean as 0 or 1
  std::string text_;   // a string
  std::vector<double> numbers_;
  std::vector<JsonValue> items_;   // an array's elements, or an object's member values
  std::vector<std::string> keys_;  // an object's member names
};

// Parses a request body (nesting up to 128 deep); throws RequestError 400 with the parser's
// reason when it is not JSON.
JsonValue parseJson(const std::string& body);

}  // namespace pstrain::serve
