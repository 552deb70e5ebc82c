#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pstrain/data/idx.hpp"

namespace pstrain::data {

// How a data set's pictures were made, and so how an uploaded picture is made into an input.
enum class PictureKind : std::uint8_t {
  kImage = 0,  // a whole image in 28x28 (Fashion-MNIST's product photos, any other set)
  kDigit = 1,  // a handwritten digit: its ink fit into 20x20, centred by mass (MNIST)
};

// What a model knows of the data it was trained on: kept in its model file, shown to clients.
struct DataSetInfo {
  std::string name;                  // "Fashion-MNIST", "MNIST", or "" for another IDX set
  std::vector<std::string> classes;  // the name of each class, by label
  PictureKind pictures = PictureKind::kImage;
};

// The optional class names file beside a data set's IDX files: one name per line, by label.
inline const std::string kClassNamesFile = "classes.txt";

// The data set in `dir`, told apart by the first labels of its test set (`test`): MNIST and
// Fashion-MNIST by their own, any other set as "" with the classes "0".."9". `dir`/classes.txt,
// when there, names the classes; a file without one non-empty line per class is a DataError.
DataSetInfo describeDataSet(const std::string& dir, const Examples& test, int classCount);

// A model file from before data sets were recorded: classes "0".."9", pictures as images.
DataSetInfo unknownDataSet(int classCount);

}  // namespace pstrain::data
