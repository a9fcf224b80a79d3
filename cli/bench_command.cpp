// mixseq bench: one model's speed on random token ids, comparable side by side with other
// implementations of the same shapes.
//   mixseq bench train --model gnmt --vocab 2000 --hidden 256 --layers 4 --batch 32 --seq-len 30
//                      --steps 20 --warmup-steps 3 --precision bf16
//   mixseq bench translate --model gnmt ... --beam 5 --batch 16 --batches 4 --max-len 30
//   mixseq bench train --model transformer --vocab 2000 --d-model 256 --ffn 1024 --heads 4 --layers 3 ...
//   mixseq bench train --model transformer_xl --vocab 2000 --n-layer 4 --d-model 256 --n-head 8 --d-head 32
//                      --d-inner 1024 --tgt-len 64 --mem-len 64 --batch 16 --steps 10 --precision fp32
//   mixseq bench eval --model transformer_xl ... --eval-tgt-len 64 --mem-len 128
//   mixseq bench train --model transformer --model.transformer.normalize_before true --model.transformer.dropout 0.3
// Any key of a training config's model section (--model.<key> VALUE, configs/*.yaml) applies after
// the shape flags, so an architecture needs no bench code of its own to be measured at any shape.
// Each prints one JSON line. Training steps are whole updates: forward, loss, backward, clipping,
// Adam. Translation suppresses </s>, so every hypothesis runs --max-len steps: a fixed workload.
// Training tok/s counts source + target tokens for GNMT (as NVIDIA's GNMT does) and target tokens
// for the Transformer (as fairseq does) and Transformer-XL; the JSON says which; a translation model's
// also has tgt_tok_per_s, target tokens as fairseq counts them. With -c PRESET a translation model
// trains with the preset's optim and clipping sections (configs/bench/convs2s.yaml: fairseq's NAG).
// A language model
// trains on --batch streams of random ids cut into --tgt-len segments, carrying its memory from
// step to step, as the reference's train.py does (dropout 0.1, clip 0.25, Adam 2.5e-4; with -c PRESET
// the preset's optim and clipping sections instead: configs/bench/lstm_lm.yaml has word_language_model's
// plain SGD, lr 20, clip 0.25); `bench eval` runs its evaluation: no gradients, segments of
// --eval-tgt-len with --mem-len of memory (an LSTM carries its whole state and ignores --mem-len).
// Started by a launcher (RANK/WORLD_SIZE, mpirun, srun), `bench train` runs data-parallel, each
// rank on its own random batch, and adds the gradient all-reduce figures: buckets, bytes per
// step, time spent waiting for them after backward; --no-overlap starts every all-reduce after
// backward instead of during it (docs/distributed.md).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <vector>

#include "bench_clock.h"
#include "bench_speech.h"
#include "bench_synthesis.h"
#include "commands.h"
#include "config_arguments.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/decode/beam_search.h"
#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/distributed/launch_environment.h"
#include "mixseq/distributed/process_group.h"
#include "mixseq/models/language_model_loss.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/train/train_config.h"
#include "mixseq/train/translation_loss.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "mixseq/util/int8_engine.h"
#include "mixseq/util/memory_usage.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/threads.h"
#include "mixseq/util/worker_threads.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct BenchArguments {
  std::string model = "gnmt";
  int64_t vocab = 2000;
  int64_t hidden = 256;   // GNMT
  int64_t d_model = 512;  // Transformer
  int64_t ffn = 2048;     // Transformer
  int64_t heads = 8;      // Transformer
  int64_t layers = 4;     // GNMT: encoder and decoder layers; Transformer: each of the two stacks
  int64_t n_layer = 4;    // Transformer-XL: layers
  int64_t n_head = 8;     // Transformer-XL: attention heads
  int64_t d_head = 32;    // Transformer-XL: width of each head
  int64_t d_inner = 1024; // Transformer-XL: feed-forward width
  int64_t tgt_len = 64;   // language model: tokens per training segment
  int64_t mem_len = 64;   // language model: memory, in positions
  int64_t eval_tgt_len = 0;  // language model: tokens per evaluation segment; 0 = tgt_len
  std::string config;            // a training config (-c): its model section replaces the shape flags (speech
                                 // recognizers also take its optimizer and features); empty = the flags
  int64_t frames = 400;          // speech recognizers: feature frames per utterance
  int64_t text_len = 60;         // speech synthesizers: symbols per utterance
  int64_t mel_len = 150;         // speech synthesizers: frames per utterance (synthesize: decoder steps)
  std::vector<int64_t> cutoffs;  // Transformer-XL: adaptive softmax clusters; empty = full softmax
  int64_t clamp_len = -1;    // Transformer-XL evaluation: -1 = no clamping
  bool same_length = false;  // Transformer-XL evaluation
  int64_t batch = 32;
  int64_t seq_len = 30;
  int64_t steps = 20;
  int64_t warmup_steps = 3;
  std::string precision = "fp32";
  std::string device = "auto";
  int64_t beam = 5;
  int64_t batches = 4;
  int workers = 0;        // bench translate: batches decoded side by side (util/worker_threads.h); 0 = one per thread
  int64_t max_len = 30;
  double bucket_mb = 25;  // data-parallel only
  bool no_overlap = false;
  int64_t profile_top = 0;  // print the N operators with the most self time; 0 = no profiling
  std::vector<ConfigOverride> model_overrides;  // --model.<key> VALUE: any key of the training config's model section
};

