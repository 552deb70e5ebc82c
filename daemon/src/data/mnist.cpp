#include "pstrain/data/mnist.hpp"

#include <limits>

namespace pstrain::data {

MnistFiles findMnistFiles(const std::string& dir) {
  return MnistFiles{findIdxFile(dir, "train-images-idx3-ubyte"),
                    findIdxFile(dir, "train-labels-idx1-ubyte"),
                    findIdxFile(dir, "t10k-images-idx3-ubyte"),
                    findIdxFile(dir, "t10k-labels-idx1-ubyte")};
}

Examples loadTrainingSlice(const MnistFiles& files, int index, int workers) {
  size_t total = countLabels(files.trainLabels);
  size_t begin = total * size_t(index) / size_t(workers);
  size_t end = total * size_t(index + 1) / size_t(workers);
  return loadExamples(files.trainImages, files.trainLabels, begin, end);
}

Examples loadTrainingSet(const MnistFiles& files) {
  return loadExamples(files.trainImages, files.trainLabels, 0,
                      std::numeric_limits<size_t>::max());
}

Examples loadTestSet(const MnistFiles& files) {
  return loadExamples(files.testImages, files.testLabels, 0, std::numeric_limits<size_t>::max());
}

}  // namespace pstrain::data
