// Single-precision GEMM speed of the OpenBLAS kernels in use (OPENBLAS_CORETYPE chooses them):
// a 1024^3 product and the two products of pstrain's 784-128-10 model's first layer at batch 100.
// Prints one line: the core name, then GFLOP/s per shape; with --core, the core name alone.
// Run by tests/bench/blas.sh.
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

extern "C" char* openblas_get_corename();

namespace {

struct Shape {
  const char* name;
  int m, n, k;
  CBLAS_TRANSPOSE transB;
};

// GFLOP/s of C(m x n) = A(m x k) * op(B), repeated for at least a quarter of a second.
double gflops(const Shape& s) {
  std::vector<float> a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f), c(size_t(s.m) * s.n);
  const int ldb = s.transB == CblasNoTrans ? s.k : s.n;
  auto multiply = [&] {
    cblas_sgemm(CblasColMajor, CblasNoTrans, s.transB, s.m, s.n, s.k, 1.0f, a.data(), s.m,
                b.data(), ldb, 0.0f, c.data(), s.m);
  };
  multiply();  // warm-up: buffers allocated, caches filled
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  long repeats = 0;
  double seconds = 0;
  do {
    multiply();
    ++repeats;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (seconds < 0.25);
  return 2.0 * s.m * s.n * s.k * double(repeats) / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--core") {
    std::printf("%s\n", openblas_get_corename());
    return 0;
  }
  const Shape shapes[] = {
      {"1024^3", 1024, 1024, 1024, CblasNoTrans},
      {"forward 128x784*784x100", 128, 100, 784, CblasNoTrans},
      {"gradient 128x100*(784x100)^T", 128, 784, 100, CblasTrans},
  };
  std::printf("%s", openblas_get_corename());
  for (const auto& shape : shapes) std::printf("\t%s %.1f", shape.name, gflops(shape));
  std::printf("\n");
}
