#define BOOST_TEST_MODULE conformance
#include <Poco/JSON/Array.h>

#include <array>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "pstrain/app/child_process.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/http.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/test_model.hpp"
#include "support/wait.hpp"

// `pstrain serve` against the request and response examples of the Open Inference Protocol
// (KServe v2, docs/predict-api/v2/required_api.md) and of TensorFlow Serving's REST API
// (api_rest.md), driven with curl as a client would. Bad bodies get a 4xx and {"error": ...}.

using namespace pstrain::testing;
using pstrain::app::ChildProcess;

namespace {

struct Reply {
  int status = 0;
  std::string headers;
  std::string body;
};

// One `pstrain serve` on a free port, with a model file or waiting for one.
class Server {
 public:
  explicit Server(bool withModel, std::vector<std::string> flags = {}) {
    const std::string model =
        withModel ? writeTestModel(dir_.file("model.bin")) : dir_.file("absent.bin");
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

  int port() const { return port_; }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // curl -X method [--data-binary body] url, with extra curl arguments; `contentType` empty
  // sends curl's own (application/x-www-form-urlencoded), as a client that names none does.
  Reply curl(const std::string& method, const std::string& path, const std::string& body = "",
             std::vector<std::string> extra = {},
             const std::string& contentType = "application/json") const {
    std::vector<std::string> args{
        "-s", "-S",          "-X", method, "-D", dir_.file("headers"), "-o", dir_.file("body"),
        "-w", "%{http_code}"};
    if (!body.empty()) {
      writeFile(dir_.file("request"), body);
      if (!contentType.empty()) args.insert(args.end(), {"-H", "Content-Type: " + contentType});
      args.insert(args.end(), {"--data-binary", "@" + dir_.file("request")});
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

// `count` test images, each 784 values as text: "[v,...]"; `unitScaled`: each value divided
// by 255, as a client that scaled its pixels to 0-1 sends them.
std::vector<std::string> testImages(size_t count, bool unitScaled = false) {
  static const auto test =
      pstrain::data::loadTestSet(pstrain::data::findMnistFiles(kFashionMnistDir));
  std::vector<std::string> images;
  for (size_t i = 0; i < count; ++i) {
    std::string image = "[";
    for (size_t p = 0; p < 784; ++p) {
      char value[32];
      const unsigned pixel = test.pixels[i * 784 + p];
      std::snprintf(value, sizeof value, "%.6g", unitScaled ? pixel / 255.0 : double(pixel));
      image += (p ? "," : "") + std::string(value);
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

// The message of the refusal in a raw HTTP answer, {"error": "..."}; "" where it holds none.
std::string errorIn(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  if (end == std::string::npos) return "";
  try {
    return parseObject(answer.substr(end + 4))->getValue<std::string>("error");
  } catch (const std::exception&) {
    return "";
  }
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
  // The range of the pixel values it takes, which FP32 alone does not say.
  BOOST_TEST(input->getObject("parameters")->getValue<int>("min") == 0);
  BOOST_TEST(input->getObject("parameters")->getValue<int>("max") == 255);
  BOOST_TEST(model->getArray("versions")->size() == 1u);
  BOOST_TEST(model->getArray("versions")->getElement<std::string>(0) == "1");
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

BOOST_AUTO_TEST_CASE(pixels_scaled_to_0_1_are_refused_on_every_protocol_with_a_hint) {
  Server server(true);
  const std::string scaled = testImages(1, true)[0];
  const std::string hint = "image 0 looks scaled to 0-1 (every value within [0, 1], some "
                           "fractional): send pixel values 0-255, e.g. multiplied by 255";
  expectJsonError(server.curl("POST", "/predict", "{\"images\":[" + scaled + "]}"), 400, hint);
  expectJsonError(server.curl("POST", "/predict", "{\"images\":[" + asRows(scaled) + "]}"), 400,
                  hint);  // nested rows take the parser's way, not the flat fast one
  expectJsonError(server.curl("POST", "/v2/models/pstrain/infer",
                              inferBody("FP32", "[1,784]", scaled)),
                  400, hint);
  expectJsonError(server.curl("POST", "/v1/models/pstrain:predict",
                              "{\"instances\":[" + scaled + "]}"),
                  400, hint);

  // An all-black image is within [0, 1] too, and is a picture all the same; so is 0/1 ink.
  std::string black = "[0", binary = "[1";
  for (int i = 1; i < 784; ++i) black += ",0", binary += i % 2 ? ",0" : ",1";
  black += "]", binary += "]";
  for (const auto& image : {black, binary}) {
    BOOST_TEST(server.curl("POST", "/predict", "{\"images\":[" + image + "]}").status == 200);
    BOOST_TEST(server.curl("POST", "/v2/models/pstrain/infer", inferBody("FP32", "[1,784]", image))
                   .status == 200);
    BOOST_TEST(
        server.curl("POST", "/v1/models/pstrain:predict", "{\"instances\":[" + image + "]}")
            .status == 200);
  }
  // A dim 0-255 image with a fraction in it is taken: one value above 1 says the scale.
  BOOST_TEST(server.curl("POST", "/predict", "{\"images\":[[1.5" + scaled.substr(scaled.find(','))
                                                  + "]}").status == 200);
  // The range is stated where clients look for what the model takes.
  auto info = parseObject(server.curl("GET", "/model").body);
  BOOST_TEST(classesIn(info->getArray("input_range")) == (std::vector<int>{0, 255}));
}

BOOST_AUTO_TEST_CASE(an_unknown_post_is_404_and_a_405_names_the_allowed_methods) {
  Server server(true);
  expectJsonError(server.curl("POST", "/nowhere", "{}"), 404, "not found: try /, /healthz");
  expectJsonError(server.curl("POST", "/v2/models/pstrain/explain", "{}"), 404, "not found");
  for (const auto& [method, path, allow] : std::vector<std::array<std::string, 3>>{
           {"POST", "/healthz", "GET, HEAD"},
           {"POST", "/v2/models/pstrain", "GET, HEAD"},
           {"GET", "/predict", "POST"},
           {"GET", "/v2/models/pstrain/infer", "POST"},
           {"PUT", "/v1/models/pstrain:predict", "POST"}}) {
    auto reply = server.curl(method, path, method == "GET" ? "" : "{}");
    BOOST_TEST_CONTEXT(method << " " << path) {
      BOOST_TEST(reply.status == 405, reply.body);
      BOOST_TEST(contains(reply.headers, "\r\nAllow: " + allow + "\r\n"), reply.headers);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_post_without_a_body_is_refused_at_once) {
  Server server(true);
  for (const char* path : {"/predict", "/v2/models/pstrain/infer", "/v1/models/pstrain:predict"}) {
    // curl -X POST with no data sends neither Content-Length nor a chunked body: no body at all.
    const auto start = std::chrono::steady_clock::now();
    auto reply = server.curl("POST", path);
    const auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST_CONTEXT(path) {
      expectJsonError(reply, 400, "the request has no body");
      const bool prompt = took < std::chrono::seconds(2);
      BOOST_TEST(prompt, "answered after " << std::chrono::duration<double>(took).count() << " s");
    }
    expectJsonError(server.curl("POST", path, "", {"-H", "Content-Length: 0"}), 400,
                    "the request has no body");
  }
}

BOOST_AUTO_TEST_CASE(multipart_uploads_get_415_with_a_data_binary_hint) {
  Server server(true);
  TempDir dir;
  writeFile(dir.file("digit.png"), "\x89PNG\r\n\x1a\n not really a PNG");
  for (const char* path : {"/predict", "/v2/models/pstrain/infer", "/v1/models/pstrain:predict"}) {
    auto reply = server.curl("POST", path, "", {"-F", "image=@" + dir.file("digit.png")});
    BOOST_TEST_CONTEXT(path) {
      expectJsonError(reply, 415, "multipart/form-data is not read here: send the file itself");
      BOOST_TEST(contains(reply.body, "--data-binary @"), reply.body);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_declared_content_type_is_honoured_and_an_undeclared_one_sniffed) {
  Server server(true);
  const std::string json = "{\"images\":[" + testImages(1)[0] + "]}";
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + "not really a PNG";
  expectJsonError(server.curl("POST", "/predict", png, {}, "application/json"), 400,
                  "the body is not JSON");
  expectJsonError(server.curl("POST", "/predict", json, {}, "image/png"), 400,
                  "not a valid PNG image");
  expectJsonError(server.curl("POST", "/v2/models/pstrain/infer", json, {}, "image/png"), 415,
                  "image/png is not read here: POST /v2/models/{name}/infer takes JSON");
  // Parameters and case do not change the type.
  BOOST_TEST(server.curl("POST", "/predict", json, {}, "Application/JSON; charset=utf-8").status ==
             200);
  // No type named (curl's form default): the body says what it is.
  BOOST_TEST(server.curl("POST", "/predict", json, {}, "").status == 200);
  expectJsonError(server.curl("POST", "/predict", png, {}, ""), 400, "not a valid PNG image");
  // A picture of a type not read is refused alike, declared, sent as a form or with no
  // Content-Type at all (it was taken for bad JSON: 400 "unexpected end of text").
  const std::string jpeg = std::string("\xff\xd8\xff\xe0", 4) + "not really a JPEG";
  const std::vector<std::pair<std::string, std::vector<std::string>>> ways{
      {"image/jpeg", {}}, {"", {}}, {"", {"-H", "Content-Type:"}}};
  for (const auto& [type, extra] : ways) {
    const std::string named = extra.empty() ? type : "none";
    BOOST_TEST_CONTEXT("Content-Type " << (named.empty() ? "curl's form default" : named)) {
      expectJsonError(server.curl("POST", "/predict", jpeg, extra, type), 415,
                      "image/jpeg is not supported: send a PNG image or JSON");
      expectJsonError(server.curl("POST", "/v2/models/pstrain/infer", jpeg, extra, type), 415,
                      "image/jpeg is not read here: POST /v2/models/{name}/infer takes JSON");
    }
  }
}

BOOST_AUTO_TEST_CASE(v2_versions_paths_answer_for_version_1) {
  Server server(true);
  const std::string image = testImages(1)[0];
  auto meta = server.curl("GET", "/v2/models/pstrain/versions/1");
  BOOST_TEST(meta.status == 200, meta.body);
  BOOST_TEST(parseObject(meta.body)->getValue<std::string>("name") == "pstrain");
  BOOST_TEST(server.curl("GET", "/v2/models/pstrain/versions/1/ready").status == 200);
  auto infer = server.curl("POST", "/v2/models/pstrain/versions/1/infer",
                           inferBody("UINT8", "[1,784]", image));
  BOOST_REQUIRE_MESSAGE(infer.status == 200, infer.body);
  BOOST_TEST(parseObject(infer.body)->getValue<std::string>("model_version") == "1");
  expectJsonError(server.curl("GET", "/v2/models/pstrain/versions/2"), 404,
                  "version \"2\" of model \"pstrain\" is not served here; version \"1\" is");
  expectJsonError(server.curl("POST", "/v2/models/pstrain/versions/2/infer",
                              inferBody("UINT8", "[1,784]", image)),
                  404, "version \"2\"");
}

BOOST_AUTO_TEST_CASE(tf_serving_metadata_and_versions_paths_answer_for_version_1) {
  Server server(true);
  const std::string image = testImages(1)[0];
  // As GET /v1/models/half_plus_three/metadata answers: the model spec and its signature.
  for (const char* path : {"/v1/models/pstrain/metadata", "/v1/models/pstrain/versions/1/metadata"}) {
    auto reply = server.curl("GET", path);
    BOOST_TEST_REQUIRE(reply.status == 200, path << ": " << reply.body);
    auto meta = parseObject(reply.body);
    BOOST_TEST(meta->getObject("model_spec")->getValue<std::string>("name") == "pstrain");
    BOOST_TEST(meta->getObject("model_spec")->getValue<std::string>("version") == "1");
    auto signature = meta->getObject("metadata")
                         ->getObject("signature_def")
                         ->getObject("signature_def")
                         ->getObject("serving_default");
    BOOST_REQUIRE(signature);
    BOOST_TEST(signature->getValue<std::string>("method_name") == "tensorflow/serving/predict");
    auto input = signature->getObject("inputs")->getObject("images");
    BOOST_REQUIRE(input);
    BOOST_TEST(input->getValue<std::string>("dtype") == "DT_FLOAT");
    auto dims = input->getObject("tensor_shape")->getArray("dim");
    BOOST_REQUIRE(dims->size() == 2u);
    BOOST_TEST(dims->getObject(1)->getValue<std::string>("size") == "784");
    for (const char* output : {"predictions", "labels", "probabilities"}) {
      BOOST_TEST(signature->getObject("outputs")->has(output), output);
    }
  }
  auto status = server.curl("GET", "/v1/models/pstrain/versions/1");
  BOOST_TEST(status.status == 200, status.body);
  BOOST_TEST(contains(status.body, "\"state\":\"AVAILABLE\""), status.body);
  auto predicted = server.curl("POST", "/v1/models/pstrain/versions/1:predict",
                               "{\"instances\":[" + image + "]}");
  BOOST_TEST(predicted.status == 200, predicted.body);
  expectJsonError(server.curl("GET", "/v1/models/pstrain/versions/2"), 404,
                  "version \"2\" of model \"pstrain\" is not served here");
  expectJsonError(server.curl("POST", "/v1/models/pstrain/versions/2:predict",
                              "{\"instances\":[" + image + "]}"),
                  404, "version \"2\"");
}

BOOST_AUTO_TEST_CASE(tf_serving_refuses_an_unknown_signature_name) {
  Server server(true);
  const std::string image = testImages(1)[0];
  // TF Serving refuses a signature its model does not have; so does this server.
  expectJsonError(server.curl("POST", "/v1/models/pstrain:predict",
                              "{\"signature_name\":\"classify\",\"instances\":[" + image + "]}"),
                  400,
                  "signature \"classify\" is not served: this model has one, \"serving_default\"");
  BOOST_TEST(server.curl("POST", "/v1/models/pstrain:predict",
                         "{\"signature_name\":\"\",\"instances\":[" + image + "]}")
                 .status == 200);  // empty: the default, as TF Serving takes it
}

// Python's urllib sends a whole body before it reads the answer: closed with the body unread, the
// connection was reset under it ("Connection reset by peer") where curl, which reads as it
// sends, got the 413. The rest of the body is read and dropped now, and both read the answer.
BOOST_AUTO_TEST_CASE(a_body_over_the_limit_gets_a_413_that_urllib_and_curl_read) {
  Server server(true);
  TempDir dir;
  const std::string huge(size_t(64) << 20, ' ');
  writeFile(dir.file("huge.json"), huge);
  const std::string urllib =
      "import sys, urllib.request, urllib.error\n"
      "request = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], 'rb').read(),\n"
      "                                 headers={'Content-Type': 'application/json'})\n"
      "try:\n"
      "    urllib.request.urlopen(request, timeout=30)\n"
      "    print(200)\n"
      "except urllib.error.HTTPError as e:\n"
      "    print(e.code, e.read().decode().strip())\n"
      "except OSError as e:\n"
      "    print('failed:', e)\n";
  const std::string limit = "the body is over the limit of 8388608 bytes";
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto python =
        runCommand("python3", {"-c", urllib, server.url("/predict"), dir.file("huge.json")}, 60);
    BOOST_TEST(python.out == "413 {\"error\":\"" + limit + "\"}\n", python.out << python.err);
  }
  expectJsonError(server.curl("POST", "/predict", huge), 413, limit);
  BOOST_TEST(server.curl("GET", "/v2/health/live").status == 200);  // the next request too
}

// Every refusal is JSON with its status, those of a head that is not HTTP/1.1 too: a garbage
// request line or a 20 KB URI got a bare 400 with no body, a Content-Length that is no number no
// answer at all. Each is answered at once, and the server answers the next request.
BOOST_AUTO_TEST_CASE(a_head_that_is_not_http_1_1_is_refused_with_json_and_its_status) {
  Server server(true);
  std::string fields;
  for (int i = 0; i < 3; ++i) {
    fields += "X-Pad-" + std::to_string(i) + ": " + std::string(8000, 'a') + "\r\n";
  }
  std::string manyFields;
  for (int i = 0; i < 101; ++i) manyFields += "X-" + std::to_string(i) + ": 1\r\n";
  struct Case {
    std::string what;
    std::string request;
    int status;
    std::string error;
  };
  const std::string usage = "the request line is not METHOD TARGET HTTP/1.1";
  const std::vector<Case> cases{
      {"a garbage request line", "GARBAGE\r\n\r\n", 400, usage},
      {"a TLS hello", std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), 400,
       usage},
      {"a request line of four words", "GET / HTTP/1.1 extra\r\n\r\n", 400, usage},
      {"a 20 KB URI", "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n",
       414, "the request URI is over the limit of 8192 bytes"},
      {"Content-Length: abc",
       "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400,
       "Content-Length \"abc\" is not a number of bytes"},
      {"two Content-Lengths",
       "POST /predict HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400,
       "Content-Length is given twice, as 2 and 3"},
      {"24 KB of header fields", "GET /healthz HTTP/1.1\r\n" + fields + "\r\n", 431,
       "the request's header fields are over the limit of 16384 bytes"},
      {"101 header fields", "GET /healthz HTTP/1.1\r\n" + manyFields + "\r\n", 431,
       "the request has over 100 header fields"},
      {"a header line without a colon", "GET /healthz HTTP/1.1\r\nnonsense\r\n\r\n", 400,
       "a header line is not NAME: value"},
      {"HTTP/2.0", "GET /healthz HTTP/2.0\r\n\r\n", 505,
       "HTTP/2.0 is not spoken here: send HTTP/1.1"}};
  for (const auto& bad : cases) {
    BOOST_TEST_CONTEXT(bad.what) {
      const auto start = std::chrono::steady_clock::now();
      const std::string answer = rawRequest(server.port(), bad.request);
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      BOOST_TEST(answer.rfind("HTTP/1.1 " + std::to_string(bad.status) + " ", 0) == 0, answer);
      BOOST_TEST(contains(answer, "\r\nContent-Type: application/json\r\n"), answer);
      BOOST_TEST(errorIn(answer) == bad.error, answer);
      BOOST_TEST(took < 3, "answered after " << took << " s");
    }
  }
  BOOST_TEST(server.curl("GET", "/v2/health/live").status == 200);
}
