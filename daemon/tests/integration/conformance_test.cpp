#define BOOST_TEST_MODULE conformance
#include <Poco/JSON/Array.h>

#include <boost/test/unit_test.hpp>
#include <memory>

#include "pstrain/app/child_process.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/data/data_set.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/http.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// `pstrain serve` against the request and response examples of the Open Inference Protocol
// (KServe v2, docs/predict-api/v2/required_api.md) and of TensorFlow Serving's REST API
// (api_rest.md), driven with curl as a client would. Bad bodies get a 4xx and {"error": ...}.

using namespace pstrain::testing;
using pstrain::app::ChildProcess;

namespace {

// A model of Fashion-MNIST's shape and class names; its answers need not be right here.
std::string writeModel(const TempDir& dir) {
  auto files = pstrain::data::findMnistFiles(kFashionMnistDir);
  auto layout = pstrain::model::Layout::mnist({32});
  pstrain::model::Model model{
      layout, pstrain::model::initialParameters(layout, 7),
      pstrain::data::describeDataSet(kFashionMnistDir, pstrain::data::loadTestSet(files), 10)};
  const std::string path = dir.file("model.bin");
  pstrain::writeFileAtomically(path, pstrain::model::serializeModel(model));
  return path;
}

struct Reply {
  int status = 0;
  std::string headers;
  std::string body;
};

// One `pstrain serve` on a free port, with a model file or waiting for one.
class Server {
 public:
  explicit Server(bool withModel, std::vector<std::string> flags = {}) {
    const std::string model = withModel ? writeModel(dir_) : dir_.file("absent.bin");
    std::vector<std::string> argv{pstrainBinary(), "serve",       "--model",
                                  model,           "--http-port", std::to_string(port_)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<ChildProcess>(argv, dir_.file("out"), dir_.file("err"));
    BOOST_REQUIRE(waitFor([&] { return httpGet(port_, "/healthz").status == 200; },
                          std::chrono::seconds(20)));
    if (withModel) {
      BOOST_REQUIRE(waitFor([&] { return httpGet(port_, "/readyz").status == 200; },
                            std::chrono::seconds(20)));
    }
  }
  ~Server() { process_->stop(std::chrono::milliseconds(5000)); }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // curl -X method [-d body] url, with extra curl arguments.
  Reply curl(const std::string& method, const std::string& path, const std::string& body = "",
             std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{
        "-s", "-S",          "-X", method, "-D", dir_.file("headers"), "-o", dir_.file("body"),
        "-w", "%{http_code}"};
    if (!body.empty()) {
      writeFile(dir_.file("request"), body);
      args.insert(args.end(), {"-H", "Content-Type: application/json", "--data-binary",
                               "@" + dir_.file("request")});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(url(path));
    auto run = runCommand("curl", args, 30);
    BOOST_REQUIRE_MESSAGE(run.exitCode == 0, run.err);
    return {std::stoi(run.out), readText(dir_.file("headers")), readText(dir_.file("body"))};
  }

 private:
  TempDir dir_;
  int port_ = pstrain::net::freeLoopbackPorts(1)[0];
  std::unique_ptr<ChildProcess> process_;
};

// `count` test images, each 784 values as text: "[v,...]".
std::vector<std::string> testImages(size_t count) {
  static const auto test =
      pstrain::data::loadTestSet(pstrain::data::findMnistFiles(kFashionMnistDir));
  std::vector<std::string> images;
  for (size_t i = 0; i < count; ++i) {
    std::string image = "[";
    for (size_t p = 0; p < 784; ++p) {
      image += (p ? "," : "") + std::to_string(test.pixels[i * 784 + p]);
    }
    images.push_back(image + "]");
  }
  return images;
}

// An image written as 28 rows of 28: "[[...],...]".
std::string asRows(const std::string& flat) {
  std::string rows = "[";
  size_t at = 1;
  for (int r = 0; r < 28; ++r) {
    std::string row = "[";
    for (int c = 0; c < 28; ++c) {
      size_t end = flat.find_first_of(",]", at);
      row += (c ? "," : "") + flat.substr(at, end - at);
      at = end + 1;
    }
    rows += (r ? "," : "") + row + "]";
  }
  return rows + "]";
}

std::string inferBody(const std::string& datatype, const std::string& shape,
                      const std::string& data, const std::string& more = "") {
  return "{\"id\":\"42\",\"inputs\":[{\"name\":\"images\",\"shape\":" + shape + ",\"datatype\":\"" +
         datatype + "\",\"data\":" + data + "}]" + more + "}";
}

// The classes a response's "predictions" tensor or list holds.
std::vector<int> classesIn(const Poco::JSON::Array::Ptr& list) {
  std::vector<int> classes;
  for (size_t i = 0; i < list->size(); ++i) classes.push_back(list->getElement<int>(unsigned(i)));
  return classes;
}

void expectJsonError(const Reply& reply, int status, const std::string& start) {
  BOOST_TEST(reply.status == status, reply.body);
  BOOST_TEST(reply.headers.find("Content-Type: application/json") != std::string::npos);
  auto error = parseObject(reply.body)->getValue<std::string>("error");
  BOOST_TEST(error.rfind(start, 0) == 0, error);
}

}  // namespace

BOOST_AUTO_TEST_CASE(v2_health_is_200_with_an_empty_body_and_ready_waits_for_the_model) {
  Server waiting(false);
  BOOST_TEST(waiting.curl("GET", "/v2/health/live").status == 200);
  // "A 200 status code indicates true and a 4xx status code indicates false."
  expectJsonError(waiting.curl("GET", "/v2/health/ready"), 400, "no model yet: waiting for ");
  expectJsonError(waiting.curl("GET", "/v2/models/pstrain/ready"), 400, "no model yet");
  expectJsonError(waiting.curl("POST", "/v2/models/pstrain/infer",
                               inferBody("UINT8", "[1,784]", testImages(1)[0])),
                  503, "no model yet");
  auto status = parseObject(waiting.curl("GET", "/v1/models/pstrain").body);
  BOOST_TEST(
      status->getArray("model_version_status")->getObject(0)->getValue<std::string>("state") ==
      "START");

  Server ready(true);
  for (const char* path : {"/v2/health/live", "/v2/health/ready", "/v2/models/pstrain/ready"}) {
    auto reply = ready.curl("GET", path);
    BOOST_TEST(reply.status == 200, path);
    BOOST_TEST(reply.body.empty(), path);
  }
}

BOOST_AUTO_TEST_CASE(v2_server_and_model_metadata_have_the_spec_fields) {
  Server server(true);
  auto meta = parseObject(server.curl("GET", "/v2").body);
  BOOST_TEST(meta->getValue<std::string>("name") == "pstrain");
  BOOST_TEST(!meta->getValue<std::string>("version").empty());
  BOOST_TEST(meta->getArray("extensions")->size() == 0u);

  auto model = parseObject(server.curl("GET", "/v2/models/pstrain").body);
  BOOST_TEST(model->getValue<std::string>("name") == "pstrain");
  BOOST_TEST(model->getValue<std::string>("platform") == "pstrain");
  auto input = model->getArray("inputs")->getObject(0);
  BOOST_TEST(input->getValue<std::string>("name") == "images");
  BOOST_TEST(input->getValue<std::string>("datatype") == "FP32");
  BOOST_TEST(classesIn(input->getArray("shape")) == (std::vector<int>{-1, 784}));
  std::vector<std::string> outputs;
  auto list = model->getArray("outputs");
  for (size_t i = 0; i < list->size(); ++i) {
    outputs.push_back(list->getObject(unsigned(i))->getValue<std::string>("name"));
  }
  BOOST_TEST(outputs == (std::vector<std::string>{"predictions", "labels", "probabilities"}));
  expectJsonError(server.curl("GET", "/v2/models/mymodel"), 404, "model \"mymodel\" is not served");
}

BOOST_AUTO_TEST_CASE(v2_infer_answers_as_the_spec_example_flat_or_nested_fp32_or_uint8) {
  Server server(true);
  auto images = testImages(2);
  // The spec's example: an "id" echoed, the one output asked for returned with its shape.
  auto reply = server.curl("POST", "/v2/models/pstrain/infer",
                           inferBody("FP32", "[2,784]", "[" + images[0] + "," + images[1] + "]",
                                     ",\"outputs\":[{\"name\":\"probabilities\"}]"));
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  BOOST_TEST(reply.headers.find("Content-Type: application/json") != std::string::npos);
  auto answer = parseObject(reply.body);
  BOOST_TEST(answer->getValue<std::string>("model_name") == "pstrain");
  BOOST_TEST(answer->getValue<std::string>("id") == "42");
  BOOST_TEST(!answer->has("model_version"));  // "servers that do not implement versioning"
  auto outputs = answer->getArray("outputs");
  BOOST_REQUIRE(outputs->size() == 1u);
  auto probabilities = outputs->getObject(0);
  BOOST_TEST(probabilities->getValue<std::string>("name") == "probabilities");
  BOOST_TEST(probabilities->getValue<std::string>("datatype") == "FP32");
  BOOST_TEST(classesIn(probabilities->getArray("shape")) == (std::vector<int>{2, 10}));
  BOOST_TEST(probabilities->getArray("data")->size() == 20u);  // flat, row-major

  // Every output, for the same images as UINT8 in their natural [2, 28, 28] form.
  auto nested =
      parseObject(server
                      .curl("POST", "/v2/models/pstrain/infer",
                            inferBody("UINT8", "[2,28,28]",
                                      "[" + asRows(images[0]) + "," + asRows(images[1]) + "]"))
                      .body);
  auto all = nested->getArray("outputs");
  BOOST_REQUIRE(all->size() == 3u);
  BOOST_TEST(all->getObject(0)->getValue<std::string>("datatype") == "INT64");
  BOOST_TEST(all->getObject(1)->getValue<std::string>("datatype") == "BYTES");
  auto predicted = classesIn(all->getObject(0)->getArray("data"));
  auto predict = parseObject(
      server.curl("POST", "/predict", "{\"images\":[" + images[0] + "," + images[1] + "]}").body);
  BOOST_TEST(predicted == classesIn(predict->getArray("predictions")));
  BOOST_TEST(all->getObject(1)->getArray("data")->getElement<std::string>(0) ==
             predict->getArray("labels")->getElement<std::string>(0));
}

BOOST_AUTO_TEST_CASE(v2_bad_requests_get_a_4xx_and_a_json_error) {
  Server server(true);
  const std::string image = testImages(1)[0];
  const std::string infer = "/v2/models/pstrain/infer";
  // The spec's own example request names inputs this model does not have.
  expectJsonError(
      server.curl("POST", infer,
                  R"({"id":"42","inputs":[{"name":"input0","shape":[2,2],"datatype":"UINT32",)"
                  R"("data":[1,2,3,4]},{"name":"input1","shape":[3],"datatype":"BOOL",)"
                  R"("data":[true]}],"outputs":[{"name":"output0"}]})"),
      400, "\"inputs\" must hold one input tensor");
  expectJsonError(server.curl("POST", infer,
                              R"({"inputs":[{"name":"input0","shape":[1,784],"datatype":"FP32",)"
                              R"("data":)" +
                                  image + "}]}"),
                  400, "unknown input \"input0\"");
  expectJsonError(server.curl("POST", infer, "not json"), 400, "the body is not JSON");
  expectJsonError(server.curl("POST", infer, "{\"inputs\":[]}"), 400, "\"inputs\" must hold");
  expectJsonError(server.curl("POST", infer, inferBody("INT8", "[1,784]", image)), 400,
                  "input \"images\": datatype \"INT8\" is not supported");
  expectJsonError(server.curl("POST", infer, inferBody("FP32", "[1,783]", image)), 400,
                  "input \"images\": shape [1,783] is not [N, 784]");
  expectJsonError(server.curl("POST", infer, inferBody("FP32", "[2,784]", image)), 400,
                  "input \"images\": shape [2,784] holds 1568 values; \"data\" has 784");
  expectJsonError(
      server.curl("POST", infer, inferBody("FP32", "[1,784]", "[null" + image.substr(2))), 400,
      "image 0, value 0: null is not a number from 0 to 255");
  expectJsonError(
      server.curl("POST", infer, inferBody("UINT8", "[1,784]", "[0.5" + image.substr(2))), 400,
      "image 0, value 0: 0.5 is not an integer from 0 to 255");
  expectJsonError(
      server.curl("POST", infer,
                  inferBody("FP32", "[1,784]", image, ",\"outputs\":[{\"name\":\"output0\"}]")),
      400, "unknown output \"output0\"");
  expectJsonError(
      server.curl("POST", "/v2/models/mymodel/infer", inferBody("FP32", "[1,784]", image)), 404,
      "model \"mymodel\" is not served here");
  expectJsonError(server.curl("GET", infer), 405, "POST /v2/models/{name}/infer");
}

BOOST_AUTO_TEST_CASE(tf_serving_status_and_predict_answer_as_its_examples) {
  Server server(true);
  // As the example's GET /v1/models/half_plus_three.
  auto status = parseObject(server.curl("GET", "/v1/models/pstrain").body);
  auto version = status->getArray("model_version_status")->getObject(0);
  BOOST_TEST(version->getValue<std::string>("version") == "1");
  BOOST_TEST(version->getValue<std::string>("state") == "AVAILABLE");
  BOOST_TEST(version->getObject("status")->getValue<std::string>("error_code") == "OK");
  BOOST_TEST(version->getObject("status")->getValue<std::string>("error_message") == "");

  auto images = testImages(2);
  const std::string predict = "/v1/models/pstrain:predict";
  // Row format: "instances", a list of objects back (several named outputs).
  auto rows = parseObject(
      server.curl("POST", predict, "{\"instances\":[" + images[0] + "," + asRows(images[1]) + "]}")
          .body);
  auto predictions = rows->getArray("predictions");
  BOOST_REQUIRE(predictions->size() == 2u);
  auto first = predictions->getObject(0);
  BOOST_TEST(first->getArray("probabilities")->size() == 10u);
  BOOST_TEST(!first->getValue<std::string>("labels").empty());
  // Instances naming the one input, {"images": ...}, read the same.
  auto named = parseObject(server
                               .curl("POST", predict,
                                     "{\"signature_name\":\"serving_default\",\"instances\":[{"
                                     "\"images\":" +
                                         images[0] + "}]}")
                               .body);
  BOOST_TEST(named->getArray("predictions")->getObject(0)->getValue<int>("predictions") ==
             first->getValue<int>("predictions"));
  // Columnar format: "inputs", answered as "outputs", an object of named outputs.
  for (const auto& body : {"{\"inputs\":[" + images[0] + "," + images[1] + "]}",
                           "{\"inputs\":{\"images\":[" + images[0] + "," + images[1] + "]}}"}) {
    auto columns = parseObject(server.curl("POST", predict, body).body)->getObject("outputs");
    BOOST_REQUIRE(columns);
    BOOST_TEST(columns->getArray("predictions")->getElement<int>(0) ==
               first->getValue<int>("predictions"));
    BOOST_TEST(columns->getArray("labels")->size() == 2u);
    BOOST_TEST(columns->getArray("probabilities")->getArray(1)->size() == 10u);
  }
}

BOOST_AUTO_TEST_CASE(tf_serving_bad_requests_get_a_4xx_and_a_json_error) {
  Server server(true);
  const std::string image = testImages(1)[0];
  const std::string predict = "/v1/models/pstrain:predict";
  // As the example's request to a model that is not there: 404 and {"error": ...}.
  expectJsonError(server.curl("POST", "/v1/models/half:predict", "{\"instances\":[1.0,5.0]}"), 404,
                  "model \"half\" is not served here");
  expectJsonError(server.curl("POST", predict, "{\"instances\":[1.0,5.0]}"), 400,
                  "\"instances\" holds numbers, not images");
  expectJsonError(
      server.curl("POST", predict, "{\"instances\":[" + image + "],\"inputs\":[" + image + "]}"),
      400, "expected one of \"instances\" and \"inputs\"");
  expectJsonError(server.curl("POST", predict, "{\"instances\":[]}"), 400,
                  "\"instances\" must be a non-empty list");
  expectJsonError(server.curl("POST", predict, "{\"instances\":[[1,2,3]]}"), 400,
                  "image 0 has 3 values; expected 784");
  expectJsonError(server.curl("POST", predict, "{\"instances\":[{\"pixels\":" + image + "}]}"), 400,
                  "an instance without \"images\"");
  expectJsonError(server.curl("POST", predict, "[1,2"), 400, "the body is not JSON");
  expectJsonError(server.curl("GET", predict), 405, "POST /v1/models/{name}:predict");
}

BOOST_AUTO_TEST_CASE(connections_are_kept_alive_and_cors_is_off_unless_configured) {
  Server plain(true);
  // Two requests in one curl run: the second goes over the first's connection.
  auto run =
      runCommand("curl", {"-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects} ",
                          plain.url("/v2/health/live"), plain.url("/v2/models/pstrain")});
  BOOST_TEST(run.out == "1 0 ", run.out);
  BOOST_TEST(plain.curl("GET", "/v2").headers.find("Access-Control") == std::string::npos);

  Server cors(true, {"--cors-origin", "https://example.com", "--model-name", "fashion"});
  auto reply = cors.curl("GET", "/v2/models/fashion");
  BOOST_TEST(reply.status == 200);
  BOOST_TEST(reply.headers.find("Access-Control-Allow-Origin: https://example.com\r\n") !=
                 std::string::npos,
             reply.headers);
  auto preflight =
      cors.curl("OPTIONS", "/v2/models/fashion/infer", "",
                {"-H", "Origin: https://example.com", "-H", "Access-Control-Request-Method: POST"});
  BOOST_TEST(preflight.status == 204);
  BOOST_TEST(preflight.headers.find("Access-Control-Allow-Methods: GET, POST, OPTIONS") !=
                 std::string::npos,
             preflight.headers);
  expectJsonError(cors.curl("GET", "/v2/models/pstrain"), 404, "model \"pstrain\" is not served");
}
