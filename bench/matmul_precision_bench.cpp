// Measures matrix-product throughput per precision on this machine, to decide which precision
// mixseq should train in here: fp32, bf16 under autocast (AMX or AVX512-BF16 make it fast on
// CPUs that have them), and fp16/tf32 on a GPU. Prints one JSON line per shape and precision.
//
//   matmul_precision_bench [--threads N] [--device cpu|cuda]
// Like mixseq, it first puts OpenBLAS on the widest kernels the CPU runs (util/cpu_kernels.h), unless
// OPENBLAS_CORETYPE says otherwise; each line names the BLAS core and oneDNN's instruction set.
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>

#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/threads.h"
#include "util/torch_compat.h"

namespace {

struct Shape {
  const char* name;
  int64_t m, k, n;
};

// Square products, a GNMT-size LSTM step at batch 128 and its output layer over 32 x 50 tokens.
const Shape kShapes[] = {{"square_1024", 1024, 1024, 1024},
                         {"lstm_gates_h1024", 128, 2048, 4096},
                         {"classifier_v32k", 1600, 1024, 32000}};

// The best of 5 rounds of `repeats` products, after at least 0.3 s of warm-up. The first products
// of a process run at half speed or less (measured on a 2-core AMD EPYC, family 26: 95-107 GFLOP/s
// for fp32 1024^3 after two warm-up calls, 196-197 after this warm-up, OpenBLAS Haswell both times):
// the BLAS's thread pool and buffers start, and a virtual CPU wakes up. A mean over the first ten
// calls measured that start-up, not the product.
double seconds_per_product(const at::Tensor& a, const at::Tensor& b, int repeats) {
  const auto sync = [&] {
    if (a.is_cuda()) torch::cuda::synchronize();
  };
  const auto warm_up_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2 || std::chrono::steady_clock::now() - warm_up_start < std::chrono::milliseconds(300); ++i) {
    at::matmul(a, b);  // packing buffers, oneDNN kernels, the thread pool
    sync();
  }
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) at::matmul(a, b);
    sync();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const auto& kernels = mixseq::choose_cpu_kernels();
  int threads = 0;
  std::string device_name = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--device")) device_name = argv[i + 1];
  }
  threads = mixseq::configure_threads(threads);
  const auto device = device_name == "cuda" ? at::kCUDA : at::kCPU;
  for (const auto& shape : kShapes) {
    const auto a = at::randn({shape.m, shape.k}, at::device(device));
    const auto b = at::randn({shape.k, shape.n}, at::device(device));
    const double flops = 2.0 * shape.m * shape.k * shape.n;
    const int repeats = device == at::kCUDA ? 50 : std::max(2, static_cast<int>(2e10 / flops));
    for (const auto& [precision, dtype] :
         {std::pair{"fp32", at::kFloat}, std::pair{"bf16_autocast", at::kBFloat16}, std::pair{"fp16_autocast", at::kHalf}}) {
      if (device == at::kCPU && dtype == at::kHalf) continue;  // no fast fp16 matmul on CPUs
      const bool autocast = dtype != at::kFloat;
      mixseq::compat::set_autocast(device, autocast, autocast ? dtype : at::kBFloat16);
      const double seconds = seconds_per_product(a, b, repeats);
      mixseq::compat::set_autocast(device, false, at::kBFloat16);
      std::cout << nlohmann::json{{"bench", "matmul_precision"}, {"device", device_name}, {"shape", shape.name},
                                  {"precision", precision}, {"threads", threads}, {"ms", seconds * 1e3},
                                  {"gflop_per_s", flops / seconds / 1e9}, {"blas_core", kernels.blas_core},
                                  {"blas_core_was", kernels.blas_core_was}, {"onednn_isa", kernels.onednn_isa}}
                       .dump()
                << std::endl;
    }
  }
}
