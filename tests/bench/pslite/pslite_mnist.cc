// ps-lite yardstick for `pstrain local`: asynchronous parameter servers over ps-lite (dmlc/ps-lite,
// MXNet's parameter server, on ZeroMQ), doing the work of tests/bench/torch_ps.py in C++.
//
// Launches 1 scheduler, P servers and W workers as local processes (this binary again, its role in
// DMLC_ROLE), all bound to 127.0.0.1, and trains pstrain's model the same way:
// - the flat float32 parameter vector of the MLP 784 -> hidden (ReLU) ... -> 10 (softmax
//   cross-entropy; pstrain's layout: per layer the weights, column-major out x in, then the bias;
//   He-normal hidden weights, Glorot-uniform output weights, zero biases, from --seed) is cut into
//   P contiguous slices [n*s/P, n*(s+1)/P). Slice s lives on server s under the key at the start
//   of ps-lite's key range of server s (one value of length n_s), beside a second key holding that
//   server's global step (one value), so ps-lite's default slicer sends each server its part.
// - a server's request handle (a KVServer, as ps-lite's examples set) applies Adam (pstrain's
//   form: lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)) to each pushed gradient
//   slice, one global step per applied push and none past --train-steps, and answers a pull with
//   its slice and its step.
// - worker j trains on the contiguous part j of W of the training set (batches from a fresh
//   shuffle per epoch): it pulls all slices, then each step computes a batch's gradient and does
//   one ZPushPull of the whole gradient (every server gets its slice, at once) and waits for the
//   updated parameters, until every server reports --train-steps. Worker 0 then pulls the final
//   model and evaluates it on the test set.
//
// Run:   build/pslite_mnist [--ps 2] [--workers 2] [--train-steps 3000] [--batch-size 100]
//            [--hidden-units 128] [--learning-rate 0.001] [--seed 1]
//            [--data-dir /usr/share/datasets/fashion-mnist] [--summary-json FILE] [--timeout 600]
// Prints one JSON object (to stdout, or to --summary-json FILE):
//   {"global_step", "test_accuracy", "training_elapsed_s", "global_steps_per_s", "ps", "workers"}
// timed as pstrain and torch_ps.py do: worker 0's training loop, from its first step to the end.
// The launcher ends its children by PID on a failure or after --timeout seconds, and reports an
// error in one line with a non-zero exit.

#include <armadillo>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ps/ps.h"

namespace {

constexpr int kInputs = 28 * 28;
constexpr int kClasses = 10;
constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;

struct Options {
  int ps = 2, workers = 2, trainSteps = 3000, batchSize = 100, seed = 1, timeout = 600;
  std::vector<int> hidden{128};
  double learningRate = 0.001;
  std::string dataDir = "/usr/share/datasets/fashion-mnist", summaryJson, result;
};

int positiveInt(const std::string& flag, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 9 || std::stoi(text) == 0)
    throw std::invalid_argument(flag + ": '" + text + "' is not a positive integer");
  return std::stoi(text);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--ps") o.ps = positiveInt(flag, value);
    else if (flag == "--workers") o.workers = positiveInt(flag, value);
    else if (flag == "--train-steps") o.trainSteps = positiveInt(flag, value);
    else if (flag == "--batch-size") o.batchSize = positiveInt(flag, value);
    else if (flag == "--timeout") o.timeout = positiveInt(flag, value);
    else if (flag == "--seed") o.seed = std::stoi(value);
    else if (flag == "--learning-rate") o.learningRate = std::stod(value);
    else if (flag == "--data-dir") o.dataDir = value;
    else if (flag == "--summary-json") o.summaryJson = value;
    else if (flag == "--result") o.result = value;  // set by the launcher
    else if (flag == "--hidden-units") {
      o.hidden.clear();
      std::stringstream parts(value);
      for (std::string part; std::getline(parts, part, ',');)
        o.hidden.push_back(positiveInt(flag, part));
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  return o;
}

// ---- data -----------------------------------------------------------------------------------

// An unsigned-byte IDX file `name` or `name.gz` in `dir`: its values and its first dimension.
std::vector<uint8_t> readIdx(const std::string& dir, const std::string& name, size_t* items) {
  std::string path = dir + "/" + name;
  if (access(path.c_str(), R_OK) != 0) path += ".gz";
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!f) throw std::runtime_error("no " + name + " or " + name + ".gz in " + dir);
  std::vector<uint8_t> data;
  uint8_t buffer[1 << 16];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) data.insert(data.end(), buffer, buffer + n);
  gzclose(f);
  if (data.size() < 4 || data[0] || data[1] || data[2] != 8)
    throw std::runtime_error(path + ": not an unsigned-byte IDX file");
  size_t dims = data[3], count = 1, offset = 4 + 4 * dims;
  if (data.size() < offset) throw std::runtime_error(path + ": truncated header");
  for (size_t d = 0; d < dims; ++d) {
    size_t size = (size_t(data[4 + 4 * d]) << 24) | (data[5 + 4 * d] << 16) |
                  (data[6 + 4 * d] << 8) | data[7 + 4 * d];
    if (d == 0) *items = size;
    count *= size;
  }
  if (data.size() - offset != count) throw std::runtime_error(path + ": size does not match header");
  return std::vector<uint8_t>(data.begin() + offset, data.end());
}

