#include "support/json.hpp"

#include <Poco/JSON/Parser.h>

namespace pstrain::testing {

Poco::JSON::Object::Ptr parseObject(const std::string& text) {
  return Poco::JSON::Parser().parse(text).extract<Poco::JSON::Object::Ptr>();
}

}  // namespace pstrain::testing
