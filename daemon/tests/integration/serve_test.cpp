#define BOOST_TEST_MODULE serve
#include <boost/test/unit_test.hpp>

#include <Poco/Checksum.h>
#include <Poco/DeflatingStream.h>
#include <Poco/Net/StreamSocket.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>

#include "pstrain/app/child_process.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/events.hpp"
#include "support/http.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/prometheus.hpp"
#include "support/serve_process.hpp"
#include "support/test_model.hpp"
#include "support/wait.hpp"

// Predictions over real HTTP: `pstrain serve` against the accuracy training reported, and
// worker 0 of a live `pstrain local` run refusing bad input while it trains.

using namespace pstrain::testing;
using pstrain::app::ChildProcess;

namespace {

// {"images": [[...], ...]} of `count` images from `pixels`, 784 bytes each.
std::string imagesJson(const std::uint8_t* pixels, size_t count) {
  std::string out = "{\"images\":[";
  for (size_t i = 0; i < count; ++i) {
    out += i ? ",[" : "[";
    for (size_t p = 0; p < 784; ++p) {
      out += (p ? "," : "") + std::to_string(pixels[i * 784 + p]);
    }
    out += "]";
  }
  return out + "]}";
}

std::string bigEndian(std::uint32_t value) {
  return {char(value >> 24), char(value >> 16), char(value >> 8), char(value)};
}

std::string pngChunk(const std::string& type, const std::string& data) {
  Poco::Checksum crc(Poco::Checksum::TYPE_CRC32);
  crc.update(type + data);
  return bigEndian(std::uint32_t(data.size())) + type + data + bigEndian(crc.checksum());
}

// A grayscale PNG of `bitDepth` bits whose rows (filter byte included) come from `row(y)`.
std::string grayPng(std::uint32_t width, std::uint32_t height, int bitDepth,
                    const std::function<std::string(std::uint32_t)>& row) {
  std::ostringstream compressed;
  {
    Poco::DeflatingOutputStream deflate(compressed, Poco::DeflatingStreamBuf::STREAM_ZLIB);
    for (std::uint32_t y = 0; y < height; ++y) deflate << row(y);
    deflate.close();
  }
  std::string header = bigEndian(width) + bigEndian(height) + char(bitDepth) + '\0' + '\0' +
                       '\0' + '\0';
  return "\x89PNG\r\n\x1a\n" + pngChunk("IHDR", header) + pngChunk("IDAT", compressed.str()) +
         pngChunk("IEND", "");
}

// A 56x56 drawing: a dark vertical bar on white paper.
std::string barPng() {
  return grayPng(56, 56, 8, [](std::uint32_t y) {
    std::string row(57, char(255));
    row[0] = 0;  // filter: none
    if (y > 8 && y < 48) row.replace(25, 6, 6, '\0');
    return row;
  });
}

// A 20000x20000 1-bit PNG of about 50 KB that would inflate to 400 million pixels.
std::string bombPng() {
  const std::uint32_t side = 20000;
  const std::string zeros(1 + side / 8, '\0');
  return grayPng(side, side, 1, [&](std::uint32_t) { return zeros; });
}

std::string postHead(const std::string& contentLength) {
  return "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " + contentLength + "\r\n\r\n";
}

// The message of a refusal, {"error": "..."}; "" when the body is not one.
std::string errorOf(const HttpResult& answer) {
  try {
    auto body = parseObject(answer.body);
    return body && body->has("error") ? body->getValue<std::string>("error") : "";
  } catch (const std::exception&) {
    return "";
  }
}

struct BadInput {
  std::string what;
  std::string body;
  std::string contentType;
  int status;
  std::string message;  // the start of the one line answered
};

// A `pstrain local` run of 1 ps and 1 worker that keeps serving after training.
struct LocalRun {
  TempDir logs;
  std::unique_ptr<ChildProcess> process;
  int chiefPort = 0;

