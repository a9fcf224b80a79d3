// mixseq bench: one model's speed on random token ids, comparable side by side with other
// implementations of the same shapes.
//   mixseq bench train --model gnmt --vocab 2000 --hidden 256 --layers 4 --batch 32 --seq-len 30
//                      --steps 20 --warmup-steps 3 --precision bf16
//   mixseq bench translate --model gnmt ... --beam 5 --batch 16 --batches 4 --max-len 30
//   mixseq bench train --model transformer --vocab 2000 --d-model 256 --ffn 1024 --heads 4 --layers 3 ...
// Each prints one JSON line. Training steps are whole updates: forward, label-smoothed loss,
// backward, clipping, Adam. Translation suppresses </s>, so every hypothesis runs --max-len
// steps: a fixed workload. Training tok/s counts source + target tokens for GNMT (as NVIDIA's
// GNMT does) and target tokens for the Transformer (as fairseq does); the JSON says which.
// Started by a launcher (RANK/WORLD_SIZE, mpirun, srun), `bench train` runs data-parallel, each
// rank on its own random batch, and adds the gradient all-reduce figures: buckets, bytes per
// step, time spent waiting for them after backward; --no-overlap starts every all-reduce after
// backward instead of during it (docs/distributed.md).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "commands.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/decode/beam_search.h"
#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/distributed/launch_environment.h"
#include "mixseq/distributed/process_group.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/train/translation_loss.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/memory_usage.h"
#include "mixseq/util/mixed_precision.h"
#include "operator_profile.h"
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
  int64_t batch = 32;
  int64_t seq_len = 30;
  int64_t steps = 20;
  int64_t warmup_steps = 3;
  std::string precision = "fp32";
  std::string device = "auto";
  int64_t beam = 5;
  int64_t batches = 4;
  int64_t max_len = 30;
  double bucket_mb = 25;  // data-parallel only
  bool no_overlap = false;
  int64_t profile_top = 0;  // print the N operators with the most self time; 0 = no profiling
};

ModelConfig model_config(const BenchArguments& arguments) {
  ModelConfig config;
  config.arch = arguments.model;
  config.gnmt.hidden_size = arguments.hidden;
  config.gnmt.num_layers = arguments.layers;
  config.transformer.embed_dim = arguments.d_model;
  config.transformer.ffn_dim = arguments.ffn;
  config.transformer.heads = arguments.heads;
  config.transformer.encoder_layers = config.transformer.decoder_layers = arguments.layers;
  return config;
}

bool counts_target_tokens_only(const BenchArguments& arguments) { return arguments.model == "transformer"; }

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

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

nlohmann::json common_fields(const BenchArguments& arguments, const Seq2SeqModelImpl& model,
                             const torch::Device& device, Precision precision, int threads) {
  nlohmann::json fields = {{"model", arguments.model},         {"params", count_parameters(model)},
                           {"vocab", arguments.vocab},         {"layers", arguments.layers},
                           {"batch", arguments.batch},         {"precision", precision_name(precision)},
                           {"device", device.str()},           {"threads", threads}};
  if (arguments.model == "transformer")
    fields.update({{"d_model", arguments.d_model}, {"ffn", arguments.ffn}, {"heads", arguments.heads}});
  else
    fields["hidden"] = arguments.hidden;
  return fields;
}

// One JSON line per operator: its self time per step (or batch) and share of the wall time.
// Profiling slows the run down; the figures of a profiled run are for the shares.
void print_profile(OperatorProfile& profile, int64_t count, double seconds, int64_t repetitions) {
  for (const auto& op : profile.top(static_cast<size_t>(count)))
    std::cout << nlohmann::json{{"bench", "profile"},
                                {"op", op.name},
                                {"self_ms_per_repetition", op.self_ms / static_cast<double>(repetitions)},
                                {"calls_per_repetition", static_cast<double>(op.calls) / static_cast<double>(repetitions)},
                                {"share_of_wall_time", op.self_ms / (seconds * 1e3)}}
                     .dump()
              << '\n';
}