ModelConfig model_config(const BenchArguments& arguments) {
  if (!arguments.config.empty()) {  // a preset (configs/bench/*.yaml): its model section, then --model.<key>
    TrainConfig train;
    read_config_file(arguments.config, train.fields());
    apply_config_overrides(arguments.model_overrides, [&](ConfigVisitor& v) { v.section("model", train.model); });
    return train.model;
  }
  ModelConfig config;
  config.arch = arguments.model;
  config.gnmt.hidden_size = arguments.hidden;
  config.gnmt.num_layers = arguments.layers;
  config.transformer.embed_dim = arguments.d_model;
  config.transformer.ffn_dim = arguments.ffn;
  config.transformer.heads = arguments.heads;
  config.transformer.encoder_layers = config.transformer.decoder_layers = arguments.layers;
  // The reference harness's model (../shared/peers/txl_bench.py): dropout 0.1, dropatt 0, tied full softmax.
  auto& xl = config.transformer_xl;
  xl.n_layer = arguments.n_layer;
  xl.d_model = arguments.d_model;
  xl.n_head = arguments.n_head;
  xl.d_head = arguments.d_head;
  xl.d_inner = arguments.d_inner;
  xl.dropout = 0.1;
  xl.dropatt = 0.0;
  xl.cutoffs = arguments.cutoffs;
  xl.mem_len = arguments.mem_len;
  xl.clamp_len = arguments.clamp_len;
  xl.same_length = arguments.same_length;
  // Then the training config's own keys (--model.transformer.dropout 0.3, --model.arch ...), so that
  // every architecture the registry builds can be measured at any shape without bench flags of its own.
  apply_config_overrides(arguments.model_overrides, [&](ConfigVisitor& v) { v.section("model", config); });
  return config;
}

bool is_language_model(const BenchArguments& arguments) {
  return model_family(arguments.model) == kLanguageModelFamily;  // throws for an unknown --model
}

bool is_speech_recognizer(const BenchArguments& arguments) {
  return model_family(arguments.model) == kSpeechRecognizerFamily;
}

bool is_speech_synthesizer(const BenchArguments& arguments) {
  return model_family(arguments.model) == kSpeechSynthesizerFamily;
}

bool counts_target_tokens_only(const BenchArguments& arguments) {
  return arguments.model != "gnmt";  // fairseq's models and language models count target tokens
}

const char* token_count_name(const BenchArguments& arguments) {
  if (is_language_model(arguments)) return "target tokens, as kimiyoung/transformer-xl and word_language_model";
  return counts_target_tokens_only(arguments) ? "target tokens, as fairseq" : "source + target tokens, as NVIDIA's GNMT";
}

// Random ids above the special symbols; every sentence has seq_len tokens plus its marker.
TranslationBatch random_batch(const BenchArguments& arguments) {
  TranslationBatch batch;
  const int64_t B = arguments.batch, S = arguments.seq_len;
  const auto words = [&] { return at::randint(kSpecialSymbolCount, arguments.vocab, {B, S}, at::kLong); };
  const auto eos = at::full({B, 1}, kEosId, at::kLong), bos = at::full({B, 1}, kBosId, at::kLong);
  batch.source = at::cat({words(), eos}, 1);                                     // [B, S + 1]
  batch.source_lengths = at::full({B}, S + 1, at::kLong);                        // [B]
  const auto target = words();                                                   // [B, T]
  batch.target_input = at::cat({bos, target}, 1);                                // [B, T + 1]
  batch.target_output = at::cat({target, eos}, 1);                               // [B, T + 1]
  batch.source_tokens = batch.target_tokens = B * (S + 1);
  return batch;
}