struct DataSet {
  std::vector<uint8_t> images;  // n x 784, row-major: example i is column i of a 784 x n matrix
  std::vector<uint8_t> labels;
  size_t size() const { return labels.size(); }
};

// The set `prefix` ("train" or "t10k"), or its contiguous part `index` of `parts` as pstrain cuts it.
DataSet loadSet(const std::string& dir, const std::string& prefix, size_t index = 0, size_t parts = 1) {
  size_t imageCount = 0, labelCount = 0;
  auto images = readIdx(dir, prefix + "-images-idx3-ubyte", &imageCount);
  auto labels = readIdx(dir, prefix + "-labels-idx1-ubyte", &labelCount);
  if (imageCount != labelCount || images.size() != imageCount * kInputs)
    throw std::runtime_error(dir + ": " + prefix + " images do not fit the labels");
  size_t begin = labelCount * index / parts, end = labelCount * (index + 1) / parts;
  DataSet set;
  set.images.assign(images.begin() + begin * kInputs, images.begin() + end * kInputs);
  set.labels.assign(labels.begin() + begin, labels.begin() + end);
  return set;
}

// Batches of example indices: a fresh shuffle each epoch, batches straddle epochs.
class BatchSampler {
 public:
  BatchSampler(size_t count, size_t batchSize, uint64_t seed)
      : rng_(seed), order_(count), position_(count), batchSize_(batchSize) {
    std::iota(order_.begin(), order_.end(), 0);
  }
  const std::vector<size_t>& next() {
    batch_.clear();
    while (batch_.size() < batchSize_) {
      if (position_ == order_.size()) {
        std::shuffle(order_.begin(), order_.end(), rng_);
        position_ = 0;
      }
      batch_.push_back(order_[position_++]);
    }
    return batch_;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<size_t> order_, batch_;
  size_t position_, batchSize_;
};

// ---- model ----------------------------------------------------------------------------------

class Mlp {
 public:
  explicit Mlp(const std::vector<int>& hidden) {
    sizes_.push_back(kInputs);
    sizes_.insert(sizes_.end(), hidden.begin(), hidden.end());
    sizes_.push_back(kClasses);
    for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
      offsets_.push_back(count_);
      count_ += size_t(sizes_[l]) * sizes_[l + 1] + sizes_[l + 1];
    }
    activations_.resize(sizes_.size());
  }
  size_t parameterCount() const { return count_; }