  explicit LocalRun(int trainSteps) {
    process = std::make_unique<ChildProcess>(
        std::vector<std::string>{pstrainBinary(), "local", "--ps", "1", "--workers", "1",
                                 "--data-dir", kFashionMnistDir, "--train-steps",
                                 std::to_string(trainSteps), "--log-dir", logs.path(),
                                 "--keep-serving"},
        logs.file("local.out"), logs.file("local.err"));
    const std::regex page(R"(http://127\.0\.0\.1:(\d+)/)");
    std::smatch match;
    BOOST_REQUIRE(waitFor([&] {
      auto announced = lastEventOf(logs.path(), "page");
      if (!announced) return false;
      const auto url = announced->getValue<std::string>("url");
      if (!std::regex_match(url, match, page)) return false;
      chiefPort = std::stoi(match[1]);
      return true;
    }, std::chrono::seconds(30)));
  }

  ~LocalRun() { process->stop(std::chrono::milliseconds(10000)); }

  Poco::JSON::Object::Ptr status() const {
    auto answer = httpGet(chiefPort, "/status");
    return answer.status == 200 ? parseObject(answer.body) : nullptr;
  }
};

// Holds the clients of a burst until every one of them has come this far, or `timeout` passed.
class Gate {
 public:
  explicit Gate(int count) : left_(count) {}

