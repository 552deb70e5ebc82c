#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::testing {

// Fashion-MNIST as Debian's dataset-fashion-mnist installs it: the real data set the integration
// tests train on.
inline const std::string kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// A fresh directory under /tmp, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Bytes of an IDX3 image file / IDX1 label file, with a header that may be made to lie.
std::string idxImages(const std::vector<std::uint8_t>& pixels, std::uint32_t count,
                      std::uint32_t rows = 28, std::uint32_t cols = 28,
                      std::uint32_t magic = 0x00000803);
std::string idxLabels(const std::vector<std::uint8_t>& labels, std::uint32_t magic = 0x00000801);

void writeFile(const std::string& path, const std::string& bytes);
void writeGzipFile(const std::string& path, const std::string& bytes);

// A learnable ten-class data set: class k lights up rows 2k+4 and 2k+5, over faint noise.
struct Synthetic {
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;
};
Synthetic makeSynthetic(size_t count, std::uint64_t seed);

// The four MNIST files of a synthetic data set in `dir`, gzipped or plain.
void writeSyntheticMnist(const std::string& dir, size_t trainCount, size_t testCount, bool gzip);

}  // namespace pstrain::testing