nlohmann::json common_fields(const BenchArguments& arguments, const torch::nn::Module& model,
                             const torch::Device& device, Precision precision, int threads) {
  const bool language_model = is_language_model(arguments);
  nlohmann::json fields = {{"model", arguments.model},
                           {"params", count_parameters(model)},
                           {"vocab", arguments.vocab},
                           {"batch", arguments.batch},
                           {"precision", precision_name(precision)},
                           {"device", device.str()},
                           {"threads", threads},
                           {"blas_core", choose_cpu_kernels().blas_core}};
  if (!arguments.config.empty())
    fields["config"] = arguments.config;  // the shape is the preset's, not the flags'
  else if (language_model)
    fields.update({{"layers", arguments.n_layer}, {"d_model", arguments.d_model}, {"n_head", arguments.n_head},
                   {"d_head", arguments.d_head},
                   {"d_inner", arguments.d_inner}, {"mem_len", arguments.mem_len}, {"cutoffs", arguments.cutoffs}});
  else if (arguments.model == "transformer")
    fields.update({{"layers", arguments.layers}, {"d_model", arguments.d_model}, {"ffn", arguments.ffn},
                   {"heads", arguments.heads}});
  else
    fields.update({{"layers", arguments.layers}, {"hidden", arguments.hidden}});
  return fields;
}

// `count` segments of --batch random streams: ids above the special symbols, [B, count * T + 1],
// so that segment k is ids [k T, (k + 1) T) and its targets the ids one further.
torch::Tensor random_streams(const BenchArguments& arguments, int64_t count, int64_t segment_length) {
  return at::randint(kSpecialSymbolCount, arguments.vocab, {arguments.batch, count * segment_length + 1}, at::kLong);
}

// What one bench train step runs: the model, its micro-batch's loss, the targets an update is
// normalised by on this rank, and the word for the figure's tokens.
struct TrainWorkload {
  std::shared_ptr<torch::nn::Module> model;
  UpdateStep::ForwardLoss forward_loss;
  int64_t rank_update_tokens = 0;
  double max_norm = 5.0;
  OptimizerOptions optimizer;  // Adam 2e-3 unless the workload says otherwise
};

TrainWorkload translation_workload(const BenchArguments& arguments, Precision precision, const torch::Device& device,
                                   uint64_t batch_seed) {
  auto model = build_seq2seq_model(model_config(arguments), arguments.vocab);
  model->to(device);
  torch::manual_seed(batch_seed);  // each rank its own batch
  const auto batch = std::make_shared<TranslationBatch>(random_batch(arguments).to(device));
  TrainWorkload workload;
  workload.model = model;
  workload.forward_loss = [=](int64_t) {
    return translation_loss(*model, *batch, LabelSmoothingOptions{}, precision, device);
  };
  workload.rank_update_tokens = batch->target_tokens;
  if (!arguments.config.empty()) {  // a preset trains with its own optimizer and clipping (configs/bench/
    TrainConfig preset;             // convs2s.yaml: fairseq's NAG, lr 0.25, momentum 0.99, clip 0.1)
    read_config_file(arguments.config, preset.fields());
    workload.optimizer = preset.optim;
    workload.max_norm = preset.clipping.max_norm;
  }
  return workload;
}

// Consecutive segments of the same streams, the memory carried from each step to the next.
TrainWorkload language_model_workload(const BenchArguments& arguments, Precision precision,
                                      const torch::Device& device, uint64_t stream_seed) {
  auto model = build_language_model(model_config(arguments), arguments.vocab);
  model->to(device);
  torch::manual_seed(stream_seed);
  const int64_t length = arguments.tgt_len;
  const auto streams = random_streams(arguments, arguments.warmup_steps + arguments.steps, length).to(device);
  auto memory = std::make_shared<LmMemory>();
  auto step = std::make_shared<int64_t>(0);
  TrainWorkload workload;
  workload.model = model;
  workload.forward_loss = [=](int64_t) {
    const int64_t first = (*step)++ * length;
    auto loss = language_model_loss(*model, streams.narrow(1, first, length), streams.narrow(1, first + 1, length),
                                    *memory, precision, device);
    *memory = std::move(loss.memory);
    return LossSums{loss.nll_sum, loss.nll_sum.detach(), loss.targets, 0};
  };
  workload.rank_update_tokens = arguments.batch * length;
  workload.max_norm = 0.25;            // kimiyoung/transformer-xl's --clip
  workload.optimizer.lr = 2.5e-4;      // and --lr (Adam)
  if (!arguments.config.empty()) {     // a preset trains with its own optimizer and clipping (configs/bench/
    TrainConfig preset;                // lstm_lm.yaml: word_language_model's plain SGD, lr 20, clip 0.25)
    read_config_file(arguments.config, preset.fields());
    workload.optimizer = preset.optim;
    workload.max_norm = preset.clipping.max_norm;
  }
  return workload;
}

