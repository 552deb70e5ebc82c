#pragma once

#include <armadillo>
#include <memory>
#include <mutex>
#include <string>

#include "pstrain/model/mlp.hpp"
#include "pstrain/model/model_file.hpp"

namespace pstrain::serve {

// A trained model answering predictions; safe to call from any thread.
class Predictor {
 public:
  Predictor(model::Model model, std::string source);

  // Class probabilities (10 rows, one column per input column of 784 values in [0, 1]).
  arma::fmat probabilities(const arma::fmat& inputs);

  const model::Layout& layout() const { return model_.layout; }
  const data::DataSetInfo& dataSet() const { return model_.dataSet; }
  const std::string& source() const { return source_; }  // where the model came from

 private:
  const model::Model model_;
  const std::string source_;
  std::mutex mutex_;  // guards mlp_'s workspace
  model::Mlp mlp_;
};

// Where the HTTP threads find the model: empty with a reason until the process has one.
class ModelSlot {
 public:
  explicit ModelSlot(std::string reason) : reason_(std::move(reason)) {}

  void set(std::shared_ptr<Predictor> predictor);
  // The model, or nullptr and why there is none.
  std::shared_ptr<Predictor> get(std::string* reason) const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<Predictor> predictor_;
  std::string reason_;
};

}  // namespace pstrain::serve