  void arriveAndWait(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--left_ == 0) opened_.notify_all();
    opened_.wait_for(lock, timeout, [this] { return left_ <= 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  int left_;
};

// One client of a burst, as urllib is: it sends its head and the body's first KB, waits at
// `gate` until every client has done as much (so the server holds them all at once), sends the
// rest and only then reads, until the server closes. Returns the answer; empty where the
// connection was reset or closed unanswered.
std::string burstClient(int port, const std::string& head, const std::string& body, Gate& gate) {
  constexpr size_t kFirst = 1024;
  std::optional<Poco::Net::StreamSocket> socket;
  try {
    socket.emplace(Poco::Net::SocketAddress("127.0.0.1", Poco::UInt16(port)));
    socket->setSendTimeout(Poco::Timespan(30, 0));
    socket->setReceiveTimeout(Poco::Timespan(30, 0));
    const std::string start = head + body.substr(0, kFirst);
    socket->sendBytes(start.data(), int(start.size()));
  } catch (const Poco::Exception&) {
    socket.reset();
  }
  gate.arriveAndWait(std::chrono::seconds(30));
  std::string answer;
  try {
    if (!socket) return "";
    socket->sendBytes(body.data() + kFirst, int(body.size() - kFirst));
    char buffer[4096];
    for (int n; (n = socket->receiveBytes(buffer, sizeof buffer)) > 0;) {
      answer.append(buffer, size_t(n));
    }
  } catch (const Poco::Exception&) {
    return "";  // reset: what the client read is lost with it
  }
  return answer;
}

// A 28x28 grayscale PNG of one image of the data set, as it is.
std::string imagePng(const std::uint8_t* pixels) {
  return grayPng(28, 28, 8, [&](std::uint32_t y) {
    return std::string(1, '\0') + std::string(reinterpret_cast<const char*>(pixels + y * 28), 28);
  });
}

}  // namespace

BOOST_AUTO_TEST_CASE(refusals_are_json_with_their_reason_phrase_and_serve_has_metrics) {
  TempDir dir;
  ServeProcess serve(dir.file("model.bin"));  // no model yet: requests are checked all the same
  std::string pixels = "null";
  for (int i = 1; i < 784; ++i) pixels += ",0";
  const std::string body = "{\"images\":[[" + pixels + "]]}";
  auto answer = rawRequest(serve.port,
                           "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                           "Content-Type: application/json\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body);
  BOOST_TEST(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0, answer);
  BOOST_TEST(contains(answer, "Content-Type: application/json"), answer);
  BOOST_TEST(contains(answer,
                      "\r\n\r\n{\"error\":\"image 0, value 0: null is not a number from 0 "
                      "to 255\"}\n"),
             answer);

  auto notJson = rawRequest(serve.port,
                            "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            "Content-Length: 5\r\n\r\nhello");
  BOOST_TEST(notJson.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0, notJson);

  auto badQuery = httpPost(serve.port, "/predict?inputs=maybe", "{\"images\":[]}");
  BOOST_TEST(badQuery.status == 400);
  BOOST_TEST(errorOf(badQuery) ==
                 "/predict takes one query parameter, inputs=true: the answer then holds the "
                 "28x28 inputs the model saw",
             badQuery.body);

  auto missing = httpGet(serve.port, "/nowhere");
  BOOST_TEST(missing.status == 404);
  BOOST_TEST(errorOf(missing).rfind("not found: try /, /healthz, /readyz, /metrics", 0) == 0,
             missing.body);
  auto metrics = httpGet(serve.port, "/metrics");  // which that message lists
  BOOST_TEST(metrics.status == 200);
  // Labelled with the process's role and ordinal, as its /status names them.
  auto samples = parsePrometheus(metrics.body);
  BOOST_TEST(samples["pstrain_inference_requests_total{code=\"400\",ordinal=\"0\",role=\"serve\","
                     "route=\"/predict\"}"] == 3,
             metrics.body);
  BOOST_TEST(samples["pstrain_inference_request_duration_seconds_count{ordinal=\"0\","
                     "role=\"serve\",route=\"/predict\"}"] == 3,
             metrics.body);
}

BOOST_AUTO_TEST_CASE(a_second_serve_on_a_port_in_use_fails_with_one_line) {
  TempDir dir;
  ServeProcess first(dir.file("model.bin"));
  auto second = runPstrain(
      {"serve", "--model", dir.file("model.bin"), "--http-port", std::to_string(first.port)}, 20);
  BOOST_TEST(second.exitCode == 6, "exit code " << second.exitCode);
  BOOST_TEST(lines(second.err).size() == 1u, second.err);
  BOOST_TEST(contains(second.err, "pstrain: cannot listen for HTTP on port " +
                                      std::to_string(first.port) + ": "),
             second.err);
  BOOST_TEST(contains(second.err, "Address already in use"), second.err);
  BOOST_TEST(httpGet(first.port, "/healthz").status == 200);  // the first is undisturbed
}

BOOST_AUTO_TEST_CASE(png_images_of_the_test_set_are_classified_as_their_json_twins) {
  TempDir logs;
  auto trained = runPstrain({"local", "--ps", "1", "--workers", "1", "--data-dir", kFashionMnistDir,
                             "--train-steps", "600", "--log-dir", logs.path()});
  BOOST_REQUIRE_MESSAGE(trained.exitCode == 0, trained.err);
  ServeProcess serve(logs.file("worker-0/model.bin"));
  auto test = pstrain::data::loadTestSet(pstrain::data::findMnistFiles(kFashionMnistDir));
  constexpr size_t kImages = 200;
  auto asJson =
      parseObject(httpPost(serve.port, "/predict", imagesJson(test.pixels.data(), kImages)).body)
          ->getArray("predictions");
  size_t agree = 0;
  for (size_t i = 0; i < kImages; ++i) {
    auto answer =
        httpPost(serve.port, "/predict", imagePng(test.pixels.data() + i * 784), "image/png");
    BOOST_REQUIRE_MESSAGE(answer.status == 200, answer.body);
    auto asPng = parseObject(answer.body)->getArray("predictions")->getElement<int>(0);
    if (asPng == asJson->getElement<int>(unsigned(i))) ++agree;
  }
  // The inputs the model saw, on request: the picture's own pixels.
  auto shown = parseObject(httpPost(serve.port, "/predict?inputs=true",
                                    imagePng(test.pixels.data()), "image/png")
                               .body)
                   ->getArray("inputs")
                   ->getArray(0);
  BOOST_REQUIRE(shown->size() == 784u);
  for (unsigned k = 0; k < 784; ++k) {
    BOOST_TEST(shown->getElement<int>(k) == int(test.pixels[k]), "pixel " << k);
  }
  BOOST_TEST_MESSAGE("PNG and JSON agree on " << agree << " of " << kImages);
  BOOST_TEST(agree == kImages);  // a 28x28 picture of the data set is taken as it is
}

BOOST_AUTO_TEST_CASE(serve_classifies_the_test_set_with_the_accuracy_training_reported) {
  TempDir logs;
  // Started before the model exists (as a Deployment may be): not ready, and says why.
  const std::string modelPath = logs.file("worker-0/model.bin");
  const int port = pstrain::net::freeLoopbackPorts(1)[0];
  ChildProcess serve({pstrainBinary(), "serve", "--model", modelPath, "--http-port",
                      std::to_string(port)},
                     logs.file("serve.out"), logs.file("serve.err"));
  BOOST_REQUIRE(waitFor([&] { return httpGet(port, "/healthz").status == 200; },
                        std::chrono::seconds(20)));
  BOOST_TEST(httpGet(port, "/readyz").status == 503);
  auto early = httpPost(port, "/predict", imagesJson(std::vector<std::uint8_t>(784).data(), 1));
  BOOST_TEST(early.status == 503);
  BOOST_TEST(early.body == "{\"error\":\"no model yet: waiting for " + modelPath + "\"}\n");

  auto trained = runPstrain({"local", "--ps", "1", "--workers", "1", "--data-dir",
                             kFashionMnistDir, "--train-steps", "600", "--log-dir", logs.path()});
  BOOST_REQUIRE_MESSAGE(trained.exitCode == 0, trained.err);
  const double reported =
      pstrain::app::summaryFromJson(readText(logs.file("worker-0/result.json"))).testAccuracy;
  BOOST_REQUIRE(waitFor([&] { return httpGet(port, "/readyz").status == 200; },
                        std::chrono::seconds(20)));

  auto test = pstrain::data::loadTestSet(pstrain::data::findMnistFiles(kFashionMnistDir));
  // The model file says what it learnt: Fashion-MNIST's garments, named in every answer.
  auto model = parseObject(httpGet(port, "/model").body);
  BOOST_TEST(model->getValue<std::string>("data_set") == "Fashion-MNIST");
  auto classes = model->getArray("classes");
  BOOST_REQUIRE(classes->size() == 10u);
  BOOST_TEST(classes->getElement<std::string>(0) == "T-shirt/top");
  BOOST_TEST(classes->getElement<std::string>(9) == "Ankle boot");
  constexpr size_t kBatch = 1000;
  size_t correct = 0;
  for (size_t start = 0; start < test.count; start += kBatch) {
    const size_t n = std::min(kBatch, test.count - start);
    auto answer = httpPost(port, "/predict", imagesJson(test.pixels.data() + start * 784, n));
    BOOST_REQUIRE_MESSAGE(answer.status == 200, answer.body);
    auto result = parseObject(answer.body);
    auto predictions = result->getArray("predictions");
    auto probabilities = result->getArray("probabilities");
    auto labels = result->getArray("labels");
    BOOST_REQUIRE(predictions->size() == n);
    BOOST_REQUIRE(labels && labels->size() == n);
    BOOST_TEST(labels->getElement<std::string>(0) ==
               classes->getElement<std::string>(predictions->getElement<unsigned>(0)));
    BOOST_REQUIRE(probabilities->size() == n);
    for (size_t i = 0; i < n; ++i) {
      if (predictions->getElement<int>(unsigned(i)) == test.labels[start + i]) ++correct;
      auto ten = probabilities->getArray(unsigned(i));
      BOOST_REQUIRE(ten->size() == 10u);
      double sum = 0;
      for (unsigned k = 0; k < 10; ++k) sum += ten->getElement<double>(k);
      BOOST_TEST(std::abs(sum - 1) < 1e-4);
    }
  }
  const double accuracy = double(correct) / double(test.count);
  BOOST_TEST_MESSAGE("accuracy through /predict " << accuracy << ", result.json " << reported);
  BOOST_TEST(std::abs(accuracy - reported) < 5e-5);
  serve.stop(std::chrono::milliseconds(5000));
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_while_a_run_trains_and_the_run_completes) {
  constexpr int kTrainSteps = 8000;  // some seconds on a quiet machine: the refusals come first
  LocalRun run(kTrainSteps);
  const int port = run.chiefPort;
  BOOST_REQUIRE(waitFor([&] {
    auto status = run.status();
    return status && status->getValue<std::string>("state") == "training" &&
           status->getValue<std::uint64_t>("global_step") > 0;
  }, std::chrono::seconds(60)));
  const auto stepBefore = run.status()->getValue<std::uint64_t>("global_step");

  std::string zeros = "[0";
  for (int i = 1; i < 784; ++i) zeros += ",0";
  zeros += "]";
  auto withValue = [&](const std::string& value) {
    return "{\"images\":[[" + value + std::string(zeros.begin() + 2, zeros.end()) + "]}";
  };
  // Before the model exists, a good request is told to wait, and why.
  auto early = httpPost(port, "/predict", "{\"images\":[" + zeros + "]}");
  BOOST_TEST(early.status == 503);
  BOOST_TEST(errorOf(early) == "no model yet: worker 0 serves it once training has completed");

  // What helm test runs: worker 0's /predict is there, and says it has no model yet.
  const std::string chief = "127.0.0.1:" + std::to_string(port);
  auto probe = runPstrain({"status", "--predict", chief});
  BOOST_TEST(probe.exitCode == 0, probe.err);
  BOOST_TEST(contains(probe.out, "  predict: 503 no model yet"), probe.out);

  // Two slow clients, one silent after its headers and one trickling its body, held meanwhile.
  auto silent = std::async(std::launch::async, [&] { return rawRequest(port, postHead("1000")); });
  auto trickling = std::async(std::launch::async, [&] { return rawRequest(port, postHead("100000"), true); });

  std::string shortImage = "[0";
  for (int i = 1; i < 783; ++i) shortImage += ",0";
  shortImage += "]";
  const std::vector<BadInput> cases{
      {"wrong pixel count", "{\"images\":[" + shortImage + "]}", "application/json", 400,
       "image 0 has 783 values; expected 784 (28x28)"},
      {"value above 255", withValue("256"), "application/json", 400,
       "image 0, value 0: 256 is not a number from 0 to 255"},
      {"negative value", withValue("-1"), "application/json", 400,
       "image 0, value 0: -1 is not a number from 0 to 255"},
      {"a string for a value", withValue("\"x\""), "application/json", 400,
       "image 0, value 0: \"x\" is not a number from 0 to 255"},
      {"null for a value", withValue("null"), "application/json", 400,
       "image 0, value 0: null is not a number from 0 to 255"},
      {"no images", "{\"images\":[]}", "application/json", 400,
       "\"images\" is empty: send at least one image"},
      {"another JSON shape", "{\"pixels\":[1,2,3]}", "application/json", 400,
       "expected JSON {\"images\": [[784 values 0-255], ...]}"},
      {"not JSON", "hello, model", "text/plain", 400,
       "the body is neither JSON {\"images\": [[784 values 0-255], ...]} nor a PNG image"},
      {"JSON nested a million deep", std::string(1000000, '['), "application/json", 400,
       "the body is not JSON {\"images\": [[784 values 0-255], ...]} ("},
      {"not an image", std::string("\x89PNG\r\n\x1a\n", 8) + "not really a PNG", "image/png", 400,
       "not a valid PNG image: "},
      {"another image type", "\xff\xd8\xff\xe0 jpeg", "image/jpeg", 415,
       "image/jpeg is not supported: send a PNG image or JSON"},
      {"a decompression bomb", bombPng(), "image/png", 413,
       "image of 20000x20000 pixels is over the limit of 4194304 pixels"},
  };
  for (const auto& bad : cases) {
    const auto start = std::chrono::steady_clock::now();
    auto answer = httpPost(port, "/predict", bad.body, bad.contentType);
    BOOST_TEST_CONTEXT(bad.what) {
      BOOST_TEST(answer.status == bad.status);
      BOOST_TEST(errorOf(answer).rfind(bad.message, 0) == 0, "answered: " << answer.body);
      BOOST_TEST(std::count(answer.body.begin(), answer.body.end(), '\n') == 1);
      const bool prompt = std::chrono::steady_clock::now() - start < std::chrono::seconds(4);
      BOOST_TEST(prompt, "answered while the slow clients are held");
    }
  }
  // A body over the limit is refused from its Content-Length, before a byte of it is read.
  auto huge = rawRequest(port, postHead("104857600"));
  BOOST_TEST(huge.rfind("HTTP/1.1 413 Request Entity Too Large\r\n", 0) == 0, huge);
  BOOST_TEST(contains(huge, "{\"error\":\"the body is over the limit of 8388608 bytes\"}\n"), huge);
  BOOST_TEST(httpGet(port, "/predict").status == 405);

  auto silentAnswer = silent.get();
  BOOST_TEST(silentAnswer.rfind("HTTP/1.1 408 Request Time-out\r\n", 0) == 0, silentAnswer);
  BOOST_TEST(contains(silentAnswer, "{\"error\":\"the body did not arrive within 5 s\"}\n"),
             silentAnswer);
  auto tricklingAnswer = trickling.get();
  BOOST_TEST(tricklingAnswer.rfind("HTTP/1.1 408", 0) == 0, tricklingAnswer);

  // Training went on through all of it, and completes; then worker 0 predicts.
  BOOST_TEST(run.status()->getValue<std::uint64_t>("global_step") > stepBefore);
  const std::string result = run.logs.file("worker-0/result.json");
  BOOST_REQUIRE(waitFor([&] { return !readText(result).empty(); }, std::chrono::seconds(480)));
  // Worker 0 writes result.json, then says it has completed.
  BOOST_TEST(waitFor([&] { return run.status()->getValue<std::string>("state") == "completed"; },
                     std::chrono::seconds(10)));
  auto summary = pstrain::app::summaryFromJson(readText(result));
  BOOST_TEST(summary.globalStep == std::uint64_t(kTrainSteps));
  BOOST_REQUIRE(waitFor([&] { return httpPost(port, "/predict", barPng(), "image/png").status == 200; },
                        std::chrono::seconds(10)));
  auto predicted = parseObject(httpPost(port, "/predict", barPng(), "image/png").body);
  BOOST_TEST(predicted->getArray("predictions")->size() == 1u);
  BOOST_TEST(predicted->getArray("probabilities")->getArray(0)->size() == 10u);
  probe = runPstrain({"status", "--wait", "10", "--predict", chief});
  BOOST_TEST(probe.exitCode == 0, probe.err);
  BOOST_TEST(contains(probe.out, "  predict: 200 {\"predictions\":["), probe.out);
  auto model = parseObject(httpGet(port, "/model").body);
  BOOST_TEST(predicted->getArray("labels")->size() == 1u);
  auto page = httpGet(port, "/");
  BOOST_TEST(page.status == 200);
  BOOST_TEST(contains(page.body, "<canvas id=\"draw\""));  // ci/ui-test.sh drives it
  BOOST_TEST(model->getValue<std::string>("source") == run.logs.file("worker-0/model.bin"));
  // Every metric of worker 0, the model server's among them, says whose it is, so that one
  // query can select a process's.
  auto samples = parsePrometheus(httpGet(port, "/metrics").body);
  BOOST_TEST(samples.count("pstrain_inference_requests_total{code=\"200\",ordinal=\"0\","
                           "role=\"worker\",route=\"/predict\"}") == 1u);
  for (const auto& [sample, value] : samples) {
    BOOST_TEST((contains(sample, "ordinal=\"0\"") && contains(sample, "role=\"worker\"")), sample);
  }
}

// 200 clients at once, each POSTing 200 images (urllib's way: the whole body, then the answer),
// to a server of 16 threads and a queue of 64: those beyond both were closed unanswered, a
// reset for a client that has sent its request (91 of 200). Each gets an answer now, 200 or 503
// with Retry-After and a JSON error, and the server answers the next request.
BOOST_AUTO_TEST_CASE(a_burst_beyond_the_threads_and_the_queue_is_answered_503_never_reset) {
  TempDir dir;
  ServeProcess serve(writeTestModel(dir.file("model.bin")));
  BOOST_REQUIRE(waitFor([&] { return httpGet(serve.port, "/readyz").status == 200; },
                        std::chrono::seconds(20)));
  const std::vector<std::uint8_t> pixels(200 * 784, 0);
  const std::string body = imagesJson(pixels.data(), 200);
  const std::string head =
      "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  constexpr int kClients = 200;
  Gate gate(kClients);
  std::vector<std::future<std::string>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::async(std::launch::async, burstClient, serve.port, std::cref(head),
                                 std::cref(body), std::ref(gate)));
  }
  int answered = 0, refused = 0;
  std::vector<std::string> others;
  for (auto& client : clients) {
    const std::string answer = client.get();
    if (answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0) {
      ++answered;
    } else if (answer.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0 &&
               contains(answer, "\r\nRetry-After: 1\r\n") &&
               contains(answer, "\r\n\r\n{\"error\":\"the server is busy: ")) {
      ++refused;
    } else {
      others.push_back(answer.substr(0, answer.find("\r\n")));
    }
  }
  BOOST_TEST_MESSAGE(answered << " answered, " << refused << " refused with 503, " << others.size()
                              << " neither (reset or closed unanswered, or another answer)");
  BOOST_TEST(others.empty(), "the first: \"" << (others.empty() ? "" : others.front()) << "\"");
  BOOST_TEST(answered >= 16);
  BOOST_TEST(refused > 0);  // the burst went beyond the threads and the queue
  BOOST_TEST(httpPost(serve.port, "/predict", imagesJson(pixels.data(), 1)).status == 200);
}