SpeechBenchArguments speech_arguments(const BenchArguments& arguments, int64_t steps) {
  SpeechBenchArguments speech;
  speech.config = arguments.config;
  speech.overrides = arguments.model_overrides;
  speech.batch = arguments.batch;
  speech.frames = arguments.frames;
  speech.steps = steps;
  speech.warmup = arguments.warmup_steps;
  speech.precision = arguments.precision;
  speech.device = arguments.device;
  speech.profile_top = arguments.profile_top;
  return speech;
}

SynthesisBenchArguments synthesis_arguments(const BenchArguments& arguments, int64_t steps) {
  SynthesisBenchArguments synthesis;
  synthesis.config = arguments.config;
  synthesis.overrides = arguments.model_overrides;
  synthesis.batch = arguments.batch;
  synthesis.text_len = arguments.text_len;
  synthesis.mel_len = arguments.mel_len;
  synthesis.steps = steps;
  synthesis.warmup = arguments.warmup_steps;
  synthesis.precision = arguments.precision;
  synthesis.device = arguments.device;
  synthesis.profile_top = arguments.profile_top;
  return synthesis;
}

int bench_train(const BenchArguments& arguments, int threads) {
  if (is_speech_synthesizer(arguments)) {
    MIXSEQ_CHECK(!arguments.config.empty(), "bench train: -c CONFIG names the speech synthesizer's training config "
                 "(configs/bench/tacotron2.yaml)");
    return bench_synthesis_train(synthesis_arguments(arguments, arguments.steps), threads);
  }
  if (is_speech_recognizer(arguments)) return bench_speech_train(speech_arguments(arguments, arguments.steps), threads);
  auto device = resolve_device(arguments.device, "--device");
  const auto launch = detect_launch_environment();
  std::unique_ptr<ProcessGroup> group;
  if (launch.distributed()) {
    if (device.is_cuda()) device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(launch.local_rank));
    group = std::make_unique<ProcessGroup>(launch, device, ProcessGroupOptions{});
  }
  const auto precision = resolve_precision(arguments.precision, device);
  configure_precision(precision, device);
  torch::manual_seed(1);
  const uint64_t data_seed = 1 + static_cast<uint64_t>(launch.rank);  // each rank its own data
  const auto workload = is_language_model(arguments) ? language_model_workload(arguments, precision, device, data_seed)
                                                     : translation_workload(arguments, precision, device, data_seed);
  auto& model = workload.model;
  model->train();
  auto optimizer = build_optimizer(workload.optimizer, model->parameters());
  GradientClippingOptions clipping;
  clipping.max_norm = workload.max_norm;
  UpdateStep update(*model, *optimizer, clipping, LossScalerOptions{}, precision, device);
  std::unique_ptr<GradientReducer> reducer;
  if (group) {
    GradientReducerOptions options;
    options.bucket_cap_mb = arguments.bucket_mb;
    options.overlap = !arguments.no_overlap;
    reducer = std::make_unique<GradientReducer>(model->parameters(), *group, options);
    update.set_gradient_reducer(reducer.get());
  }
  const int64_t world_size = group ? group->world_size() : 1;
  const int64_t update_tokens = workload.rank_update_tokens * world_size;  // every rank's batch has as many
  const auto& forward_loss = workload.forward_loss;
  int64_t tokens = 0, target_tokens = 0;
  double allreduce_wait_ms = 0;
  auto part = time_after_warm_up(
      device, arguments.profile_top,
      [&] {
        for (int64_t step = 0; step < arguments.warmup_steps; ++step) update.run(1, forward_loss, update_tokens);
      },
      [&] {
        for (int64_t step = 0; step < arguments.steps; ++step) {
          const auto result = update.run(1, forward_loss, update_tokens);
          tokens += result.target_tokens + (counts_target_tokens_only(arguments) ? 0 : result.source_tokens);
          target_tokens += result.target_tokens;
          if (reducer) allreduce_wait_ms += reducer->last_stats().wait_ms;
        }
      });
  const double seconds = part.seconds;
  if (launch.rank != 0) return 0;
  auto record = common_fields(arguments, *model, device, precision, threads);
  if (reducer) {
    record.update({{"world_size", world_size},
                   {"backend", group->backend()},
                   {"overlap", !arguments.no_overlap},
                   {"buckets", reducer->bucket_count()},
                   {"bucket_mb", arguments.bucket_mb},
                   {"allreduce_mb_per_step", reducer->last_stats().bytes / 1048576.0},
                   {"allreduce_wait_ms_per_step", allreduce_wait_ms / arguments.steps}});
    tokens *= world_size;  // all ranks' tokens (same batch shape on each)
  }
  record.update({{"bench", "train"},
                 {is_language_model(arguments) ? "tgt_len" : "seq_len",
                  is_language_model(arguments) ? arguments.tgt_len : arguments.seq_len},
                 {"steps", arguments.steps},
                 {"tok_per_s", tokens / seconds},
                 {"tok_per_s_counts", token_count_name(arguments)},
                 {"optimizer", workload.optimizer.name},
                 {"lr", workload.optimizer.lr},
                 {"max_norm", workload.max_norm},
                 {"ms_per_step", seconds * 1e3 / arguments.steps},
                 {"peak_host_memory_mb", peak_host_memory_bytes() / 1048576.0},
                 {"peak_device_memory_mb", peak_device_memory_bytes(device) / 1048576.0}});
  if (!is_language_model(arguments))  // fairseq's figure (its ntokens): target tokens, </s> included
    record["tgt_tok_per_s"] = static_cast<double>(target_tokens * world_size) / seconds;
  print_bench_record(record, part, arguments.profile_top, arguments.steps);
  return 0;
}

