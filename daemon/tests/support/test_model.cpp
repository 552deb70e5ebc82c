#include "support/test_model.hpp"

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/data/data_set.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/model/model_file.hpp"
#include "support/idx_files.hpp"

namespace pstrain::testing {

std::string writeTestModel(const std::string& path) {
  auto files = pstrain::data::findMnistFiles(kFashionMnistDir);
  auto layout = pstrain::model::Layout::mnist({32});
  pstrain::model::Model model{
      layout, pstrain::model::initialParameters(layout, 7),
      pstrain::data::describeDataSet(kFashionMnistDir, pstrain::data::loadTestSet(files), 10)};
  pstrain::writeFileAtomically(path, pstrain::model::serializeModel(model));
  return path;
}

}  // namespace pstrain::testing