  std::vector<float> initialParameters(int seed) const {
    std::mt19937_64 rng(seed);
    std::vector<float> flat(count_, 0.0f);
    for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
      size_t in = sizes_[l], out = sizes_[l + 1];
      float* w = flat.data() + offsets_[l];
      if (l + 2 < sizes_.size()) {
        std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / in));
        for (size_t i = 0; i < in * out; ++i) w[i] = normal(rng);
      } else {
        float limit = std::sqrt(6.0f / (in + out));
        std::uniform_real_distribution<float> uniform(-limit, limit);
        for (size_t i = 0; i < in * out; ++i) w[i] = uniform(rng);
      }
    }
    return flat;
  }

  // Logits (10 x batch) of x (784 x batch); keeps every layer's output for backward().
  const arma::fmat& forward(const float* flat, const arma::fmat& x) {
    activations_[0] = x;  // a copy: 784 x batch floats, small beside the products
    for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
      arma::fmat w(const_cast<float*>(flat) + offsets_[l], sizes_[l + 1], sizes_[l], false, true);
      arma::fvec b(const_cast<float*>(flat) + offsets_[l] + w.n_elem, sizes_[l + 1], false, true);
      arma::fmat& z = activations_[l + 1];
      z = w * activations_[l];
      z.each_col() += b;
      if (l + 2 < sizes_.size()) z.transform([](float v) { return v > 0.0f ? v : 0.0f; });
    }
    return activations_.back();
  }

  // Writes the gradient of the batch's mean cross-entropy into grad (parameterCount floats).
  void gradient(const float* flat, const arma::fmat& x, const uint8_t* labels, float* grad) {
    const arma::fmat& logits = forward(flat, x);
    const size_t batch = x.n_cols;
    arma::fmat g = logits;
    for (size_t c = 0; c < batch; ++c) {
      float* col = g.colptr(c);
      float top = *std::max_element(col, col + kClasses), sum = 0.0f;
      for (int k = 0; k < kClasses; ++k) sum += (col[k] = std::exp(col[k] - top));
      for (int k = 0; k < kClasses; ++k) col[k] /= sum;
      col[labels[c]] -= 1.0f;
    }
    g /= float(batch);
    for (size_t l = sizes_.size() - 1; l-- > 0;) {
      arma::fmat dw(grad + offsets_[l], sizes_[l + 1], sizes_[l], false, true);
      arma::fvec db(grad + offsets_[l] + dw.n_elem, sizes_[l + 1], false, true);
      dw = g * activations_[l].t();
      db = arma::sum(g, 1);
      if (l == 0) break;
      arma::fmat w(const_cast<float*>(flat) + offsets_[l], sizes_[l + 1], sizes_[l], false, true);
      arma::fmat back = w.t() * g;
      back %= arma::conv_to<arma::fmat>::from(activations_[l] > 0.0f);
      g = std::move(back);
    }
  }

  double accuracy(const float* flat, const DataSet& set) {
    size_t correct = 0;
    for (size_t start = 0; start < set.size(); start += 1000) {
      size_t n = std::min<size_t>(1000, set.size() - start);
      arma::fmat x = arma::conv_to<arma::fmat>::from(
          arma::Mat<uint8_t>(const_cast<uint8_t*>(set.images.data()) + start * kInputs, kInputs, n,
                             false, true)) / 255.0f;
      const arma::fmat& logits = forward(flat, x);
      for (size_t c = 0; c < n; ++c)
        correct += logits.col(c).index_max() == set.labels[start + c];
    }
    return double(correct) / set.size();
  }

 private:
  std::vector<int> sizes_;
  std::vector<size_t> offsets_;
  size_t count_ = 0;
  std::vector<arma::fmat> activations_;
};

size_t sliceBegin(size_t count, int servers, int s) { return count * s / servers; }

// ---- server ---------------------------------------------------------------------------------

// Server s's slice of the parameters, its Adam state and its global step.
struct Shard {
  ps::Key paramKey, stepKey;
  std::vector<float> params, m, v;
  int step = 0, trainSteps;
  double learningRate, beta1Power = 1.0, beta2Power = 1.0;