int bench_translate(const BenchArguments& arguments, int threads) {
  const auto device = resolve_device(arguments.device, "--device");
  const bool int8 = arguments.precision == "int8";  // quantized linear layers, everything else fp32
  MIXSEQ_CHECK(!int8 || device.is_cpu(), "--precision int8 runs on the CPU only; add --device cpu");
  const auto precision = resolve_precision(int8 ? "fp32" : arguments.precision, device);
  configure_precision(precision, device);
  torch::manual_seed(1);
  auto model = build_seq2seq_model(model_config(arguments), arguments.vocab);
  model->to(device);
  model->eval();
  BeamSearchOptions search;
  search.beam_size = arguments.beam;
  search.suppress_eos = true;
  search.max_len_a = 0;
  search.max_len_b = arguments.max_len;
  // Each reference's own search: MLPerf's GNMT adds a coverage penalty, fairseq's Transformer none.
  search.coverage_penalty = arguments.model == "gnmt" ? 0.1 : 0.0;
  const auto run = [&](const TranslationBatch& batch) {
    const AutocastScope autocast(precision, device);
    beam_search(*model, batch.source, batch.source_lengths, search);
  };
  if (int8) {
    // Issue 13's bench: default settings, activation ranges from random calibration batches.
    const QuantizationConfig defaults;
    QuantizationPlan plan;
    {
      const Calibration calibration(*model, defaults);
      run(random_batch(arguments).to(device));
      plan = make_quantization_plan(defaults, calibration);
    }
    apply_quantization_plan(*model, plan);
  }
  // As `translate` decodes a file: whole batches side by side, one per worker, each on its share
  // of the threads. The profiler records the calling thread only, so --profile runs one.
  const bool side_by_side = device.is_cpu() && arguments.profile_top == 0;
  const int workers = side_by_side ? worker_count(arguments.workers, threads, std::numeric_limits<int>::max()) : 1;
  const auto batch_count = arguments.batches * workers;
  std::vector<TranslationBatch> batches;
  for (int64_t i = 0; i < batch_count + workers; ++i) batches.push_back(random_batch(arguments).to(device));
  auto part = time_after_warm_up(
      device, arguments.profile_top,
      [&] { run_on_workers(workers, workers, [&](int64_t i) { run(batches[static_cast<size_t>(batch_count + i)]); }); },
      [&] { run_on_workers(batch_count, workers, [&](int64_t i) { run(batches[static_cast<size_t>(i)]); }); });
  const double seconds = part.seconds;
  const double sentences = static_cast<double>(batch_count * arguments.batch);
  auto record = common_fields(arguments, *model, device, precision, threads);
  if (int8) record.update({{"precision", "int8"}, {"int8_engine", use_int8_engine()}});
  record.update({{"bench", "translate"},
                 {"beam", arguments.beam},
                 {"coverage_penalty", search.coverage_penalty},
                 {"max_len", arguments.max_len},
                 {"batches", batch_count},
                 {"workers", workers},
                 {"sent_per_s", sentences / seconds},
                 {"tok_per_s", sentences * arguments.max_len / seconds},
                 {"tok_per_s_counts", "output tokens"},
                 {"ms_per_batch", seconds * 1e3 * workers / batch_count},  // each batch's time on its worker
                 {"peak_host_memory_mb", peak_host_memory_bytes() / 1048576.0},
                 {"peak_device_memory_mb", peak_device_memory_bytes(device) / 1048576.0}});
  print_bench_record(record, part, arguments.profile_top, arguments.batches);
  return 0;
}

