#pragma once

#include <string>

#include "pstrain/data/idx.hpp"

namespace pstrain::data {

// The four standard MNIST file paths in a data directory (each plain or .gz).
struct MnistFiles {
  std::string trainImages;
  std::string trainLabels;
  std::string testImages;
  std::string testLabels;
};

// Throws DataError when the directory or any of the four files is missing.
MnistFiles findMnistFiles(const std::string& dir);

Examples loadTrainingSet(const MnistFiles& files);
Examples loadTestSet(const MnistFiles& files);

// Whether any of the four files is gzip-compressed.
bool isCompressed(const MnistFiles& files);

// Writes the data set of `dir` to `copyDir` as plain IDX files, read and checked first (DataError
// as loadExamples), with the class names file, if any: processes that read the copy inflate
// nothing.
void writePlainCopy(const std::string& dir, const std::string& copyDir);

}  // namespace pstrain::data
