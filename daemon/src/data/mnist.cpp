#include "pstrain/data/mnist.hpp"

#include <filesystem>
#include <future>
#include <limits>

#include "pstrain/data/data_set.hpp"

namespace pstrain::data {
namespace {

const std::string kTrainImages = "train-images-idx3-ubyte";
const std::string kTrainLabels = "train-labels-idx1-ubyte";
const std::string kTestImages = "t10k-images-idx3-ubyte";
const std::string kTestLabels = "t10k-labels-idx1-ubyte";

}  // namespace

MnistFiles findMnistFiles(const std::string& dir) {
  return MnistFiles{findIdxFile(dir, kTrainImages), findIdxFile(dir, kTrainLabels),
                    findIdxFile(dir, kTestImages), findIdxFile(dir, kTestLabels)};
}

Examples loadTrainingSet(const MnistFiles& files) {
  return loadExamples(files.trainImages, files.trainLabels, 0,
                      std::numeric_limits<size_t>::max());
}

Examples loadTestSet(const MnistFiles& files) {
  return loadExamples(files.testImages, files.testLabels, 0, std::numeric_limits<size_t>::max());
}

bool isCompressed(const MnistFiles& files) {
  for (const auto* path : {&files.trainImages, &files.trainLabels, &files.testImages,
                           &files.testLabels}) {
    if (std::filesystem::path(*path).extension() == ".gz") return true;
  }
  return false;
}

void writePlainCopy(const std::string& dir, const std::string& copyDir) {
  namespace fs = std::filesystem;
  const auto files = findMnistFiles(dir);
  fs::create_directories(copyDir);
  auto test = std::async(std::launch::async, [&] {
    writeExamples(loadTestSet(files), copyDir + "/" + kTestImages, copyDir + "/" + kTestLabels);
  });
  writeExamples(loadTrainingSet(files), copyDir + "/" + kTrainImages,
                copyDir + "/" + kTrainLabels);
  test.get();
  const auto names = fs::path(dir) / kClassNamesFile;
  const auto copiedNames = fs::path(copyDir) / kClassNamesFile;
  if (fs::exists(names)) {
    fs::copy_file(names, copiedNames, fs::copy_options::overwrite_existing);
  } else {
    fs::remove(copiedNames);
  }
}

}  // namespace pstrain::data