// The reference's evaluate(): model.eval(), no gradients, consecutive segments of the same
// streams with the memory carried, the NLL summed (read back once at the end).
int bench_eval(const BenchArguments& arguments, int threads) {
  MIXSEQ_CHECK(is_language_model(arguments), "bench eval measures a language model's evaluation, and --model ",
               arguments.model, " is a ", model_family_description(model_family(arguments.model)),
               "; use bench translate, or --model ", model_architectures(kLanguageModelFamily).front());
  const auto device = resolve_device(arguments.device, "--device");
  const auto precision = resolve_precision(arguments.precision, device);
  configure_precision(precision, device);
  torch::manual_seed(1);
  auto model = build_language_model(model_config(arguments), arguments.vocab);
  model->to(device);
  model->eval();
  const int64_t length = arguments.eval_tgt_len > 0 ? arguments.eval_tgt_len : arguments.tgt_len;
  const auto streams = random_streams(arguments, arguments.warmup_steps + arguments.steps, length).to(device);
  torch::NoGradGuard no_grad;
  LmMemory memory;
  auto nll = torch::zeros({}, torch::device(device));
  int64_t segment = 0;
  const auto run = [&] {
    adapt_threads_to_load();
    const int64_t first = segment++ * length;
    auto loss = language_model_loss(*model, streams.narrow(1, first, length), streams.narrow(1, first + 1, length),
                                    memory, precision, device);
    memory = std::move(loss.memory);
    return loss.nll_sum;
  };
  // On the CPU each segment's time is kept too (its operators run as they are called): the first
  // timed segments can pay for memory the process touches for the first time, which a mean of a
  // few segments hides. A GPU's segments are not synchronised one by one.
  const bool per_segment = device.is_cpu();
  std::vector<double> segment_ms;
  auto part = time_after_warm_up(
      device, arguments.profile_top, [&] { for (int64_t i = 0; i < arguments.warmup_steps; ++i) run(); },
      [&] {
        for (int64_t i = 0; i < arguments.steps; ++i) {
          const auto begun = std::chrono::steady_clock::now();
          nll += run();
          if (per_segment)
            segment_ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begun).count());
        }
      });
  const double seconds = part.seconds;
  const double tokens = static_cast<double>(arguments.steps * arguments.batch * length);
  auto record = common_fields(arguments, *model, device, precision, threads);
  record.update({{"bench", "eval"},
                 {"eval_tgt_len", length},
                 {"clamp_len", arguments.clamp_len},
                 {"same_length", arguments.same_length},
                 {"steps", arguments.steps},
                 {"tok_per_s", tokens / seconds},
                 {"tok_per_s_counts", token_count_name(arguments)},
                 {"ms_per_segment", seconds * 1e3 / arguments.steps},
                 {"loss", nll.item<double>() / tokens},
                 {"peak_host_memory_mb", peak_host_memory_bytes() / 1048576.0},
                 {"peak_device_memory_mb", peak_device_memory_bytes(device) / 1048576.0}});
  if (per_segment) {
    record["segment_ms"] = segment_ms;  // each timed segment, in order
    std::sort(segment_ms.begin(), segment_ms.end());
    record["segment_ms_median"] = segment_ms[segment_ms.size() / 2];
  }
  print_bench_record(record, part, arguments.profile_top, arguments.steps);
  return 0;
}

