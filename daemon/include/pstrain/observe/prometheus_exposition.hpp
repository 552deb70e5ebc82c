#pragma once

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"

namespace pstrain::observe {

// /metrics: the Prometheus text exposition of a process's progress (as gauges), its meters and
// its build (pstrain_build_info: the version and the OpenBLAS kernels in use).
class PrometheusExposition {
 public:
  PrometheusExposition(const Progress& progress, const Meters& meters);
  ~PrometheusExposition();

  std::string text() const;

 private:
  const Progress& progress_;
  const Meters& meters_;
  // The registry's view of the progress, brought up to date by text().
  std::shared_ptr<prometheus::Registry> registry_;
  struct Gauges;
  std::unique_ptr<Gauges> gauges_;
};

}  // namespace pstrain::observe
