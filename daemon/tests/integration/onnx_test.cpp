#define BOOST_TEST_MODULE onnx
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>

#include "support/http.hpp"
#include "support/idx_files.hpp"
#include "support/process_run.hpp"
#include "support/serve_process.hpp"
#include "support/test_model.hpp"
#include "support/wait.hpp"

// model.onnx as other runtimes read it: worker 0 writes it at the end of a run, `pstrain export
// --onnx` makes the same bytes of model.bin, ONNX's checker and OpenCV's dnn module
// (tools/onnx_agreement.py) read it, and OpenCV answers as `pstrain serve` does. Bad model files
// are refused with one line.

using namespace pstrain::testing;

namespace {

// The agreement check, in Debian's python3 (with python3-onnx and python3-opencv).
ProcessResult agreement(const std::vector<std::string>& args) {
  const char* script = std::getenv("TEST_ONNX_AGREEMENT");
  BOOST_REQUIRE_MESSAGE(script,
                        "TEST_ONNX_AGREEMENT names tools/onnx_agreement.py (ctest sets it)");
  std::vector<std::string> argv{script};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand("/usr/bin/python3", argv, 120);
}

// `pstrain export` of `model` that should fail: exit code `code`, one line on stderr that starts
// with `message`, and no ONNX file left.
void expectRefused(const std::vector<std::string>& args, int code, const std::string& message,
                   const std::string& output) {
  auto result = runPstrain(args, 30);
  BOOST_TEST(result.exitCode == code, "exit code " << result.exitCode << ": " << result.err);
  BOOST_TEST(lines(result.err).size() == 1u, result.err);
  BOOST_TEST(result.err.rfind("pstrain: " + message, 0) == 0u, result.err);
  BOOST_TEST(!std::filesystem::exists(output), output);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_run_writes_model_onnx_and_opencv_answers_it_as_pstrain_serve_does) {
  TempDir logs;
  auto trained = runPstrain({"local", "--ps", "1", "--workers", "1", "--data-dir", kFashionMnistDir,
                             "--train-steps", "300", "--log-dir", logs.path()});
  BOOST_REQUIRE_MESSAGE(trained.exitCode == 0, trained.err);
  const std::string written = logs.file("worker-0/model.onnx");
  BOOST_REQUIRE(std::filesystem::exists(written));

  // The command makes the same bytes of the same model.bin.
  auto exported = runPstrain({"export", "--onnx", "--model", logs.file("worker-0/model.bin"), "-o",
                              logs.file("exported.onnx")});
  BOOST_REQUIRE_MESSAGE(exported.exitCode == 0, exported.err);
  BOOST_TEST(contains(exported.out, "exported.onnx: ONNX (opset 13, IR version 7)"), exported.out);
  BOOST_TEST(readText(logs.file("exported.onnx")) == readText(written));

  ServeProcess serve(logs.file("worker-0/model.bin"));
  BOOST_REQUIRE(waitFor([&] { return httpGet(serve.port, "/readyz").status == 200; },
                        std::chrono::seconds(20)));
  auto check = agreement({written, "http://127.0.0.1:" + std::to_string(serve.port) + "/predict",
                          kFashionMnistDir + "/t10k-images-idx3-ubyte.gz", "--count", "500"});
  BOOST_TEST_MESSAGE(check.out);
  BOOST_TEST(check.exitCode == 0, check.out << check.err
                                            << "(needs python3-onnx and python3-opencv: "
                                            << "ci/install-deps.sh --tests)");
  // The first 500 test images, an all-black and an all-white one.
  BOOST_TEST(contains(check.out, "502 images: the same class from OpenCV"), check.out);
  BOOST_TEST(contains(check.out, "pstrain serve on 502;"), check.out);
}

BOOST_AUTO_TEST_CASE(export_writes_beside_the_model_by_default) {
  TempDir dir;
  writeTestModel(dir.file("trained.bin"));
  auto result = runPstrain({"export", "--onnx", "--model", dir.file("trained.bin")});
  BOOST_REQUIRE_MESSAGE(result.exitCode == 0, result.err);
  BOOST_TEST(std::filesystem::exists(dir.file("trained.onnx")));
  auto check = agreement({dir.file("trained.onnx")});
  BOOST_TEST(check.exitCode == 0, check.out << check.err);
  BOOST_TEST(contains(check.out, "trained.onnx: ONNX's checker passes"), check.out);
}

BOOST_AUTO_TEST_CASE(export_of_a_missing_truncated_or_corrupt_model_is_one_line_and_exit_3) {
  TempDir dir;
  const std::string model = readText(writeTestModel(dir.file("good.bin")));
  const std::string output = dir.file("out.onnx");
  auto exportOf = [&](const std::string& path) {
    return std::vector<std::string>{"export", "--onnx", "--model", path, "-o", output};
  };
  expectRefused(exportOf(dir.file("missing.bin")), 3,
                dir.file("missing.bin") + ": cannot open the model file", output);
  writeFile(dir.file("empty.bin"), "");
  expectRefused(
      exportOf(dir.file("empty.bin")), 3,
      dir.file("empty.bin") + ": not a pstrain model file: it does not start with PSTRAINM",
      output);
  writeFile(dir.file("header.bin"), model.substr(0, 14));
  expectRefused(exportOf(dir.file("header.bin")), 3,
                dir.file("header.bin") + ": not a pstrain model file: truncated in the layer sizes",
                output);
  writeFile(dir.file("truncated.bin"), model.substr(0, model.size() / 2));
  expectRefused(exportOf(dir.file("truncated.bin")), 3,
                dir.file("truncated.bin") + ": not a pstrain model file: ", output);
  std::string corrupt = model;
  corrupt.replace(8, 4, std::string("\x07\0\0\0", 4));  // 7 layers: its sizes run into floats
  writeFile(dir.file("corrupt.bin"), corrupt);
  expectRefused(exportOf(dir.file("corrupt.bin")), 3,
                dir.file("corrupt.bin") + ": not a pstrain model file: ", output);
  writeFile(dir.file("noise.bin"), std::string(4096, '\xa5'));
  expectRefused(exportOf(dir.file("noise.bin")), 3,
                dir.file("noise.bin") + ": not a pstrain model file: it does not start with",
                output);
}

BOOST_AUTO_TEST_CASE(export_refuses_bad_arguments_with_exit_code_2) {
  TempDir dir;
  const std::string model = writeTestModel(dir.file("model.bin"));
  const std::string output = dir.file("model.onnx");
  expectRefused({"export", "--model", model}, 2,
                "name the format to export, --onnx; usage:", output);
  expectRefused({"export", "--onnx", "--model", model, "--opset", "9"}, 2,
                "unknown argument --opset; usage:", output);
  expectRefused({"export", "--onnx", "--model"}, 2, "--model needs a file name", output);
  expectRefused({"export", "--onnx", "--model", model, "-o", model}, 2,
                model + " is the model file itself", output);
}
