#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::data {

// Labelled images kept as bytes: `count` examples of rows x cols pixels, back to back.
struct Examples {
  size_t count = 0;
  size_t rows = 0;
  size_t cols = 0;
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;

  size_t imageSize() const { return rows * cols; }
};

// `<dir>/<name>` or `<dir>/<name>.gz`, whichever exists; DataError if neither does.
std::string findIdxFile(const std::string& dir, const std::string& name);

// Reads examples [begin, end) of an IDX3 image file and its IDX1 label file (plain or gzip).
// The whole of both files is checked: magic numbers, 28x28 images, equal counts, labels 0-9,
// no truncation, no trailing bytes. Any fault throws DataError naming the file and the problem.
Examples loadExamples(const std::string& imagesPath, const std::string& labelsPath, size_t begin,
                      size_t end);

// Writes `examples` as a plain IDX3 image file and IDX1 label file, each to a temporary file
// then renamed, so that a reader never sees half a file.
void writeExamples(const Examples& examples, const std::string& imagesPath,
                   const std::string& labelsPath);

}  // namespace pstrain::data
