// `fault_proxy`: the test support's FaultProxy as a process, for runs of `pstrain local
// --ps-fronts` (tests/bench/latency.sh) and by hand:
//
//   fault_proxy --listen PORT --target HOST:PORT [--latency-ms MS] [--jitter-ms MS] [--seed N]
//
// Forwards until SIGTERM or SIGINT; says "listening on 127.0.0.1:PORT" once it does.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "support/fault_proxy.hpp"

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags{{"--latency-ms", "0"}, {"--jitter-ms", "0"},
                                           {"--seed", "1"}};
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  if (argc % 2 == 0 || !flags.count("--listen") || !flags.count("--target") ||
      flags.size() != 5) {
    std::fprintf(stderr, "usage: fault_proxy --listen PORT --target HOST:PORT [--latency-ms MS] "
                         "[--jitter-ms MS] [--seed N]\n");
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the proxy's threads, which inherit it
  try {
    const auto& target = flags["--target"];
    const auto colon = target.rfind(':');
    pstrain::testing::FaultProxy proxy(
        {target.substr(0, colon), std::stoi(target.substr(colon + 1))},
        std::stoull(flags["--seed"]), std::stoi(flags["--listen"]));
    const auto ms = [](const std::string& value) {
      return std::chrono::microseconds(std::llround(std::stod(value) * 1000));
    };
    proxy.setLatency(ms(flags["--latency-ms"]), ms(flags["--jitter-ms"]));
    std::printf("listening on 127.0.0.1:%d\n", proxy.endpoint().port);
    std::fflush(stdout);
    int signal = 0;
    sigwait(&stop, &signal);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fault_proxy: %s\n", e.what());
    return 1;
  }
  return 0;
}
