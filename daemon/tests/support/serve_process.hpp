#pragma once

#include <memory>
#include <string>

#include "pstrain/app/child_process.hpp"
#include "support/idx_files.hpp"

namespace pstrain::testing {

// `pstrain serve` of `model` on a free port, up once its /healthz answers (else the constructor
// throws, failing the test); stopped at scope end.
struct ServeProcess {
  explicit ServeProcess(const std::string& model);
  ~ServeProcess();

  TempDir dir;  // its stdout and stderr
  int port;
  std::unique_ptr<pstrain::app::ChildProcess> process;
};

}  // namespace pstrain::testing
