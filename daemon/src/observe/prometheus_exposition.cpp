#include "pstrain/observe/prometheus_exposition.hpp"

#include <prometheus/text_serializer.h>

#include "pstrain/common/blas_core.hpp"

namespace pstrain::observe {
namespace {

prometheus::Family<prometheus::Gauge>& family(prometheus::Registry& r, const prometheus::Labels& l,
                                              const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Labels(l).Register(r);
}

prometheus::Gauge& gauge(prometheus::Registry& r, const prometheus::Labels& l, const char* name,
                         const char* help) {
  return family(r, l, name, help).Add({});
}

}  // namespace

struct PrometheusExposition::Gauges {
  Gauges(prometheus::Registry& r, const prometheus::Labels& l)
      : globalStep(
            gauge(r, l, "pstrain_global_step", "Global steps applied (ps) or seen (worker).")),
        trainSteps(gauge(r, l, "pstrain_train_steps", "Global steps the run trains for.")),
        localStep(gauge(r, l, "pstrain_local_step", "Steps this worker has completed.")),
        stepsPerSecond(
            gauge(r, l, "pstrain_steps_per_second", "Global steps per second, last second.")),
        loss(gauge(r, l, "pstrain_loss", "Training loss of the latest step.")),
        testAccuracy(gauge(r, l, "pstrain_test_accuracy", "Latest test accuracy (worker 0).")),
        state(family(r, l, "pstrain_state", "1 for the current state of the process.")) {
    family(r, l, "pstrain_build_info", "1, labelled with the version and BLAS kernels.")
        .Add({{"blas_core", blasCoreInUse()}, {"version", PSTRAIN_VERSION}})
        .Set(1);
  }

  prometheus::Gauge& globalStep;
  prometheus::Gauge& trainSteps;
  prometheus::Gauge& localStep;
  prometheus::Gauge& stepsPerSecond;
  prometheus::Gauge& loss;
  prometheus::Gauge& testAccuracy;
  prometheus::Family<prometheus::Gauge>& state;
};

PrometheusExposition::PrometheusExposition(const Progress& progress, const Meters& meters)
    : progress_(progress),
      meters_(meters),
      registry_(std::make_shared<prometheus::Registry>()),
      gauges_(std::make_unique<Gauges>(*registry_, meters.labels())) {}

PrometheusExposition::~PrometheusExposition() = default;

std::string PrometheusExposition::text() const {
  auto& g = *gauges_;
  g.globalStep.Set(double(progress_.globalStep()));
  g.trainSteps.Set(double(progress_.trainSteps()));
  g.localStep.Set(double(progress_.localStep()));
  g.stepsPerSecond.Set(progress_.stepsPerSecond());
  g.loss.Set(double(progress_.loss()));
  g.testAccuracy.Set(progress_.testAccuracy());
  const State now = progress_.state();
  for (State s : {State::kWaiting, State::kTraining, State::kCompleted}) {
    g.state.Add({{"state", stateName(s)}}).Set(s == now ? 1 : 0);
  }
  auto families = registry_->Collect();
  auto metered = meters_.collect();
  families.insert(families.end(), metered.begin(), metered.end());
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace pstrain::observe
