// Measures one linear layer, fp32 against int8 on each of LibTorch's quantized CPU engines, at the
// shapes of beam-search decoding (docs/quantization.md says which engine mixseq uses and why).
// int8 "static" is ATen's way of running quantized::linear: quantize the input to quint8 with
// at::quantize_per_tensor, quantized::linear with a calibrated output scale, Tensor::dequantize;
// "static_mixseq" is what QuantizableLinear runs, the same with mixseq's vectorized quantize and
// dequantize (nn/int8_activation.h); "dynamic" is quantized::linear_dynamic (input range
// measured at every call, fp32 out). Prints one JSON line per engine and shape.
//
//   int8_linear_bench [--threads N]
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <iostream>
#include <string>

#include "mixseq/nn/int8_activation.h"
#include "mixseq/util/threads.h"

namespace {

using PackedWeight = c10::intrusive_ptr<LinearPackedParamsBase>;

struct Shape {
  const char* name;
  int64_t m, k, n;  // rows (sentences x beam), input and output features
};

// Beam 5 x batch 16 = 80 rows, and batch 1 = 5 rows: GNMT (H 256) gate products and classifier,
// Transformer (D 256, ffn 1024) projections and feed-forward.
const Shape kShapes[] = {{"gnmt_gates_80", 80, 256, 1024},     {"gnmt_classifier_80", 80, 256, 2000},
                         {"transformer_proj_80", 80, 256, 256}, {"transformer_fc2_80", 80, 1024, 256},
                         {"gnmt_gates_5", 5, 256, 1024},       {"transformer_proj_5", 5, 256, 256}};

template <typename F>
double microseconds_per_call(F&& f) {
  for (int i = 0; i < 20; ++i) f();
  const int repeats = 300;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / repeats;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::stoi(argv[i + 1]);
  threads = mixseq::configure_threads(threads);
  auto& dispatcher = c10::Dispatcher::singleton();
  const auto prepack = dispatcher.findSchemaOrThrow("quantized::linear_prepack", "")
                           .typed<PackedWeight(at::Tensor, c10::optional<at::Tensor>)>();
  const auto linear = dispatcher.findSchemaOrThrow("quantized::linear", "")
                          .typed<at::Tensor(at::Tensor, const PackedWeight&, double, int64_t)>();
  const auto dynamic = dispatcher.findSchemaOrThrow("quantized::linear_dynamic", "")
                           .typed<at::Tensor(at::Tensor, const PackedWeight&, bool)>();
  for (const auto engine : at::globalContext().supportedQEngines()) {
    if (engine == at::QEngine::NoQEngine) continue;
    at::globalContext().setQEngine(engine);
    for (const auto& s : kShapes) {
      at::manual_seed(0);
      const auto x = at::randn({s.m, s.k}), w = at::randn({s.n, s.k}) * 0.05, b = at::randn({s.n});
      const auto y = at::linear(x, w, b);
      const auto w_scales = (std::get<0>(w.abs().max(1)) / 127).to(at::kDouble);
      // QNNPACK takes per-tensor weights only.
      const auto qw = engine == at::QEngine::QNNPACK
                          ? at::quantize_per_tensor(w, w.abs().max().item<double>() / 127, 0, at::kQInt8)
                          : at::quantize_per_channel(w, w_scales, at::zeros({s.n}, at::kLong), 0, at::kQInt8);
      const PackedWeight packed = prepack.call(qw, b);
      // Its own packed weight: in LibTorch 1.13 a static call on a weight left later dynamic calls on
      // it returning NaN (oneDNN) or wrong values (QNNPACK) here.
      const PackedWeight dynamic_packed = prepack.call(qw, b);
      const double x_scale = (x.max() - x.min()).item<double>() / 255, y_scale = (y.max() - y.min()).item<double>() / 255;
      const auto x_zero = static_cast<int64_t>(std::round(-x.min().item<double>() / x_scale));
      const auto y_zero = static_cast<int64_t>(std::round(-y.min().item<double>() / y_scale));
      const auto run_static = [&] {
        return linear.call(at::quantize_per_tensor(x, x_scale, x_zero, at::kQUInt8), packed, y_scale, y_zero).dequantize();
      };
      const auto run_static_mixseq = [&] {
        return mixseq::dequantize_activation(
            linear.call(mixseq::quantize_activation(x, x_scale, x_zero), packed, y_scale, y_zero));
      };
      const auto run_dynamic = [&] { return dynamic.call(x, dynamic_packed, /*reduce_range=*/false); };
      nlohmann::json record = {
          {"bench", "int8_linear"},
          {"engine", c10::toString(engine)},
          {"shape", s.name},
          {"m", s.m}, {"k", s.k}, {"n", s.n},
          {"threads", threads},
          {"fp32_us", microseconds_per_call([&] { return at::linear(x, w, b); })},
          {"int8_static_us", microseconds_per_call(run_static)},
          {"int8_static_mixseq_us", microseconds_per_call(run_static_mixseq)},
          {"int8_dynamic_us", microseconds_per_call(run_dynamic)},
          {"int8_static_max_error", (run_static() - y).abs().max().item<double>()},
          {"int8_static_mixseq_equal", at::equal(run_static_mixseq(), run_static())},
          {"int8_dynamic_max_error", (run_dynamic() - y).abs().max().item<double>()},
          {"output_step", y_scale}};
      std::cout << record.dump() << std::endl;
    }
  }
  return 0;
}