void add_shape_options(CLI::App* command, BenchArguments& arguments) {
  command->add_option("--model", arguments.model, "Architecture")->capture_default_str();  // the registry checks it
  command->add_option("--vocab", arguments.vocab, "Vocabulary size, the special symbols included")
      ->check(at_least(kSpecialSymbolCount + 1))  // random words are drawn above the special symbols
      ->capture_default_str();
  command->add_option("--hidden", arguments.hidden, "Hidden size (GNMT)")->check(at_least(1))->capture_default_str();
  command->add_option("--d-model", arguments.d_model, "Model width (Transformer)")->check(at_least(1))->capture_default_str();
  command->add_option("--ffn", arguments.ffn, "Feed-forward width (Transformer)")->check(at_least(1))->capture_default_str();
  command->add_option("--heads", arguments.heads, "Attention heads (Transformer)")->check(at_least(1))->capture_default_str();
  command->add_option("--layers", arguments.layers, "Layers (Transformer: in the encoder and in the decoder)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--batch", arguments.batch, "Sentences per batch")->check(at_least(1))->capture_default_str();
  command->add_option("--seq-len", arguments.seq_len, "Source and target words per sentence")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--precision", arguments.precision, "auto, fp32, tf32, bf16 or fp16; bench translate also int8 (CPU)")
      ->capture_default_str();
  command->add_option("--device", arguments.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
}

void add_language_model_options(CLI::App* command, BenchArguments& arguments) {
  command->add_option("--n-layer", arguments.n_layer, "Layers (Transformer-XL)")->check(at_least(1))->capture_default_str();
  command->add_option("--n-head", arguments.n_head, "Attention heads (Transformer-XL)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--d-head", arguments.d_head, "Width of each head (Transformer-XL)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--d-inner", arguments.d_inner, "Feed-forward width (Transformer-XL)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--tgt-len", arguments.tgt_len, "Tokens per training segment (language models)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--mem-len", arguments.mem_len, "Memory in positions (language models); 0 = none")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--cutoffs", arguments.cutoffs,
                      "Adaptive softmax cluster boundaries, e.g. 2000,10000 (Transformer-XL); none = full softmax")
      ->delimiter(',');
}

}  // namespace

