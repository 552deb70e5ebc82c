#include "pstrain/data/idx.hpp"

#include <Poco/InflatingStream.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <memory>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::data {
namespace {

constexpr std::uint32_t kLabelMagic = 0x00000801;
constexpr std::uint32_t kImageMagic = 0x00000803;
constexpr size_t kSide = 28;
constexpr size_t kSkipChunk = 1 << 16;

// An IDX file opened for sequential reading, inflating it when its name ends in .gz.
class IdxFile {
 public:
  explicit IdxFile(std::string path) : path_(std::move(path)), file_(path_, std::ios::binary) {
    if (!file_) fail("cannot be opened");
    if (path_.size() > 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0) {
      inflater_ = std::make_unique<Poco::InflatingInputStream>(
          file_, Poco::InflatingStreamBuf::STREAM_GZIP);
    }
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_ + ": " + problem);
  }

  std::uint32_t readBigEndian32(const char* what) {
    std::array<unsigned char, 4> bytes{};
    if (read(bytes.data(), bytes.size()) != bytes.size()) {
      fail(std::string("truncated header (no ") + what + ")");
    }
    return std::uint32_t(bytes[0]) << 24 | std::uint32_t(bytes[1]) << 16 |
           std::uint32_t(bytes[2]) << 8 | std::uint32_t(bytes[3]);
  }

  void expectMagic(std::uint32_t magic, const char* kind) {
    auto found = readBigEndian32("magic number");
    if (found != magic) {
      char text[96];
      std::snprintf(text, sizeof text, "bad magic number 0x%08x (an IDX %s file has 0x%08x)",
                    found, kind, magic);
      fail(text);
    }
  }

  // Reads up to `bytes`; returns how many arrived (fewer only at the end of the file).
  size_t read(void* into, size_t bytes) {
    std::istream& in = stream();
    in.read(static_cast<char*>(into), std::streamsize(bytes));
    if (in.bad()) fail("read error");
    return size_t(in.gcount());
  }

  // Skips `bytes`; returns how many were there.
  size_t skip(size_t bytes) {
    std::array<char, kSkipChunk> sink;
    size_t skipped = 0;
    while (skipped < bytes) {
      size_t got = read(sink.data(), std::min(sink.size(), bytes - skipped));
      skipped += got;
      if (got == 0) break;
    }
    return skipped;
  }

  bool atEnd() {
    char extra;
    return read(&extra, 1) == 0;
  }

 private:
  std::istream& stream() { return inflater_ ? static_cast<std::istream&>(*inflater_) : file_; }

  std::string path_;
  std::ifstream file_;
  std::unique_ptr<Poco::InflatingInputStream> inflater_;
};

// Reads records [begin, end) of `recordSize` bytes out of `count`, checking the whole body.
std::vector<std::uint8_t> readRecords(IdxFile& file, size_t count, size_t recordSize, size_t begin,
                                      size_t end, const char* what) {
  std::vector<std::uint8_t> kept((end - begin) * recordSize);
  size_t expected = count * recordSize;
  size_t got = file.skip(begin * recordSize);
  got += file.read(kept.data(), kept.size());
  got += file.skip((count - end) * recordSize);
  if (got < expected) {
    file.fail("truncated: the header announces " + std::to_string(count) + " " + what + " (" +
              std::to_string(expected) + " bytes) but only " + std::to_string(got) +
              " bytes follow");
  }
  if (!file.atEnd()) file.fail("has bytes after the last of its " + std::to_string(count) + " " + what);
  return kept;
}

void appendBigEndian32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((value >> shift) & 0xff));
}

}  // namespace

std::string findIdxFile(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw DataError("data directory " + dir + " does not exist");
  for (const auto& candidate : {dir + "/" + name, dir + "/" + name + ".gz"}) {
    if (fs::is_regular_file(candidate)) return candidate;
  }
  throw DataError("data directory " + dir + " has neither " + name + " nor " + name + ".gz");
}

Examples loadExamples(const std::string& imagesPath, const std::string& labelsPath, size_t begin,
                      size_t end) {
  IdxFile labelFile(labelsPath);
  labelFile.expectMagic(kLabelMagic, "label");
  size_t labelCount = labelFile.readBigEndian32("label count");

  IdxFile imageFile(imagesPath);
  imageFile.expectMagic(kImageMagic, "image");
  Examples examples;
  size_t imageCount = imageFile.readBigEndian32("image count");
  examples.rows = imageFile.readBigEndian32("row count");
  examples.cols = imageFile.readBigEndian32("column count");
  if (examples.rows != kSide || examples.cols != kSide) {
    imageFile.fail("images are " + std::to_string(examples.rows) + "x" +
                   std::to_string(examples.cols) + "; MNIST images are 28x28");
  }
  if (imageCount != labelCount) {
    imageFile.fail("holds " + std::to_string(imageCount) + " images but " + labelsPath + " holds " +
                   std::to_string(labelCount) + " labels");
  }
  end = std::min(end, imageCount);
  begin = std::min(begin, end);

  // Labels are small: all are read and checked, then the slice is kept.
  auto labels = readRecords(labelFile, labelCount, 1, 0, labelCount, "labels");
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 9) {
      labelFile.fail("label " + std::to_string(i) + " is " + std::to_string(labels[i]) +
                     "; labels are 0 to 9");
    }
  }
  examples.labels.assign(labels.begin() + long(begin), labels.begin() + long(end));
  examples.pixels = readRecords(imageFile, imageCount, examples.imageSize(), begin, end, "images");
  examples.count = end - begin;
  return examples;
}

void writeExamples(const Examples& examples, const std::string& imagesPath,
                   const std::string& labelsPath) {
  std::string labels;
  appendBigEndian32(labels, kLabelMagic);
  appendBigEndian32(labels, std::uint32_t(examples.count));
  labels.append(examples.labels.begin(), examples.labels.end());
  writeFileAtomically(labelsPath, labels);

  std::string images;
  appendBigEndian32(images, kImageMagic);
  for (size_t value : {examples.count, examples.rows, examples.cols}) {
    appendBigEndian32(images, std::uint32_t(value));
  }
  images.append(examples.pixels.begin(), examples.pixels.end());
  writeFileAtomically(imagesPath, images);
}

}  // namespace pstrain::data
