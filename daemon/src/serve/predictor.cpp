#include "pstrain/serve/predictor.hpp"

namespace pstrain::serve {

Predictor::Predictor(model::Model model, std::string source)
    : model_(std::move(model)), source_(std::move(source)), mlp_(model_.layout) {}

arma::fmat Predictor::probabilities(const arma::fmat& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  return mlp_.probabilities(model_.params.data(), inputs);
}

void ModelSlot::set(std::shared_ptr<Predictor> predictor) {
  std::lock_guard<std::mutex> lock(mutex_);
  predictor_ = std::move(predictor);
}

std::shared_ptr<Predictor> ModelSlot::get(std::string* reason) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!predictor_) *reason = reason_;
  return predictor_;
}

}  // namespace pstrain::serve