void add_bench_command(CLI::App& app, CommandTable& table) {
  auto* bench = app.add_subcommand("bench", "Measure a model's training, translation or evaluation speed on random data");
  bench->require_subcommand(1);
  auto arguments = std::make_shared<BenchArguments>();
  auto* train = bench->add_subcommand("train", "Full training steps: forward, loss, backward, clipping, Adam");
  add_shape_options(train, *arguments);
  train->add_option("--steps", arguments->steps, "Timed steps")->check(at_least(1))->capture_default_str();
  train->add_option("--warmup-steps", arguments->warmup_steps, "Untimed steps first")
      ->check(at_least(0))
      ->capture_default_str();
  train->add_option("--bucket-mb", arguments->bucket_mb, "Data-parallel: gradient bucket size in MB")
      ->check(above(0))
      ->capture_default_str();
  train->add_flag("--no-overlap", arguments->no_overlap, "Data-parallel: all-reduce only after backward");
  add_language_model_options(train, *arguments);
  const auto add_speech_options = [&](CLI::App* command) {
    command->add_option("--frames", arguments->frames, "Speech recognizers: feature frames per utterance")
        ->check(at_least(1))
        ->capture_default_str();
  };
  add_speech_options(train);
  const auto add_synthesis_options = [&](CLI::App* command) {
    command->add_option("--text-len", arguments->text_len, "Speech synthesizers: symbols per utterance")
        ->check(at_least(1))
        ->capture_default_str();
    command->add_option("--mel-len", arguments->mel_len,
                        "Speech synthesizers: frames per utterance (synthesize: decoder steps, no early stop)")
        ->check(at_least(2))
        ->capture_default_str();
  };
  add_synthesis_options(train);
  auto* synthesize = bench->add_subcommand("synthesize",
                                           "A speech synthesizer's free-running decoding, --mel-len steps (-c CONFIG)");
  add_synthesis_options(synthesize);
  synthesize->add_option("--batch", arguments->batch, "Utterances per batch")->check(at_least(1))->capture_default_str();
  synthesize->add_option("--batches", arguments->batches, "Timed batches")->check(at_least(1))->capture_default_str();
  synthesize->add_option("--warmup-batches", arguments->warmup_steps, "Untimed batches first")
      ->check(at_least(0))
      ->capture_default_str();
  synthesize->add_option("--precision", arguments->precision, "auto, fp32, bf16 or fp16")->capture_default_str();
  synthesize->add_option("--device", arguments->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  auto* transcribe = bench->add_subcommand("transcribe", "A speech recognizer's greedy CTC transcription (-c CONFIG)");
  add_speech_options(transcribe);
  transcribe->add_option("--batch", arguments->batch, "Utterances per batch")->check(at_least(1))->capture_default_str();
  transcribe->add_option("--batches", arguments->batches, "Timed batches")->check(at_least(1))->capture_default_str();
  transcribe->add_option("--warmup-batches", arguments->warmup_steps, "Untimed batches first")
      ->check(at_least(0))
      ->capture_default_str();
  transcribe->add_option("--precision", arguments->precision, "auto, fp32, bf16 or fp16")->capture_default_str();
  transcribe->add_option("--device", arguments->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  auto* translate = bench->add_subcommand("translate", "Beam search with </s> suppressed (fixed workload)");
  add_shape_options(translate, *arguments);
  translate->add_option("--beam", arguments->beam, "Beam size")->check(in_range(1, kMaxBeamSize))->capture_default_str();
  translate->add_option("--batches", arguments->batches, "Timed batches per worker")->check(at_least(1))->capture_default_str();
  translate->add_option("--workers", arguments->workers,
                        "Batches decoded side by side, each on its share of the threads (0: one per thread; "
                        "1: one batch at a time on all threads; --profile runs one)")
      ->check(at_least(0))
      ->capture_default_str();
  translate->add_option("--max-len", arguments->max_len, "Output tokens per hypothesis")
      ->check(at_least(1))
      ->capture_default_str();
  auto* eval = bench->add_subcommand("eval", "A language model's evaluation: segments with memory, no gradients");
  add_shape_options(eval, *arguments);
  add_language_model_options(eval, *arguments);
  eval->add_option("--steps", arguments->steps, "Timed segments")->check(at_least(1))->capture_default_str();
  eval->add_option("--warmup-steps", arguments->warmup_steps, "Untimed segments first")
      ->check(at_least(0))
      ->capture_default_str();
  eval->add_option("--eval-tgt-len", arguments->eval_tgt_len, "Tokens per evaluation segment; 0 = --tgt-len")
      ->check(at_least(0))
      ->capture_default_str();
  eval->add_option("--clamp-len", arguments->clamp_len, "Relative distances above it share its embedding; -1 = off")
      ->check(at_least(-1))
      ->capture_default_str();
  eval->add_flag("--same-length", arguments->same_length, "Every query attends over --mem-len keys");
  for (auto* command : {train, translate, eval, transcribe, synthesize})
    command->add_option("-c,--config", arguments->config,
                        "A training config (configs/bench/*.yaml): its model section instead of the shape flags; "
                        "speech recognizers also take its optimizer and features (random frames and transcripts)");
  for (auto* command : {train, translate, eval, transcribe, synthesize})
    command->add_option("--profile", arguments->profile_top,
                        "Also print the N operators with the most self time (LibTorch's profiler; slows the run)")
        ->check(at_least(0));
  // Beside its flags, each takes the model section's keys of a training config: --model.<key> VALUE.
  const auto with_model_keys = [=, &table](int (*bench)(const BenchArguments&, int)) {
    return [=, &table] {
      arguments->model_overrides = parse_config_overrides(table.extra_arguments());
      arguments->model = model_config(*arguments).arch;  // --model.arch names it too
      return bench(*arguments, at::get_num_threads());
    };
  };
  table.add_with_overrides(train, with_model_keys(bench_train));
  table.add_with_overrides(translate, with_model_keys(bench_translate));
  table.add_with_overrides(eval, with_model_keys(bench_eval));
  table.add_with_overrides(transcribe, [=, &table] {
    MIXSEQ_CHECK(!arguments->config.empty(), "bench transcribe: -c CONFIG names the speech recognizer's config");
    arguments->model_overrides = parse_config_overrides(table.extra_arguments());
    return bench_speech_transcribe(speech_arguments(*arguments, arguments->batches), at::get_num_threads());
  });
  table.add_with_overrides(synthesize, [=, &table] {
    MIXSEQ_CHECK(!arguments->config.empty(), "bench synthesize: -c CONFIG names the speech synthesizer's config");
    arguments->model_overrides = parse_config_overrides(table.extra_arguments());
    return bench_synthesis_synthesize(synthesis_arguments(*arguments, arguments->batches), at::get_num_threads());
  });
}

}  // namespace mixseq::cli
