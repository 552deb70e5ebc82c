#define BOOST_TEST_MODULE data_set
#include "pstrain/data/data_set.hpp"

#include <boost/test/unit_test.hpp>

#include "pstrain/common/error.hpp"
#include "pstrain/data/mnist.hpp"
#include "support/idx_files.hpp"

// A data set told apart by its test labels, its classes named by classes.txt when there is one.

using namespace pstrain::data;
using pstrain::testing::TempDir;
using pstrain::testing::writeFile;

namespace {

Examples testSetStartingWith(std::vector<std::uint8_t> labels) {
  Examples examples;
  examples.labels = std::move(labels);
  examples.count = examples.labels.size();
  return examples;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fashion_mnist_is_recognised_with_its_garments_as_images) {
  auto fashion =
      describeDataSet(pstrain::testing::kFashionMnistDir,
                      loadTestSet(findMnistFiles(pstrain::testing::kFashionMnistDir)), 10);
  BOOST_TEST(fashion.name == "Fashion-MNIST");
  BOOST_TEST(fashion.classes.front() == "T-shirt/top");
  BOOST_TEST(fashion.classes.back() == "Ankle boot");
  BOOST_TEST(int(fashion.pictures) == int(PictureKind::kImage));
}

BOOST_AUTO_TEST_CASE(mnist_is_recognised_as_digits_and_another_set_as_numbered_images) {
  TempDir dir;
  auto mnist =
      describeDataSet(dir.path(), testSetStartingWith({7, 2, 1, 0, 4, 1, 4, 9, 5, 9, 0, 6, 9}), 10);
  BOOST_TEST(mnist.name == "MNIST");
  BOOST_TEST(mnist.classes[7] == "7");
  BOOST_TEST(int(mnist.pictures) == int(PictureKind::kDigit));
  auto other = describeDataSet(dir.path(), testSetStartingWith({1, 2, 3}), 10);
  BOOST_TEST(other.name == "");
  BOOST_TEST(other.classes[3] == "3");
  BOOST_TEST(int(other.pictures) == int(PictureKind::kImage));
}

BOOST_AUTO_TEST_CASE(classes_txt_names_the_classes_and_a_wrong_one_is_a_data_error) {
  TempDir dir;
  writeFile(dir.file("classes.txt"),
            "zero\r\none\ntwo\nthree\n\nfour\nfive\nsix\nseven\neight\nnine\n");
  auto named =
      describeDataSet(dir.path(), testSetStartingWith({7, 2, 1, 0, 4, 1, 4, 9, 5, 9, 0, 6}), 10);
  BOOST_TEST(named.name == "MNIST");
  BOOST_TEST(named.classes.front() == "zero");
  BOOST_TEST(named.classes.back() == "nine");
  writeFile(dir.file("classes.txt"), "cat\ndog\n");
  try {
    describeDataSet(dir.path(), testSetStartingWith({1}), 10);
    BOOST_ERROR("accepted two class names for ten classes");
  } catch (const pstrain::DataError& e) {
    BOOST_TEST(std::string(e.what()) ==
               dir.file("classes.txt") + ": 2 class names; expected 10, one a line, by label");
  }
}
