#define BOOST_TEST_MODULE idx
#include <boost/test/unit_test.hpp>

#include "pstrain/common/error.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/data/mnist.hpp"
#include "support/idx_files.hpp"
#include "support/process_run.hpp"

#include <filesystem>

using namespace pstrain::data;
using namespace pstrain::testing;

namespace {

struct Files {
  TempDir dir;
  std::string images = dir.file("images");
  std::string labels = dir.file("labels");
};

std::string dataErrorOf(const Files& f) {
  try {
    loadExamples(f.images, f.labels, 0, SIZE_MAX);
  } catch (const pstrain::DataError& e) {
    return e.what();
  }
  BOOST_FAIL("expected a DataError");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(reads_plain_and_gzip_files_alike) {
  auto data = makeSynthetic(50, 1);
  Files plain;
  writeFile(plain.images, idxImages(data.pixels, 50));
  writeFile(plain.labels, idxLabels(data.labels));
  Files gz;
  gz.images += ".gz";
  gz.labels += ".gz";
  writeGzipFile(gz.images, idxImages(data.pixels, 50));
  writeGzipFile(gz.labels, idxLabels(data.labels));
  for (const Files* f : {&plain, &gz}) {
    auto examples = loadExamples(f->images, f->labels, 0, SIZE_MAX);
    BOOST_TEST(examples.count == 50u);
    BOOST_TEST(examples.imageSize() == 784u);
    BOOST_TEST(examples.pixels == data.pixels);
    BOOST_TEST(examples.labels == data.labels);
  }
}

BOOST_AUTO_TEST_CASE(keeps_only_the_requested_slice) {
  auto data = makeSynthetic(40, 2);
  Files f;
  writeFile(f.images, idxImages(data.pixels, 40));
  writeFile(f.labels, idxLabels(data.labels));
  auto slice = loadExamples(f.images, f.labels, 10, 25);
  BOOST_TEST(slice.count == 15u);
  BOOST_TEST(slice.labels[0] == data.labels[10]);
  BOOST_TEST(std::equal(slice.pixels.begin(), slice.pixels.end(), data.pixels.begin() + 10 * 784));
}

BOOST_AUTO_TEST_CASE(rejects_bad_magic) {
  auto data = makeSynthetic(3, 1);
  Files f;
  writeFile(f.images, idxImages(data.pixels, 3, 28, 28, 0x00000801));
  writeFile(f.labels, idxLabels(data.labels));
  auto message = dataErrorOf(f);
  BOOST_TEST(contains(message, f.images));
  BOOST_TEST(contains(message, "bad magic number"));
}

BOOST_AUTO_TEST_CASE(rejects_truncated_images) {
  auto data = makeSynthetic(5, 1);
  Files f;
  auto bytes = idxImages(data.pixels, 5);
  writeFile(f.images, bytes.substr(0, bytes.size() - 100));
  writeFile(f.labels, idxLabels(data.labels));
  auto message = dataErrorOf(f);
  BOOST_TEST(contains(message, f.images));
  BOOST_TEST(contains(message, "truncated"));
}

BOOST_AUTO_TEST_CASE(rejects_truncated_gzip_stream) {
  auto data = makeSynthetic(200, 1);
  Files f;
  f.images += ".gz";
  writeGzipFile(f.images, idxImages(data.pixels, 200));
  auto whole = readText(f.images);
  writeFile(f.images, whole.substr(0, whole.size() / 2));
  writeFile(f.labels, idxLabels(data.labels));
  BOOST_TEST(contains(dataErrorOf(f), f.images));
}

BOOST_AUTO_TEST_CASE(rejects_truncated_header) {
  Files f;
  writeFile(f.images, std::string("\0\0\x08\x03\0\0", 6));
  writeFile(f.labels, idxLabels({1}));
  BOOST_TEST(contains(dataErrorOf(f), "truncated header"));
}

BOOST_AUTO_TEST_CASE(rejects_trailing_bytes) {
  auto data = makeSynthetic(2, 1);
  Files f;
  writeFile(f.images, idxImages(data.pixels, 2) + "xx");
  writeFile(f.labels, idxLabels(data.labels));
  BOOST_TEST(contains(dataErrorOf(f), "after the last"));
}

BOOST_AUTO_TEST_CASE(rejects_labels_above_nine) {
  auto data = makeSynthetic(4, 1);
  data.labels[3] = 10;
  Files f;
  writeFile(f.images, idxImages(data.pixels, 4));
  writeFile(f.labels, idxLabels(data.labels));
  auto message = dataErrorOf(f);
  BOOST_TEST(contains(message, f.labels));
  BOOST_TEST(contains(message, "label 3 is 10"));
}

BOOST_AUTO_TEST_CASE(rejects_count_mismatch) {
  auto data = makeSynthetic(4, 1);
  Files f;
  writeFile(f.images, idxImages(data.pixels, 4));
  data.labels.pop_back();
  writeFile(f.labels, idxLabels(data.labels));
  BOOST_TEST(contains(dataErrorOf(f), "holds 4 images but"));
}

BOOST_AUTO_TEST_CASE(rejects_images_that_are_not_28_by_28) {
  Files f;
  writeFile(f.images, idxImages(std::vector<std::uint8_t>(2 * 32 * 32), 2, 32, 32));
  writeFile(f.labels, idxLabels({1, 2}));
  BOOST_TEST(contains(dataErrorOf(f), "32x32"));
}

BOOST_AUTO_TEST_CASE(missing_directory_or_file_is_named) {
  try {
    findMnistFiles("/nonexistent/data");
    BOOST_FAIL("expected a DataError");
  } catch (const pstrain::DataError& e) {
    BOOST_TEST(contains(e.what(), "/nonexistent/data does not exist"));
  }
  TempDir dir;
  writeSyntheticMnist(dir.path(), 10, 10, true);
  std::filesystem::remove(dir.file("t10k-labels-idx1-ubyte.gz"));
  try {
    findMnistFiles(dir.path());
    BOOST_FAIL("expected a DataError");
  } catch (const pstrain::DataError& e) {
    BOOST_TEST(contains(e.what(), "t10k-labels-idx1-ubyte"));
  }
}

BOOST_AUTO_TEST_CASE(a_plain_copy_holds_the_same_examples_and_class_names) {
  TempDir gz;
  writeSyntheticMnist(gz.path(), 30, 12, true);
  writeFile(gz.file("classes.txt"), "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n");
  TempDir copy;
  writePlainCopy(gz.path(), copy.path());
  const auto copied = findMnistFiles(copy.path());
  BOOST_TEST(!isCompressed(copied));
  BOOST_TEST(isCompressed(findMnistFiles(gz.path())));
  const auto original = findMnistFiles(gz.path());
  BOOST_TEST(loadTrainingSet(copied).pixels == loadTrainingSet(original).pixels);
  BOOST_TEST(loadTrainingSet(copied).labels == loadTrainingSet(original).labels);
  BOOST_TEST(loadTestSet(copied).pixels == loadTestSet(original).pixels);
  BOOST_TEST(loadTestSet(copied).labels == loadTestSet(original).labels);
  BOOST_TEST(readText(copy.file("classes.txt")) == readText(gz.file("classes.txt")));
}

BOOST_AUTO_TEST_CASE(a_fault_found_making_a_plain_copy_names_the_original_file) {
  TempDir gz;
  writeSyntheticMnist(gz.path(), 30, 12, true);
  std::filesystem::resize_file(gz.file("train-images-idx3-ubyte.gz"), 200);
  TempDir copy;
  try {
    writePlainCopy(gz.path(), copy.path());
    BOOST_FAIL("expected a DataError");
  } catch (const pstrain::DataError& e) {
    BOOST_TEST(contains(e.what(), gz.file("train-images-idx3-ubyte.gz")));
  }
}
