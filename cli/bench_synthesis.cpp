#include "bench_synthesis.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>

#include "mixseq/criteria/synthesis_loss.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/optim/gradient_clipping.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/train/train_config.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/threads.h"
#include "bench_clock.h"

namespace mixseq::cli {
namespace {

// tts_bench.py's synthetic mels: N(-5.62, 1.98), as their inference_perf.py makes them.
constexpr double kMelMean = -5.62;
constexpr double kMelStd = 1.98;

struct SynthesisBench {
  TrainConfig config;
  torch::Device device{torch::kCPU};
  Precision precision = Precision::kFp32;
  SpeechSynthesizer model;
};

SynthesisBench open_bench(const SynthesisBenchArguments& arguments) {
  SynthesisBench bench;
  MIXSEQ_CHECK(!arguments.config.empty(), "bench: -c CONFIG names the speech synthesizer's training config");
  read_config_file(arguments.config, bench.config.fields());
  apply_config_overrides(arguments.overrides, bench.config.fields());
  bench.device = resolve_device(arguments.device, "--device");
  bench.precision = resolve_precision(arguments.precision, bench.device);
  configure_precision(bench.precision, bench.device);
  torch::manual_seed(static_cast<uint64_t>(arguments.seed));
  bench.model = build_speech_synthesizer(bench.config.model, 0);
  bench.model->to(bench.device);
  return bench;
}

// Their TextMelCollate on equal-length items: ids uniform in [1, n_symbols), the gate target 1 on
// the last frame.
struct RandomSynthesisBatch {
  torch::Tensor text, text_lengths, mels, gate;
};

RandomSynthesisBatch random_batch(const SynthesisBenchArguments& arguments, const SynthesisBench& bench) {
  RandomSynthesisBatch batch;
  const int64_t B = arguments.batch, F = bench.model->frame_bins();
  batch.text = torch::randint(1, bench.model->symbols(), {B, arguments.text_len}, torch::kLong).to(bench.device);
  batch.text_lengths = torch::full({B}, arguments.text_len, torch::kLong).to(bench.device);
  batch.mels = (torch::randn({B, F, arguments.mel_len}) * kMelStd + kMelMean).to(bench.device);  // [B, F, T]
  batch.gate = torch::zeros({B, arguments.mel_len});
  batch.gate.select(1, arguments.mel_len - 1).fill_(1.0);
  batch.gate = batch.gate.to(bench.device);
  return batch;
}

nlohmann::json common(const SynthesisBenchArguments& arguments, const SynthesisBench& bench, int threads) {
  return {{"model", bench.config.model.arch},
          {"params", count_parameters(*bench.model)},
          {"batch", arguments.batch},
          {"text_len", arguments.text_len},
          {"mel_len", arguments.mel_len},
          {"frame_bins", bench.model->frame_bins()},
          {"precision", precision_name(bench.precision)},
          {"device", bench.device.str()},
          {"threads", threads},
          {"blas_core", choose_cpu_kernels().blas_core}};
}

void check_shape(const SynthesisBenchArguments& arguments) {
  MIXSEQ_CHECK(arguments.batch >= 1 && arguments.text_len >= 1 && arguments.mel_len >= 2,
               "bench: needs --batch >= 1, --text-len >= 1 and --mel-len >= 2");
}

}  // namespace

// The body of their train.py loop, as tts_bench.py times it: forward (teacher forced), Tacotron2Loss,
// loss.item() and a NaN check, backward, clip_grad_norm_(1.0), Adam.
int bench_synthesis_train(const SynthesisBenchArguments& arguments, int threads) {
  check_shape(arguments);
  SynthesisBench bench = open_bench(arguments);
  auto optimizer = build_optimizer(bench.config.optim, bench.model->parameters());
  std::vector<RandomSynthesisBatch> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(random_batch(arguments, bench));
  const auto parameters = bench.model->parameters();
  bench.model->train();
  double loss_sum = 0;
  int64_t frames = 0;
  const auto step = [&](int64_t i, bool timed) {
    const RandomSynthesisBatch& batch = batches[static_cast<size_t>(i % 4)];
    if (bench.device.is_cpu()) adapt_threads_to_load();  // as the training loop does each update (docs/threads.md)
    optimizer->zero_grad();
    SynthesisOutput output;
    {
      const AutocastScope autocast(bench.precision, bench.device);
      output = bench.model->forward(batch.text, batch.text_lengths, batch.mels);
    }
    const auto loss = synthesis_loss(output.frames.to(torch::kFloat), output.frames_postnet.to(torch::kFloat),
                                     output.gate_logits.to(torch::kFloat), batch.mels, batch.gate);
    const double value = loss.total.item<double>();
    MIXSEQ_CHECK(std::isfinite(value), "bench train: the loss is ", value, " at step ", i);
    loss.total.backward();
    clip_gradient_norm(parameters, bench.config.clipping);
    optimizer->step();
    if (timed) {
      loss_sum += value;
      frames += arguments.batch * arguments.mel_len;
    }
  };
  auto part = time_after_warm_up(
      bench.device, arguments.profile_top, [&] { for (int64_t i = 0; i < arguments.warmup; ++i) step(i, false); },
      [&] { for (int64_t i = 0; i < arguments.steps; ++i) step(arguments.warmup + i, true); });
  const double seconds = part.seconds;
  auto record = common(arguments, bench, threads);
  record.update({{"bench", "train"},
                 {"optimizer", bench.config.optim.name},
                 {"clip", bench.config.clipping.max_norm},
                 {"steps", arguments.steps},
                 {"ms_per_step", seconds * 1e3 / static_cast<double>(arguments.steps)},
                 {"mel_frames_per_s", static_cast<double>(frames) / seconds},
                 {"decoder_steps_per_s", static_cast<double>(arguments.steps * arguments.mel_len) / seconds},
                 {"loss", loss_sum / static_cast<double>(arguments.steps)}});
  print_bench_record(record, part, arguments.profile_top, arguments.steps);
  return 0;
}

// Their Tacotron2.infer under no_grad in eval mode, mel_len decoder steps whatever the gate says
// (tts_bench.py --infer-steps with decoder_no_early_stopping).
int bench_synthesis_synthesize(const SynthesisBenchArguments& arguments, int threads) {
  check_shape(arguments);
  SynthesisBench bench = open_bench(arguments);
  bench.model->eval();
  torch::NoGradGuard no_grad;
  SynthesisOptions options;
  options.max_steps = arguments.mel_len;
  options.early_stop = false;
  std::vector<RandomSynthesisBatch> batches;
  for (int64_t i = 0; i < arguments.warmup + arguments.steps; ++i) batches.push_back(random_batch(arguments, bench));
  int64_t steps = 0, frames = 0;
  const auto synthesize = [&](int64_t i, bool timed) {
    if (bench.device.is_cpu()) adapt_threads_to_load();
    Synthesis synthesis;
    {
      const AutocastScope autocast(bench.precision, bench.device);
      const auto& batch = batches[static_cast<size_t>(i)];
      synthesis = bench.model->infer(batch.text, batch.text_lengths, options);
    }
    if (timed) {
      steps += synthesis.frames.size(2);
      frames += synthesis.frames.size(0) * synthesis.frames.size(2);
    }
  };
  auto part = time_after_warm_up(
      bench.device, arguments.profile_top, [&] { for (int64_t i = 0; i < arguments.warmup; ++i) synthesize(i, false); },
      [&] { for (int64_t i = 0; i < arguments.steps; ++i) synthesize(arguments.warmup + i, true); });
  const double seconds = part.seconds;
  auto record = common(arguments, bench, threads);
  record.update({{"bench", "synthesize"},
                 {"batches", arguments.steps},
                 {"ms_per_batch", seconds * 1e3 / static_cast<double>(arguments.steps)},
                 {"decoder_steps_per_s", static_cast<double>(steps) / seconds},
                 {"mel_frames_per_s", static_cast<double>(frames) / seconds}});
  print_bench_record(record, part, arguments.profile_top, arguments.steps);
  return 0;
}

}  // namespace mixseq::cli
