#pragma once

#include <armadillo>
#include <string>
#include <vector>

namespace pstrain::serve {

// An output the model answers with, as every protocol names and types it.
struct OutputTensor {
  const char* name;
  const char* datatype;  // as the Open Inference Protocol spells it
  const char* tfDtype;   // as TensorFlow Serving's metadata does
};

// predictions: the class of each image; labels: its name; probabilities: 10 for each image.
inline const std::vector<OutputTensor> kOutputTensors{{"predictions", "INT64", "DT_INT64"},
                                                      {"labels", "BYTES", "DT_STRING"},
                                                      {"probabilities", "FP32", "DT_FLOAT"}};

// The one version of the one model, in the v2 and TF Serving paths that name a version.
inline const std::string kModelVersion = "1";

// The model's answer for a batch of images, written as JSON for each protocol.
class Prediction {
 public:
  // `probabilities`: one column per image; `classes`: the name of each class.
  Prediction(arma::fmat probabilities, const std::vector<std::string>& classes);

  size_t imageCount() const { return probabilities_.n_cols; }

  // The JSON array of output `name` for the whole batch: [3, 1], ["Dress", "Trouser"], and
  // probabilities as a row per image or, `flat`, all in one row-major list.
  std::string column(const std::string& name, bool flat = false) const;
  // Every output as a member: {"predictions": [...], "labels": [...], "probabilities": [[...]]}.
  std::string columns() const;
  // Every output of image `image` as a member: {"predictions": 3, "labels": "Dress", ...}.
  std::string row(size_t image) const;

 private:
  std::string value(const std::string& name, size_t image) const;

  arma::fmat probabilities_;
  std::vector<arma::uword> classOf_;
  std::vector<std::string> classes_;
};

}  // namespace pstrain::serve