  void apply(const float* g) {
    beta1Power *= kBeta1;
    beta2Power *= kBeta2;
    const float stepSize = float(learningRate * std::sqrt(1.0 - beta2Power) / (1.0 - beta1Power));
    float* __restrict p = params.data();
    float* __restrict pm = m.data();
    float* __restrict pv = v.data();
    for (size_t i = 0, n = params.size(); i < n; ++i) {
      pm[i] = kBeta1 * pm[i] + (1.0f - kBeta1) * g[i];
      pv[i] = kBeta2 * pv[i] + (1.0f - kBeta2) * g[i] * g[i];
      p[i] -= stepSize * pm[i] / (std::sqrt(pv[i]) + kEpsilon);
    }
    ++step;
  }

  // ps-lite's request handle: runs on the server's one customer thread, request after request.
  void handle(const ps::KVMeta& meta, const ps::KVPairs<float>& request,
              ps::KVServer<float>* server) {
    CHECK_EQ(request.keys.size(), 2u);
    CHECK_EQ(request.keys[0], paramKey);
    CHECK_EQ(request.keys[1], stepKey);
    if (meta.push) {
      CHECK_EQ(request.vals.size(), params.size() + 1);
      if (step < trainSteps) apply(request.vals.data());
    }
    ps::KVPairs<float> response;
    if (meta.pull) {
      // A copy: ps-lite sends the answer from its van thread, after this returns.
      response.keys = request.keys;
      response.vals.resize(params.size() + 1);
      std::memcpy(response.vals.data(), params.data(), params.size() * sizeof(float));
      response.vals[params.size()] = float(step);
      response.lens = ps::SArray<int>(std::vector<int>{int(params.size()), 1});
    }
    server->Response(meta, response);
  }
};

void runServer(const Options& o) {
  Mlp mlp(o.hidden);
  const int s = ps::MyRank();
  const size_t n = mlp.parameterCount();
  const size_t begin = sliceBegin(n, o.ps, s), end = sliceBegin(n, o.ps, s + 1);
  auto* shard = new Shard;
  shard->paramKey = ps::Postoffice::Get()->GetServerKeyRanges()[s].begin();
  shard->stepKey = shard->paramKey + 1;
  auto initial = mlp.initialParameters(o.seed);
  shard->params.assign(initial.begin() + begin, initial.begin() + end);
  shard->m.assign(end - begin, 0.0f);
  shard->v.assign(end - begin, 0.0f);
  shard->trainSteps = o.trainSteps;
  shard->learningRate = o.learningRate;
  auto* server = new ps::KVServer<float>(0);
  server->set_request_handle(
      [shard](const ps::KVMeta& meta, const ps::KVPairs<float>& request,
              ps::KVServer<float>* srv) { shard->handle(meta, request, srv); });
  ps::RegisterExitCallback([server, shard]() {
    delete server;
    delete shard;
  });
}

// ---- worker ---------------------------------------------------------------------------------

