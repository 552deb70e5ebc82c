// Measures what one ps absorbs: N clients that only push (no compute) against a running
// `pstrain run --role ps`, next to two floors measured here on the same machine:
// - the memory-traffic floor: the bytes a push must move through memory (per parameter: the
//   socket read's copy 8, Adam 28 (gradient, both moments and the parameter read, the moments
//   and the next parameters written, straight into the answer), the socket write's copy 8:
//   44 bytes) at the bandwidth of a large memcpy;
// - the in-cache floor: the same copies and the optimizer step as a loop in this process, the
//   working set in cache, without network, locks or system calls.
// With --ps-pid, also the ps's CPU time over the pushing, so a client side that saturates its
// own core (two cores: one for the ps, one for the clients) does not hide the ps's capacity.
//
//   ps_capacity --clients N --seconds S [--ps-pid PID] [pstrain flags: --ps-hosts, --workers,
//               --hidden-units, --train-steps, --auth-key-file ... exactly as given to the ps]
//
// Prints one JSON object.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/app/role_options.hpp"
#include "pstrain/app/worker_reporter.hpp"
#include "pstrain/net/dialer.hpp"
#include "pstrain/net/endpoint.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/ps/optimizer.hpp"

using namespace pstrain;

namespace {

// Takes `--name VALUE` out of args.
std::string takeFlag(std::vector<std::string>& args, const std::string& name) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == name) {
      auto value = args[i + 1];
      args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
      return value;
    }
  }
  throw ConfigError("missing " + name);
}

constexpr double kBytesPerParameter = 44;

// Bytes per second through memory: the best of a few copies of a buffer far larger than caches.
double memoryBandwidth() {
  const size_t bytes = size_t(256) << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = 0;
  for (int i = 0; i < 4; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    best = std::max(best, 2.0 * double(bytes) / secondsSince(start));  // read and written
  }
  return best;
}

// CPU seconds a process has used (user and system), from /proc.
double cpuSeconds(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / double(sysconf(_SC_CLK_TCK));
}

double inCachePushesPerSecond(size_t count, const config::Config& settings) {
  std::vector<float> wire(count, 1e-3f), gradient(count), params(count, 0.1f), next(count),
      sent(count);
  auto optimizer = ps::makeOptimizer(settings.optimizer, count, settings.learningRate);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t pushes = 0;
  while (secondsSince(start) < 1.0) {
    std::memcpy(gradient.data(), wire.data(), count * sizeof(float));   // socket read
    optimizer->apply(params.data(), next.data(), gradient.data(), count);  // into the answer
    std::memcpy(sent.data(), next.data(), count * sizeof(float));          // socket write
    params.swap(next);
    ++pushes;
  }
  return double(pushes) / secondsSince(start);
}

// Microseconds per optimizer step over `count` parameters, with `together` steps applied in one
// call as a ps applies pushes that arrive together: the kernel's own speed, which a compiler's
// loop transformation once made five times slower for combined steps than for one.
double optimizerMicrosPerStep(size_t count, const config::Config& settings, size_t together) {
  std::vector<std::vector<float>> gradients(together, std::vector<float>(count, 1e-3f));
  std::vector<const float*> steps;
  for (const auto& gradient : gradients) steps.push_back(gradient.data());
  std::vector<float> params(count, 0.1f);
  auto optimizer = ps::makeOptimizer(settings.optimizer, count, settings.learningRate);
  const auto start = std::chrono::steady_clock::now();
  size_t applied = 0;
  while (secondsSince(start) < 0.5) {
    optimizer->beginSteps(together);
    optimizer->applySteps(params.data(), params.data(), steps.data(), 0, count);
    applied += together;
  }
  return 1e6 * secondsSince(start) / double(applied);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const int clients = std::stoi(takeFlag(args, "--clients"));
    const double seconds = std::stod(takeFlag(args, "--seconds"));
    std::string psPid;
    if (std::find(args.begin(), args.end(), "--ps-pid") != args.end()) {
      psPid = takeFlag(args, "--ps-pid");
    }
    const auto settings = config::load({args, {}});
    const auto parameters = model::Layout::mnist(settings.hiddenUnits).parameterCount();
    std::vector<net::Endpoint> ps;
    for (const auto& host : settings.psHosts) ps.push_back(net::parseEndpoint(host));

    observe::Events events("worker", 0);  // kept in memory only
    std::vector<std::unique_ptr<observe::Progress>> progress;
    std::vector<std::unique_ptr<observe::Meters>> meters;
    std::vector<std::unique_ptr<app::WorkerReporter>> reporters;
    std::vector<std::unique_ptr<ps::Client>> links;
    for (int i = 0; i < clients; ++i) {
      progress.push_back(std::make_unique<observe::Progress>(Role::kWorker, i, 0, events));
      meters.push_back(std::make_unique<observe::Meters>(Role::kWorker, i));
      reporters.push_back(
          std::make_unique<app::WorkerReporter>(i, 1, *progress.back(), *meters.back(), events));
      links.push_back(std::make_unique<ps::Client>(
          app::clientOptions(settings, i, ps), net::tcpDialer(nullptr), *reporters.back(),
          app::recutCoordinator(i, *reporters.back())));
      links.back()->connect();
    }
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> pushes{0};
    std::vector<std::thread> threads;
    const double psCpuBefore = psPid.empty() ? 0 : cpuSeconds(psPid);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < clients; ++i) {
      threads.emplace_back([&, i] {
        std::vector<float> gradient(parameters, 1e-3f), params(parameters);
        std::uint64_t step = 0;
        while (!stop) {
          links[size_t(i)]->pushPull(ps::Gradient(gradient.data()), params.data(), ++step, 0);
          ++pushes;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& thread : threads) thread.join();
    const double elapsed = secondsSince(start);
    const double psCpu = psPid.empty() ? 0 : cpuSeconds(psPid) - psCpuBefore;
    const size_t shard = parameters / ps.size();
    std::printf("{\"clients\": %d, \"parameters\": %zu, \"pushes_per_s\": %.1f, "
                "\"ps_cpu_share\": %.3f, \"pushes_per_ps_cpu_s\": %.1f, "
                "\"memory_floor_pushes_per_s\": %.1f, \"in_cache_floor_pushes_per_s\": %.1f, "
                "\"optimizer_us_per_step\": %.1f, \"optimizer_us_per_step_8_together\": %.1f}\n",
                clients, shard, double(pushes) / elapsed, psCpu / elapsed,
                psCpu > 0 ? double(pushes) / psCpu : 0.0,
                memoryBandwidth() / (kBytesPerParameter * double(shard)),
                inCachePushesPerSecond(shard, settings), optimizerMicrosPerStep(shard, settings, 1),
                optimizerMicrosPerStep(shard, settings, 8));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ps_capacity: %s\n", e.what());
    return 1;
  }
}
