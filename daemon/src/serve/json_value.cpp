#include "pstrain/serve/json_value.hpp"

#include <Poco/JSON/Handler.h>
#include <Poco/JSON/JSONException.h>
#include <Poco/JSON/Parser.h>

#include <cstdio>

#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

// Builds a JsonValue from the events of Poco's JSON parser, without its per-value Var nodes.
class CompactHandler : public Poco::JSON::Handler {
 public:
  JsonValue take() { return std::move(root_); }

  void reset() override {
    root_ = JsonValue();
    open_.clear();
    key_.clear();
  }
  void startObject() override { open_.push_back(&add(JsonValue(JsonValue::Type::kObject))); }
  void endObject() override { open_.pop_back(); }
  void startArray() override { open_.push_back(&add(JsonValue(JsonValue::Type::kArray))); }
  void endArray() override { open_.pop_back(); }
  void key(const std::string& k) override { key_ = k; }
  void null() override { add(JsonValue()); }
  void value(int v) override { addNumber(v); }
  void value(unsigned v) override { addNumber(v); }
  void value(Poco::Int64 v) override { addNumber(double(v)); }
  void value(Poco::UInt64 v) override { addNumber(double(v)); }
  void value(const std::string& v) override { add(JsonValue::string(v)); }
  void value(double d) override { addNumber(d); }
  void value(bool b) override { add(JsonValue::boolean(b)); }

 private:
  JsonValue& add(JsonValue value) {
    if (open_.empty()) return root_ = std::move(value);
    JsonValue& parent = *open_.back();
    return parent.isArray() ? parent.append(std::move(value))
                            : parent.insert(std::move(key_), std::move(value));
  }

  void addNumber(double v) {
    if (!open_.empty() && open_.back()->isArray()) {
      open_.back()->appendNumber(v);
    } else {
      add(JsonValue::number(v));
    }
  }

  JsonValue root_;
  std::vector<JsonValue*> open_;  // the arrays and objects being filled, innermost last
  std::string key_;
};

}  // namespace

JsonValue JsonValue::number(double value) {
  JsonValue v(Type::kNumber);
  v.number_ = value;
  return v;
}

JsonValue JsonValue::boolean(bool value) {
  JsonValue v(Type::kBool);
  v.number_ = value ? 1 : 0;
  return v;
}

JsonValue JsonValue::string(std::string text) {
  JsonValue v(Type::kString);
  v.text_ = std::move(text);
  return v;
}

const JsonValue* JsonValue::find(const std::string& key) const {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

std::string JsonValue::describe() const {
  switch (type_) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return number_ != 0 ? "true" : "false";
    case Type::kNumber: {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", number_);
      return text;
    }
    case Type::kString:
      return "\"" + text_.substr(0, 40) + (text_.size() > 40 ? "...\"" : "\"");
    case Type::kArray:
      return "[...]";
    case Type::kObject:
      return "{...}";
  }
  return "";
}

JsonValue& JsonValue::append(JsonValue value) {
  // The numbers so far become elements of their own: this array is not all numbers.
  for (double n : numbers_) items_.push_back(number(n));
  numbers_.clear();
  items_.push_back(std::move(value));
  return items_.back();
}

void JsonValue::appendNumber(double value) {
  if (items_.empty()) {
    numbers_.push_back(value);
  } else {
    items_.push_back(number(value));
  }
}

JsonValue& JsonValue::insert(std::string key, JsonValue value) {
  keys_.push_back(std::move(key));
  items_.push_back(std::move(value));
  return items_.back();
}

JsonValue parseJson(const std::string& body) {
  Poco::SharedPtr<CompactHandler> handler = new CompactHandler;
  try {
    Poco::JSON::Parser parser(handler);
    parser.parse(body);
  } catch (const Poco::Exception& e) {
    throw RequestError(400, "the body is not JSON (" + e.displayText() + ")");
  }
  return handler->take();
}

}  // namespace pstrain::serve