void runWorker(const Options& o) {
  const int rank = ps::MyRank();
  Mlp mlp(o.hidden);
  const size_t n = mlp.parameterCount();
  DataSet train = loadSet(o.dataDir, "train", rank, o.workers);
  BatchSampler sampler(train.size(), o.batchSize, uint64_t(o.seed) + 1 + rank);
  ps::KVWorker<float> kv(0, 0);

  // Two keys per server: its slice of the parameters (n_s values) and its step (1 value). On the
  // wire the values of all keys follow each other: slice 0, step 0, slice 1, step 1, ...
  const auto& ranges = ps::Postoffice::Get()->GetServerKeyRanges();
  std::vector<ps::Key> keyList;
  std::vector<int> lenList;
  for (int s = 0; s < o.ps; ++s) {
    keyList.push_back(ranges[s].begin());
    keyList.push_back(ranges[s].begin() + 1);
    lenList.push_back(int(sliceBegin(n, o.ps, s + 1) - sliceBegin(n, o.ps, s)));
    lenList.push_back(1);
  }
  ps::SArray<ps::Key> keys(keyList);
  ps::SArray<int> lens(lenList), answeredLens;
  ps::SArray<float> pushed(n + o.ps, 0.0f), answer;
  std::vector<float> params(n), grad(n);
  std::vector<int> steps(o.ps, 0);

  auto unpack = [&]() {
    CHECK_EQ(answer.size(), n + o.ps);
    for (int s = 0; s < o.ps; ++s) {
      size_t b = sliceBegin(n, o.ps, s), e = sliceBegin(n, o.ps, s + 1);
      std::memcpy(params.data() + b, answer.data() + b + s, (e - b) * sizeof(float));
      steps[s] = int(answer[e + s]);
    }
  };

  kv.Wait(kv.ZPull(keys, &answer, &answeredLens));
  unpack();
  arma::fmat x(kInputs, o.batchSize);
  std::vector<uint8_t> labels(o.batchSize);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double computeSeconds = 0, communicationSeconds = 0;
  int localSteps = 0;
  while (*std::min_element(steps.begin(), steps.end()) < o.trainSteps) {
    const auto computeStart = Clock::now();
    const auto& batch = sampler.next();
    for (int c = 0; c < o.batchSize; ++c) {
      const uint8_t* image = train.images.data() + batch[c] * kInputs;
      float* column = x.colptr(c);
      for (int i = 0; i < kInputs; ++i) column[i] = image[i] * (1.0f / 255.0f);
      labels[c] = train.labels[batch[c]];
    }
    mlp.gradient(params.data(), x, labels.data(), grad.data());
    for (int s = 0; s < o.ps; ++s) {
      size_t b = sliceBegin(n, o.ps, s), e = sliceBegin(n, o.ps, s + 1);
      std::memcpy(pushed.data() + b + s, grad.data() + b, (e - b) * sizeof(float));
    }
    const auto communicationStart = Clock::now();
    kv.Wait(kv.ZPushPull(keys, pushed, &answer, &answeredLens));
    unpack();
    const auto stepEnd = Clock::now();
    computeSeconds += std::chrono::duration<double>(communicationStart - computeStart).count();
    communicationSeconds += std::chrono::duration<double>(stepEnd - communicationStart).count();
    ++localSteps;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (rank == 0) {
    kv.Wait(kv.ZPull(keys, &answer, &answeredLens));  // every server has stopped: the final model
    unpack();
    const int globalStep = *std::min_element(steps.begin(), steps.end());
    DataSet test = loadSet(o.dataDir, "t10k");
    std::ofstream out(o.result);
    char text[512];
    std::snprintf(text, sizeof text,
                  "{\"global_step\": %d, \"test_accuracy\": %.4f, \"training_elapsed_s\": %.3f, "
                  "\"global_steps_per_s\": %.2f, \"ps\": %d, \"workers\": %d, "
                  "\"compute_ms_per_step\": %.4f, \"communication_ms_per_step\": %.4f}",
                  globalStep, mlp.accuracy(params.data(), test), elapsed, globalStep / elapsed,
                  o.ps, o.workers, 1e3 * computeSeconds / std::max(localSteps, 1),
                  1e3 * communicationSeconds / std::max(localSteps, 1));
    out << text << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + o.result);
  }
}

int runChild(const Options& o) {
  ps::Start(0);
  if (ps::IsServer()) runServer(o);
  if (ps::IsWorker()) runWorker(o);
  ps::Finalize(0, true);  // a barrier: servers serve until every worker is done
  return 0;
}

// ---- launcher -------------------------------------------------------------------------------

int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("no free port on 127.0.0.1");
  close(fd);
  return ntohs(address.sin_port);
}

