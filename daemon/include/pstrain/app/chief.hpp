#pragma once

#include <cstdint>
#include <memory>

#include "pstrain/config/config.hpp"
#include "pstrain/data/data_set.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/ps/recut_coordinator.hpp"
#include "pstrain/serve/predictor.hpp"
#include "pstrain/worker/trainer.hpp"

namespace pstrain::app {

// Worker 0's duties beside training, in one place: the test set it evaluates on, the re-cuts it
// coordinates, the model and result it writes, the predictions it serves, and the scale-down at
// the end of a run. The daemon composes one for worker 0 alone.
class Chief {
 public:
  // `model`: the slot worker 0's /predict answers from.
  Chief(const config::Config& settings, observe::Events& events, observe::Progress& progress,
        serve::ModelSlot& model);

  // The test set and what the model file records of the data set; loaded once.
  const data::Examples& loadTestSet(const data::MnistFiles& files);
  // Worker 0's re-cuts of the ps, for its client.
  std::unique_ptr<ps::RecutCoordinator> recutCoordinator(ps::ClientObserver& observer) const;
  // The run had completed before this process started: serves the model written then.
  void serveWrittenModel();
  // After training: model.bin and model.onnx (what `pstrain export --onnx` makes of it), the
  // model served, then result.json, which `pstrain local` stops the processes on.
  void finish(const worker::Trainer& trainer, const worker::TrainingResult& result,
              std::uint64_t runId, double elapsedSeconds);
  // Once the run has completed (trained now, or found completed on a restart): scales the
  // StatefulSets the settings name to 0, its own last, so that the run's pods release their
  // resources; the model stays where the log volume keeps it.
  void scaleDown();

 private:
  const config::Config& settings_;
  observe::Events& events_;
  observe::Progress& progress_;
  serve::ModelSlot& model_;
  std::optional<data::Examples> test_;
  std::optional<data::DataSetInfo> dataSet_;
};

}  // namespace pstrain::app
