#include "support/idx_files.hpp"

#include <Poco/DeflatingStream.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace pstrain::testing {
namespace {

void appendBigEndian(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((value >> shift) & 0xff);
}

}  // namespace

TempDir::TempDir() {
  std::string pattern = "/tmp/pstrain-test-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string idxImages(const std::vector<std::uint8_t>& pixels, std::uint32_t count,
                      std::uint32_t rows, std::uint32_t cols, std::uint32_t magic) {
  std::string out;
  appendBigEndian(out, magic);
  appendBigEndian(out, count);
  appendBigEndian(out, rows);
  appendBigEndian(out, cols);
  out.append(pixels.begin(), pixels.end());
  return out;
}

std::string idxLabels(const std::vector<std::uint8_t>& labels, std::uint32_t magic) {
  std::string out;
  appendBigEndian(out, magic);
  appendBigEndian(out, std::uint32_t(labels.size()));
  out.append(labels.begin(), labels.end());
  return out;
}

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void writeGzipFile(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  Poco::DeflatingOutputStream gzip(file, Poco::DeflatingStreamBuf::STREAM_GZIP);
  gzip << bytes;
  gzip.close();
}

Synthetic makeSynthetic(size_t count, std::uint64_t seed) {
  Synthetic data;
  std::mt19937_64 generator(seed);
  std::uniform_int_distribution<int> noise(0, 60);
  std::uniform_int_distribution<int> label(0, 9);
  data.pixels.resize(count * 784);
  for (size_t i = 0; i < count; ++i) {
    auto k = std::uint8_t(label(generator));
    data.labels.push_back(k);
    for (size_t p = 0; p < 784; ++p) {
      size_t row = p / 28;
      bool lit = row == size_t(2 * k + 4) || row == size_t(2 * k + 5);
      data.pixels[i * 784 + p] = std::uint8_t(lit ? 180 + noise(generator) : noise(generator));
    }
  }
  return data;
}

void writeSyntheticMnist(const std::string& dir, size_t trainCount, size_t testCount, bool gzip) {
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    if (gzip) {
      writeGzipFile(dir + "/" + name + ".gz", bytes);
    } else {
      writeFile(dir + "/" + name, bytes);
    }
  };
  auto train = makeSynthetic(trainCount, 1);
  auto test = makeSynthetic(testCount, 2);
  write("train-images-idx3-ubyte", idxImages(train.pixels, std::uint32_t(trainCount)));
  write("train-labels-idx1-ubyte", idxLabels(train.labels));
  write("t10k-images-idx3-ubyte", idxImages(test.pixels, std::uint32_t(testCount)));
  write("t10k-labels-idx1-ubyte", idxLabels(test.labels));
}

}  // namespace pstrain::testing