std::string lastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last = "no output";
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int launch(int argc, char** argv, const Options& o) {
  Mlp mlp(o.hidden);
  if (size_t(o.ps) * 2 > mlp.parameterCount())
    throw std::invalid_argument(std::to_string(o.ps) + " servers for " +
                                std::to_string(mlp.parameterCount()) + " parameters");
  // Bad data fails here, in one line, not in every child.
  size_t examples = loadSet(o.dataDir, "train").size();
  loadSet(o.dataDir, "t10k");
  if (size_t(o.workers) > examples) throw std::invalid_argument("more workers than examples");

  char pattern[] = "/tmp/pslite_mnist.XXXXXX";
  if (!mkdtemp(pattern)) throw std::runtime_error("cannot make a temporary directory");
  const std::string work = pattern, result = work + "/result.json";
  const std::string port = std::to_string(freePort());
  setenv("OPENBLAS_NUM_THREADS", "1", 0);  // one core's worth of BLAS per process, unless set

  char selfPath[4096];
  ssize_t selfLength = readlink("/proc/self/exe", selfPath, sizeof selfPath - 1);
  if (selfLength <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  const std::string self(selfPath, selfLength);  // the children are named as this binary

  struct Child { std::string name, log; pid_t pid; };
  std::vector<Child> children;
  auto spawn = [&](const std::string& role, int index) {
    Child child{role + std::to_string(index), work + "/" + role + std::to_string(index) + ".log", 0};
    std::vector<std::string> args(argv, argv + argc);
    args.push_back("--result");
    args.push_back(result);
    child.pid = fork();
    if (child.pid < 0) throw std::runtime_error("fork failed");
    if (child.pid == 0) {
      setenv("DMLC_ROLE", role.c_str(), 1);
      setenv("DMLC_PS_ROOT_URI", "127.0.0.1", 1);
      setenv("DMLC_PS_ROOT_PORT", port.c_str(), 1);
      setenv("DMLC_NODE_HOST", "127.0.0.1", 1);  // every node binds the loopback interface only
      setenv("DMLC_NUM_SERVER", std::to_string(o.ps).c_str(), 1);
      setenv("DMLC_NUM_WORKER", std::to_string(o.workers).c_str(), 1);
      FILE* log = std::fopen(child.log.c_str(), "w");
      if (log) {
        dup2(fileno(log), 1);
        dup2(fileno(log), 2);
      }
      std::vector<char*> raw;
      for (auto& a : args) raw.push_back(const_cast<char*>(a.c_str()));
      raw.push_back(nullptr);
      execv(self.c_str(), raw.data());
      _exit(127);
    }
    children.push_back(child);
  };

  std::string error;
  try {
    spawn("scheduler", 0);
    for (int s = 0; s < o.ps; ++s) spawn("server", s);
    for (int w = 0; w < o.workers; ++w) spawn("worker", w);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout);
    size_t running = children.size();
    while (running && error.empty()) {
      for (auto& child : children) {
        if (child.pid <= 0) continue;
        int status = 0;
        if (waitpid(child.pid, &status, WNOHANG) != child.pid) continue;
        child.pid = 0;
        --running;
        if (WIFSIGNALED(status))
          error = child.name + " was killed by signal " + std::to_string(WTERMSIG(status)) + ": " +
                  lastLine(child.log);
        else if (WEXITSTATUS(status))
          error = child.name + " exited with " + std::to_string(WEXITSTATUS(status)) + ": " +
                  lastLine(child.log);
      }
      if (running && error.empty()) {
        if (std::chrono::steady_clock::now() > deadline)
          error = "not done after " + std::to_string(o.timeout) + " s";
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  for (auto& child : children) {
    if (child.pid > 0) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, nullptr, 0);
    }
  }
  std::string summary = error.empty() ? readAll(result) : "";
  if (error.empty() && summary.empty()) error = "worker 0 wrote no result";
  std::system(("rm -rf '" + work + "'").c_str());
  if (!error.empty()) throw std::runtime_error(error);
  if (o.summaryJson.empty()) {
    std::fputs(summary.c_str(), stdout);
  } else {
    std::ofstream out(o.summaryJson);
    out << summary;
    if (!out.flush()) throw std::runtime_error("cannot write " + o.summaryJson);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o = parse(argc, argv);
    if (std::getenv("DMLC_ROLE")) return runChild(o);
    return launch(argc, argv, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pslite_mnist: error: %s\n", e.what());
    return 1;
  }
}