int bench_train(const BenchArguments& arguments, int threads) {
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
  auto model = build_seq2seq_model(model_config(arguments), arguments.vocab);
  model->to(device);
  model->train();
  OptimizerOptions optimizer_options;
  auto optimizer = build_optimizer(optimizer_options, model->parameters());
  UpdateStep update(*model, *optimizer, GradientClippingOptions{}, LossScalerOptions{}, precision, device);
  std::unique_ptr<GradientReducer> reducer;
  if (group) {
    GradientReducerOptions options;
    options.bucket_cap_mb = arguments.bucket_mb;
    options.overlap = !arguments.no_overlap;
    reducer = std::make_unique<GradientReducer>(model->parameters(), *group, options);
    update.set_gradient_reducer(reducer.get());
  }
  const int64_t world_size = group ? group->world_size() : 1;
  torch::manual_seed(static_cast<uint64_t>(1 + launch.rank));  // each rank its own batch
  const TranslationBatch batch = random_batch(arguments).to(device);
  const int64_t update_tokens = batch.target_tokens * world_size;  // every rank's batch has as many
  const auto forward_loss = [&](int64_t) {
    return translation_loss(*model, batch, LabelSmoothingOptions{}, precision, device);
  };
  for (int64_t step = 0; step < arguments.warmup_steps; ++step) update.run(1, forward_loss, update_tokens);
  synchronize(device);
  reset_peak_device_memory(device);
  const auto start = std::chrono::steady_clock::now();
  int64_t tokens = 0;
  double allreduce_wait_ms = 0;
  auto profile = arguments.profile_top > 0 ? std::make_unique<OperatorProfile>() : nullptr;
  for (int64_t step = 0; step < arguments.steps; ++step) {
    const auto result = update.run(1, forward_loss, update_tokens);
    tokens += result.target_tokens + (counts_target_tokens_only(arguments) ? 0 : result.source_tokens);
    if (reducer) allreduce_wait_ms += reducer->last_stats().wait_ms;
  }
  synchronize(device);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
                 {"seq_len", arguments.seq_len},
                 {"steps", arguments.steps},
                 {"tok_per_s", tokens / seconds},
                 {"tok_per_s_counts", counts_target_tokens_only(arguments) ? "target tokens, as fairseq"
                                                                           : "source + target tokens, as NVIDIA's GNMT"},
                 {"ms_per_step", seconds * 1e3 / arguments.steps},
                 {"peak_host_memory_mb", peak_host_memory_bytes() / 1048576.0},
                 {"peak_device_memory_mb", peak_device_memory_bytes(device) / 1048576.0}});
  record["threads_at_end"] = at::get_num_threads();  // --threads 0 follows the load (docs/threads.md)
  std::cout << record.dump() << std::endl;
  if (profile) print_profile(*profile, arguments.profile_top, seconds, arguments.steps);
  return 0;
}

int bench_translate(const BenchArguments& arguments, int threads) {
  const auto device = resolve_device(arguments.device, "--device");
  const auto precision = resolve_precision(arguments.precision, device);
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
  const auto run = [&] {
    const auto batch = random_batch(arguments).to(device);
    const AutocastScope autocast(precision, device);
    beam_search(*model, batch.source, batch.source_lengths, search);
  };
  run();  // warm-up
  synchronize(device);
  reset_peak_device_memory(device);
  const auto start = std::chrono::steady_clock::now();
  auto profile = arguments.profile_top > 0 ? std::make_unique<OperatorProfile>() : nullptr;
  for (int64_t i = 0; i < arguments.batches; ++i) run();
  synchronize(device);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double sentences = static_cast<double>(arguments.batches * arguments.batch);
  auto record = common_fields(arguments, *model, device, precision, threads);
  record.update({{"bench", "translate"},
                 {"beam", arguments.beam},
                 {"coverage_penalty", search.coverage_penalty},
                 {"max_len", arguments.max_len},
                 {"batches", arguments.batches},
                 {"sent_per_s", sentences / seconds},
                 {"tok_per_s", sentences * arguments.max_len / seconds},
                 {"tok_per_s_counts", "output tokens"},
                 {"ms_per_batch", seconds * 1e3 / arguments.batches},
                 {"peak_host_memory_mb", peak_host_memory_bytes() / 1048576.0},
                 {"peak_device_memory_mb", peak_device_memory_bytes(device) / 1048576.0}});
  record["threads_at_end"] = at::get_num_threads();  // --threads 0 follows the load (docs/threads.md)
  std::cout << record.dump() << std::endl;
  if (profile) print_profile(*profile, arguments.profile_top, seconds, arguments.batches);
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
  command->add_option("--precision", arguments.precision, "auto, fp32, tf32, bf16 or fp16")->capture_default_str();
  command->add_option("--device", arguments.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
}

}  // namespace

void add_bench_command(CLI::App& app, CommandTable& table) {
  auto* bench = app.add_subcommand("bench", "Measure a model's training or translation speed on random data");
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
  auto* translate = bench->add_subcommand("translate", "Beam search with </s> suppressed (fixed workload)");
  add_shape_options(translate, *arguments);
  translate->add_option("--beam", arguments->beam, "Beam size")->check(in_range(1, kMaxBeamSize))->capture_default_str();
  translate->add_option("--batches", arguments->batches, "Timed batches")->check(at_least(1))->capture_default_str();
  translate->add_option("--max-len", arguments->max_len, "Output tokens per hypothesis")
      ->check(at_least(1))
      ->capture_default_str();
  for (auto* command : {train, translate})
    command->add_option("--profile", arguments->profile_top,
                        "Also print the N operators with the most self time (LibTorch's profiler; slows the run)")
        ->check(at_least(0));
  table.add(train, [=] { return bench_train(*arguments, at::get_num_threads()); });
  table.add(translate, [=] { return bench_translate(*arguments, at::get_num_threads()); });
}

}  // namespace mixseq::cli
