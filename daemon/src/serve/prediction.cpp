#include "pstrain/serve/prediction.hpp"

#include <cstdio>

#include "pstrain/serve/http_reply.hpp"

namespace pstrain::serve {

Prediction::Prediction(arma::fmat probabilities, const std::vector<std::string>& classes)
    : probabilities_(std::move(probabilities)), classes_(classes) {
  for (arma::uword col = 0; col < probabilities_.n_cols; ++col) {
    classOf_.push_back(probabilities_.col(col).index_max());
  }
}

std::string Prediction::value(const std::string& name, size_t image) const {
  if (name == "predictions") return std::to_string(classOf_[image]);
  if (name == "labels") return jsonString(classes_[classOf_[image]]);
  std::string row = "[";
  char number[32];
  for (arma::uword k = 0; k < probabilities_.n_rows; ++k) {
    std::snprintf(number, sizeof number, "%s%.6g", k ? "," : "",
                  double(probabilities_(k, arma::uword(image))));
    row += number;
  }
  return row + "]";
}

std::string Prediction::column(const std::string& name, bool flat) const {
  std::string out = "[";
  for (size_t image = 0; image < imageCount(); ++image) {
    std::string v = value(name, image);
    if (flat && name == "probabilities") v = v.substr(1, v.size() - 2);
    out += (image ? "," : "") + v;
  }
  return out + "]";
}

std::string Prediction::columns() const {
  std::string out = "{";
  for (const auto& output : kOutputTensors) {
    out += (out.size() > 1 ? ",\"" : "\"") + std::string(output.name) + "\":" + column(output.name);
  }
  return out + "}";
}

std::string Prediction::row(size_t image) const {
  std::string out = "{";
  for (const auto& output : kOutputTensors) {
    out += (out.size() > 1 ? ",\"" : "\"") + std::string(output.name) +
           "\":" + value(output.name, image);
  }
  return out + "}";
}

}  // namespace pstrain::serve
