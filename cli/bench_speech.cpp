#include "bench_speech.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>

#include "mixseq/criteria/ctc_loss.h"
#include "mixseq/decode/ctc_decoding.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/train/train_config.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/threads.h"
#include "bench_clock.h"

namespace mixseq::cli {
namespace {

constexpr int64_t kSymbols = 29;  // the harness's labels: 28 characters and the blank

struct Bench {
  TrainConfig config;
  torch::Device device{torch::kCPU};
  Precision precision = Precision::kFp32;
  SpeechRecognizer model;
  int64_t bins = 0;
};

Bench open_bench(const SpeechBenchArguments& arguments) {
  Bench bench;
  MIXSEQ_CHECK(!arguments.config.empty(), "bench: -c CONFIG names the speech recognizer's training config");
  read_config_file(arguments.config, bench.config.fields());
  apply_config_overrides(arguments.overrides, bench.config.fields());
  bench.device = resolve_device(arguments.device, "--device");
  bench.precision = resolve_precision(arguments.precision, bench.device);
  configure_precision(bench.precision, bench.device);
  torch::manual_seed(static_cast<uint64_t>(arguments.seed));
  bench.model = build_speech_recognizer(bench.config.model, kSymbols);
  bench.model->to(bench.device);
  bench.bins = bench.model->feature_bins();
  return bench;
}

struct RandomBatch {
  torch::Tensor features, lengths;
  std::vector<std::vector<int64_t>> targets;
};

RandomBatch random_batch(const SpeechBenchArguments& arguments, const Bench& bench, const torch::Device& device) {
  RandomBatch batch;
  batch.features = torch::randn({arguments.batch, arguments.frames, bench.bins}).to(device);
  batch.lengths = torch::full({arguments.batch}, arguments.frames, torch::kLong).to(device);
  const auto length = std::max<int64_t>(
      1, std::llround(static_cast<double>(arguments.frames) * bench.config.speech.hop_ms / 1000.0 * arguments.chars_per_second));
  for (int64_t b = 0; b < arguments.batch; ++b) {
    const auto ids = torch::randint(1, kSymbols, {length}, torch::kLong);
    batch.targets.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + length);
  }
  return batch;
}

nlohmann::json common(const SpeechBenchArguments& arguments, const Bench& bench, int threads) {
  return {{"model", bench.config.model.arch},
          {"params", count_parameters(*bench.model)},
          {"batch", arguments.batch},
          {"frames", arguments.frames},
          {"feature_bins", bench.bins},
          {"precision", precision_name(bench.precision)},
          {"device", bench.device.str()},
          {"threads", threads},
          {"blas_core", choose_cpu_kernels().blas_core}};
}

}  // namespace

int bench_speech_train(const SpeechBenchArguments& arguments, int threads) {
  Bench bench = open_bench(arguments);
  auto optimizer = build_optimizer(bench.config.optim, bench.model->parameters());
  std::vector<RandomBatch> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(random_batch(arguments, bench, bench.device));
  bench.model->train();
  double loss_sum = 0;
  int64_t frames = 0;
  const auto step = [&](int64_t i, bool timed) {
    const RandomBatch& batch = batches[static_cast<size_t>(i % 4)];
    if (bench.device.is_cpu()) adapt_threads_to_load();  // as the training loop does each update (docs/threads.md)
    CtcOutput output;
    {
      const AutocastScope autocast(bench.precision, bench.device);
      output = bench.model->forward(batch.features, batch.lengths);
    }
    auto sums = ctc_loss_sums(output.logits, output.lengths, batch.targets);
    auto loss = sums.loss / static_cast<double>(sums.utterances);  // per utterance, as Jasper's CTCLossNM
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    if (timed) {
      loss_sum += loss.item<double>();
      frames += arguments.batch * arguments.frames;
    }
  };
  auto part = time_after_warm_up(
      bench.device, arguments.profile_top, [&] { for (int64_t i = 0; i < arguments.warmup; ++i) step(i, false); },
      [&] { for (int64_t i = 0; i < arguments.steps; ++i) step(arguments.warmup + i, true); });
  const double seconds = part.seconds;
  auto record = common(arguments, bench, threads);
  const double hop = bench.config.speech.hop_ms / 1000.0;
  record.update({{"bench", "train"},
                 {"optimizer", bench.config.optim.name},
                 {"steps", arguments.steps},
                 {"ms_per_step", seconds * 1e3 / static_cast<double>(arguments.steps)},
                 {"frames_per_s", static_cast<double>(frames) / seconds},
                 {"audio_sec_per_s", static_cast<double>(frames) * hop / seconds},
                 {"loss", loss_sum / static_cast<double>(arguments.steps)}});
  print_bench_record(record, part, arguments.profile_top, arguments.steps);
  return 0;
}

int bench_speech_transcribe(const SpeechBenchArguments& arguments, int threads) {
  Bench bench = open_bench(arguments);
  bench.model->eval();
  torch::NoGradGuard no_grad;
  const RandomBatch batch = random_batch(arguments, bench, bench.device);
  int64_t frames = 0, symbols = 0;
  const auto transcribe = [&](bool timed) {
    if (bench.device.is_cpu()) adapt_threads_to_load();  // as transcribe does each batch
    CtcOutput output;
    {
      const AutocastScope autocast(bench.precision, bench.device);
      output = bench.model->forward(batch.features, batch.lengths);
    }
    const auto hypotheses = ctc_greedy_decode(output.logits, output.lengths);  // argmax + collapse, as the peers
    if (timed) {
      frames += arguments.batch * arguments.frames;
      for (const auto& h : hypotheses) symbols += static_cast<int64_t>(h.symbols.size());
    }
  };
  auto part = time_after_warm_up(
      bench.device, arguments.profile_top, [&] { for (int64_t i = 0; i < arguments.warmup; ++i) transcribe(false); },
      [&] { for (int64_t i = 0; i < arguments.steps; ++i) transcribe(true); });
  const double seconds = part.seconds;
  auto record = common(arguments, bench, threads);
  const double hop = bench.config.speech.hop_ms / 1000.0;
  record.update({{"bench", "transcribe"},
                 {"batches", arguments.steps},
                 {"ms_per_batch", seconds * 1e3 / static_cast<double>(arguments.steps)},
                 {"frames_per_s", static_cast<double>(frames) / seconds},
                 {"audio_sec_per_s", static_cast<double>(frames) * hop / seconds},
                 {"real_time_factor", seconds / (static_cast<double>(frames) * hop)},
                 {"symbols_out", symbols}});
  print_bench_record(record, part, arguments.profile_top, arguments.steps);
  return 0;
}

}  // namespace mixseq::cli
