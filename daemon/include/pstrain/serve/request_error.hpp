#pragma once

#include <string>

#include "pstrain/common/error.hpp"

namespace pstrain::serve {

// A request the server refuses: the HTTP status to answer with and one line saying why.
class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

}  // namespace pstrain::serve
