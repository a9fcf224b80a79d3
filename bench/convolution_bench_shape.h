// What the convolution benchmarks share (spectral_conv_bench, conv1d_training_bench): a shape of
// Jasper's blocks from the command line, and the time a call takes.
//
//   PROGRAM [--threads N] [--batch 8] [--frames 200] [--channels 256]
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "mixseq/util/threads.h"

namespace mixseq::bench {

struct ConvolutionBenchShape {
  int threads = 0;  // as configure_threads set them
  int64_t batch = 8, frames = 200, channels = 256;
};

// Reads the flags above and sets the thread count (0: configure_threads' default).
inline ConvolutionBenchShape convolution_bench_shape(int argc, char** argv) {
  ConvolutionBenchShape shape;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) shape.threads = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--batch")) shape.batch = std::stoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--frames")) shape.frames = std::stoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--channels")) shape.channels = std::stoll(argv[i + 1]);
  }
  shape.threads = configure_threads(shape.threads);
  return shape;
}

// ms a call of f: the mean over at least 0.3 s and 3 calls, after `warmup` untimed calls.
template <typename F>
double milliseconds_per_call(F&& f, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) f();
  int repeats = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    f();
    ++repeats;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < 0.3 || repeats < 3);
  return elapsed / repeats * 1e3;
}

}  // namespace mixseq::bench
