#include "support/serve_process.hpp"

#include <stdexcept>

#include "pstrain/net/free_ports.hpp"
#include "support/http.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

namespace pstrain::testing {

ServeProcess::ServeProcess(const std::string& model) : port(pstrain::net::freeLoopbackPorts(1)[0]) {
  process = std::make_unique<pstrain::app::ChildProcess>(
      std::vector<std::string>{pstrainBinary(), "serve", "--model", model, "--http-port",
                               std::to_string(port)},
      dir.file("serve.out"), dir.file("serve.err"));
  if (!waitFor([&] { return httpGet(port, "/healthz").status == 200; }, std::chrono::seconds(20))) {
    throw std::runtime_error("pstrain serve --model " + model +
                             " did not answer /healthz within 20 s");
  }
}

ServeProcess::~ServeProcess() { process->stop(std::chrono::milliseconds(5000)); }

}  // namespace pstrain::testing
