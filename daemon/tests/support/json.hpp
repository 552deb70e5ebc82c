#pragma once

#include <Poco/JSON/Object.h>

#include <string>

namespace pstrain::testing {

// The JSON object `text` holds; throws Poco's exceptions for anything else.
Poco::JSON::Object::Ptr parseObject(const std::string& text);

}  // namespace pstrain::testing
