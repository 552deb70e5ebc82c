#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"
#include "pstrain/net/connection.hpp"

namespace prometheus {
class Histogram;
class Registry;
struct MetricFamily;
}  // namespace prometheus

namespace pstrain::observe {

// What one process counts and times: bytes, reconnections and refused connections, counted
// where they happen (net/ knows nothing of Prometheus), and the latency and staleness
// histograms. Every value is labelled with the process's role and ordinal.
class Meters {
 public:
  Meters(Role role, int ordinal);
  ~Meters();

  net::TrafficCounters traffic;
  std::atomic<std::uint64_t> reconnects{0};
  std::atomic<std::uint64_t> rejectedConnections{0};

  // Seconds a push (worker: its round trip; ps: applying it) and a pull take.
  void observePushSeconds(double seconds);
  void observePullSeconds(double seconds);
  // A ps: the staleness of an applied push, in global steps (ps::Shard::StepResult).
  void observeStaleness(double steps);
  // Of the pushes so far: their summed and mean staleness, and the bucket bound the 99th
  // percentile is within.
  struct Staleness {
    std::uint64_t pushes = 0;
    double total = 0;
    double mean = 0;
    double p99 = 0;
  };
  Staleness stalenessSummary() const;

  // role and ordinal, the labels of every metric of the process.
  const std::map<std::string, std::string>& labels() const { return labels_; }
  // Every counter and histogram as they are now, for the exposition.
  std::vector<prometheus::MetricFamily> collect() const;

 private:
  const std::map<std::string, std::string> labels_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Histogram& pushSeconds_;
  prometheus::Histogram& pullSeconds_;
  prometheus::Histogram& staleness_;
};

}  // namespace pstrain::observe
