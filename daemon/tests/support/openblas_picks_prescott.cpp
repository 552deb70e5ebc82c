// Preloaded into pstrain by blas_startup_test: OpenBLAS's own choice reads as Prescott, as on a VM
// whose CPU model OpenBLAS does not know; a core set in OPENBLAS_CORETYPE reads as OpenBLAS
// reports it. Each process image it is loaded into says so on stderr, with its process id.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

extern "C" char* openblas_get_corename() {
  static char prescott[] = "Prescott";
  if (!std::getenv("OPENBLAS_CORETYPE")) return prescott;
  using CoreName = char* (*)();
  static auto real = reinterpret_cast<CoreName>(dlsym(RTLD_NEXT, "openblas_get_corename"));
  return real();
}

__attribute__((constructor)) static void announce() {
  std::fprintf(stderr, "openblas_picks_prescott loaded in process %d\n", int(getpid()));
}
