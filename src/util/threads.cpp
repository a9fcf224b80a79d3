#include "mixseq/util/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <thread>

namespace mixseq {
namespace {

// OpenBLAS is a dependency of LibTorch, not of mixseq: find its setter at run time, if loaded.
void set_openblas_threads(int threads) {
  using Setter = void (*)(int);
  if (auto setter = reinterpret_cast<Setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    setter(threads);
}

}  // namespace

int configure_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  set_openblas_threads(threads);
  static bool interop_set = false;  // LibTorch allows setting it once per process
  if (!interop_set) {
    at::set_num_interop_threads(threads);
    interop_set = true;
  }
  return threads;
}

}  // namespace mixseq
