#include "mixseq/train/trainer.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <optional>

#include "mixseq/data/prepared_data.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/decode/translator.h"
#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/distributed/launch_environment.h"
#include "mixseq/distributed/process_group.h"
#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/bleu.h"
#include "mixseq/train/checkpoint_average.h"
#include "mixseq/train/translation_loss.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/metrics_log.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Losses and token counts summed over the updates since the last log line. Sums stay on the
// device until logged, so a GPU run does not wait for every update's loss.
struct IntervalSums {
  torch::Tensor loss, nll;
  int64_t target_tokens = 0, source_tokens = 0, updates = 0, skipped = 0;
  Clock::time_point start = Clock::now();
};

struct ValidationResult {
  double loss = 0;        // per target token
  double perplexity = 0;  // exp(nll per target token)
};

// The data-parallel side of a run; with one process there is no group and the sums are the
// rank's own.
struct DataParallel {
  std::unique_ptr<ProcessGroup> group;
  std::unique_ptr<GradientReducer> reducer;

  int64_t rank() const { return group ? group->rank() : 0; }
  int64_t world_size() const { return group ? group->world_size() : 1; }
  bool leader() const { return rank() == 0; }
  std::vector<double> sum(const std::vector<double>& values) const { return group ? group->sum(values) : values; }
};

// Joins the job's other ranks when a launcher started several; on CUDA each local rank takes
// its own GPU.
DataParallel join_data_parallel(const LaunchEnvironment& launch, const DistributedConfig& config,
                                torch::Device& device) {
  DataParallel parallel;
  if (!launch.distributed()) return parallel;
  if (device.is_cuda()) device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(launch.local_rank));
  configure_log_lines(str_cat("[rank ", launch.rank, "] "), launch.rank == 0 || config.log_all_ranks);
  ProcessGroupOptions options;
  options.backend = config.backend;
  options.timeout = std::chrono::seconds(config.timeout);
  parallel.group = std::make_unique<ProcessGroup>(launch, device, options);
  log_info("train: rank ", launch.rank, " of ", launch.world_size, " (", launch.launcher, ", local rank ",
           launch.local_rank, ") joined the ", parallel.group->backend(), " group at ", launch.master_addr, ":",
           launch.master_port);
  return parallel;
}

at::Generator& cpu_generator() {
  static at::Generator generator = at::detail::getDefaultCPUGenerator();
  return generator;
}

void save_rng_state(const torch::Device& device, TrainingProgress& progress) {
  {
    std::lock_guard<std::mutex> lock(cpu_generator().mutex());
    progress.cpu_rng_state = cpu_generator().get_state();
  }
  if (device.is_cuda()) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    progress.cuda_rng_state = generator.get_state();
  }
}

void restore_rng_state(const torch::Device& device, const TrainingProgress& progress) {
  if (progress.cpu_rng_state.defined()) {
    std::lock_guard<std::mutex> lock(cpu_generator().mutex());
    cpu_generator().set_state(progress.cpu_rng_state);
  }
  if (device.is_cuda() && progress.cuda_rng_state.defined()) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(progress.cuda_rng_state);
  }
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MIXSEQ_CHECK(in.is_open(), "cannot open '", path, "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Checkpoint contents besides the tensors: the config, vocabulary and tokenizer model, so the
// checkpoint alone can translate.
CheckpointContents describe_run(const std::string& config_yaml, const std::string& data_dir,
                                const PreparedData& data) {
  CheckpointContents contents;
  contents.config_yaml = config_yaml;
  contents.vocabulary_text = read_whole_file(data_dir + "/vocab.txt");
  contents.vocabulary_fingerprint = vocabulary_fingerprint(data.vocabulary());
  const std::string& tokenizer_spec = data.tokenizer();
  const auto colon = tokenizer_spec.find(':');
  contents.tokenizer_kind = tokenizer_spec.substr(0, colon);
  if (colon != std::string::npos) contents.tokenizer_model = read_whole_file(tokenizer_spec.substr(colon + 1));
  return contents;
}

// The validation batches, in order; planned once, before training, so a bad
// data.valid_max_tokens fails at start.
EpochBatches plan_validation_batches(const PreparedData& data, const DataConfig& config) {
  BatchingOptions batching;
  batching.max_tokens = config.valid_max_tokens;
  batching.shuffle = false;
  return plan_epoch_batches(model_lengths(data.source("valid")), model_lengths(data.target("valid")), batching, 1);
}

// A vocabulary of the same size but other pieces would load without a shape error and train
// every embedding on the wrong piece: the fingerprints of the token lists must agree.
// (Version 1 checkpoints have no fingerprint.)
void check_same_vocabulary(const CheckpointContents& saved, const CheckpointContents& run, const std::string& path,
                           const std::string& data_dir) {
  if (saved.vocabulary_fingerprint == 0) return;
  MIXSEQ_CHECK(saved.vocabulary_fingerprint == run.vocabulary_fingerprint, "'", data_dir,
               "/vocab.txt' is not the vocabulary '", path, "' was trained with (fingerprint ",
               checksum_hex(run.vocabulary_fingerprint), ", not ", checksum_hex(saved.vocabulary_fingerprint),
               "): the same ids would mean other pieces; resume with the data.dir that run used, or start a new run "
               "(another --train.run_dir, or --overwrite)");
}

// Over all ranks: each takes every world_size-th batch, then the sums are added up.
ValidationResult validation_loss(Seq2SeqModelImpl& model, const PreparedData& data, const EpochBatches& plan,
                                 const TrainConfig& config, const torch::Device& device, Precision precision,
                                 const DataParallel& parallel) {
  const auto& source = data.source("valid");
  const auto& target = data.target("valid");
  torch::NoGradGuard no_grad;
  model.eval();
  auto loss = torch::zeros({}, torch::device(device)), nll = torch::zeros({}, torch::device(device));
  int64_t tokens = 0;
  for (size_t b = parallel.rank(); b < plan.batches.size(); b += parallel.world_size()) {
    const auto sums = translation_loss(model, make_translation_batch(source, &target, plan.batches[b]),
                                       config.criterion, precision, device);
    loss += sums.loss;
    nll += sums.nll;
    tokens += sums.target_tokens;
  }
  model.train();
  const auto sums = parallel.sum({loss.item<double>(), nll.item<double>(), static_cast<double>(tokens)});
  const double per_token = sums[2] > 0 ? 1.0 / sums[2] : 0.0;
  return {sums[0] * per_token, std::exp(sums[1] * per_token)};
}

// The best hypotheses of all ranks, where rank r translated sentences r, r + world_size, ...:
// each rank writes its rows (length, then ids) into a zero table, and a sum over ranks joins them.
std::vector<std::vector<int64_t>> gather_hypotheses(const std::vector<std::vector<int64_t>>& mine, int64_t sentences,
                                                    const DataParallel& parallel, const torch::Device& device) {
  if (parallel.world_size() == 1) return mine;
  int64_t longest = 0;
  for (const auto& tokens : mine) longest = std::max(longest, static_cast<int64_t>(tokens.size()));
  auto width = torch::full({1}, longest, torch::kLong).to(device);
  parallel.group->all_reduce_max(width);
  auto table = torch::zeros({sentences, width.item<int64_t>() + 1}, torch::kLong);  // [N, 1 + longest]
  auto rows = table.accessor<int64_t, 2>();
  for (size_t k = 0; k < mine.size(); ++k) {
    const int64_t row = parallel.rank() + static_cast<int64_t>(k) * parallel.world_size();
    rows[row][0] = static_cast<int64_t>(mine[k].size());
    for (size_t t = 0; t < mine[k].size(); ++t) rows[row][static_cast<int64_t>(t) + 1] = mine[k][t];
  }
  table = table.to(device);
  parallel.group->all_reduce_sum(table);
  table = table.cpu();
  rows = table.accessor<int64_t, 2>();
  std::vector<std::vector<int64_t>> all(sentences);
  for (int64_t i = 0; i < sentences; ++i)
    for (int64_t t = 0; t < rows[i][0]; ++t) all[i].push_back(rows[i][t + 1]);
  return all;
}

// Over all ranks: each translates every world_size-th sentence; all ranks get the same score.
BleuScore validation_bleu(Seq2SeqModelImpl& model, const PreparedData& data, const Tokenizer& tokenizer,
                          const TrainConfig& config, const torch::Device& device, Precision precision,
                          const DataParallel& parallel) {
  const auto& source = data.source("valid");
  std::vector<std::vector<int64_t>> sources;
  for (int64_t i = parallel.rank(); i < source.size(); i += parallel.world_size())
    sources.push_back(source.sequence(i));
  Translator translator(model, data.vocabulary(), tokenizer, device, precision);
  TranslateOptions options;
  options.search = config.validation_search;
  options.search.nbest = 1;
  options.max_tokens = config.data.valid_max_tokens;
  const auto hypotheses = translator.translate_ids(sources, options);
  std::vector<std::vector<int64_t>> mine;
  for (const auto& best : hypotheses) mine.push_back(best.empty() ? std::vector<int64_t>{} : best.front().tokens);
  std::vector<std::string> texts;
  for (const auto& tokens : gather_hypotheses(mine, source.size(), parallel, device))
    texts.push_back(translator.detokenize(tokens));
  return corpus_bleu(texts, {read_lines(data.references_path("valid"))}, BleuOptions{});
}

// With only train.max_time set, the time budget alone ends training; the schedule is sized to it
// once the speed is measured (TimeBudget).
constexpr int64_t kUnboundedSteps = int64_t{1} << 40;

int64_t planned_total_steps(const TrainOptions& options, int64_t updates_per_epoch) {
  const int64_t by_epochs = options.max_epochs * updates_per_epoch;
  if (options.max_epochs == 0 && options.max_steps == 0) return kUnboundedSteps;
  if (options.max_steps == 0) return by_epochs;
  return options.max_epochs == 0 ? options.max_steps : std::min(options.max_steps, by_epochs);
}

void check_options(const TrainConfig& config) {
  const auto& train = config.train;
  MIXSEQ_CHECK(train.max_epochs > 0 || train.max_steps > 0 || train.max_time > 0,
               "train.max_epochs, train.max_steps and train.max_time are all 0: set one of them to say when to stop");
  MIXSEQ_CHECK(std::isfinite(train.max_time) && train.max_time >= 0, "train.max_time (", train.max_time,
               ") must be a number of seconds, or 0 for no time budget");
  MIXSEQ_CHECK(std::isfinite(train.target_bleu) && train.target_bleu >= 0 && train.target_bleu <= 100,
               "train.target_bleu (", train.target_bleu, ") must be between 0 (none) and 100");
  MIXSEQ_CHECK(train.target_bleu == 0 || train.validate_bleu, "train.target_bleu (", train.target_bleu,
               ") needs train.validate_bleu true: it is checked at each BLEU validation");
  MIXSEQ_CHECK(train.max_epochs >= 0 && train.max_steps >= 0, "train.max_epochs (", train.max_epochs,
               ") and train.max_steps (", train.max_steps, ") must not be negative");
  MIXSEQ_CHECK(train.update_freq >= 1, "train.update_freq (", train.update_freq, ") must be at least 1");
  MIXSEQ_CHECK(train.log_interval >= 1, "train.log_interval (", train.log_interval, ") must be at least 1");
  MIXSEQ_CHECK(train.keep_last_checkpoints >= 0, "train.keep_last_checkpoints (", train.keep_last_checkpoints,
               ") must be 0 (none) or positive");
  MIXSEQ_CHECK(train.validate_interval >= 0, "train.validate_interval (", train.validate_interval,
               ") must be 0 (at epoch ends only) or positive");
  MIXSEQ_CHECK(train.save_interval >= 0, "train.save_interval (", train.save_interval,
               ") must be 0 (at epoch ends only) or positive");
  MIXSEQ_CHECK(config.data.valid_max_tokens >= 1, "data.valid_max_tokens (", config.data.valid_max_tokens,
               ") must be at least 1");
  MIXSEQ_CHECK(!config.data.dir.empty(), "data.dir is empty: give the folder written by `mixseq prepare`");
  MIXSEQ_CHECK(config.distributed.timeout >= 1, "distributed.timeout (", config.distributed.timeout,
               ") must be at least 1 second");
  MIXSEQ_CHECK(config.distributed.bucket_cap_mb > 0, "distributed.bucket_cap_mb (", config.distributed.bucket_cap_mb,
               ") must be positive");
}

// Rank 0, the only one that writes in the run folder, locks it; every rank checks it, so all
// refuse alike, or none does. Nothing changes there yet: rank 0 applies the plan once the whole
// configuration has been checked. The lock is held until `lock` is destroyed.
RunDirectoryPlan claim_run_directory(const std::string& run_dir, RunStart start, const DataParallel& parallel,
                                     std::optional<FileLock>& lock) {
  std::string refusal;
  RunDirectoryPlan plan;
  try {
    if (parallel.leader()) lock.emplace(lock_run_directory(run_dir));
    plan = plan_run_directory(run_dir, start);
  } catch (const Error& e) {
    refusal = e.what();
  }
  const bool any_refused = parallel.sum({refusal.empty() ? 0.0 : 1.0})[0] > 0;
  if (!refusal.empty()) throw Error(refusal);
  MIXSEQ_CHECK(!any_refused, "another rank refused the run folder '", run_dir, "'; rank 0's error says why");
  return plan;
}

// The validation search runs first at the end of an epoch, maybe hours in: its settings are
// checked against the model's vocabulary and the validation sources before the first update.
void check_validation_search(const TrainConfig& config, const PreparedData& data) {
  try {
    check_beam_search_options(config.validation_search, data.vocabulary().size());
    if (!data.has_split("valid") || data.source("valid").size() == 0) return;
    const auto lengths = model_lengths(data.source("valid"));
    const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
    max_output_length(config.validation_search, *shortest);  // a linear bound: its ends decide
    max_output_length(config.validation_search, *longest);
  } catch (const Error& e) {
    throw Error(str_cat("validation_search: ", e.what()));
  }
  if (!config.train.validate_bleu) return;
  const auto references = data.references_path("valid");
  MIXSEQ_CHECK(!references.empty() && std::filesystem::exists(references),
               "train.validate_bleu needs the raw validation references, but '", config.data.dir, "' lacks them (",
               references.empty() ? "dataset.json lists none" : references + " is missing",
               "); run `mixseq prepare` again or set train.validate_bleu false");
}

}  // namespace

TrainSummary train_translation_model(const TrainConfig& config, RunStart start) {
  const auto started = Clock::now();
  check_options(config);
  const TrainOptions& options = config.train;
  auto device = resolve_device(options.device);
  DataParallel parallel = join_data_parallel(detect_launch_environment(), config.distributed, device);
  const auto precision = resolve_precision(options.precision, device);
  configure_precision(precision, device);
  std::optional<FileLock> run_dir_lock;  // held until training returns
  const RunDirectoryPlan run_plan = claim_run_directory(options.run_dir, start, parallel, run_dir_lock);
  watch_stop_signals();

  const PreparedData data(config.data.dir);
  MIXSEQ_CHECK(!data.monolingual(), "'", config.data.dir, "' holds a monolingual corpus; translation needs pairs");
  MIXSEQ_CHECK(data.has_split("train"), "'", config.data.dir, "' has no training split");
  const auto tokenizer = load_tokenizer(data.tokenizer());
  const bool can_validate = data.has_split("valid");
  check_validation_search(config, data);
  const EpochBatches validation_plan = can_validate ? plan_validation_batches(data, config.data) : EpochBatches{};

  torch::manual_seed(static_cast<uint64_t>(options.seed));
  auto model = build_seq2seq_model(config.model, data.vocabulary().size());
  model->to(device);
  auto optimizer = build_optimizer(config.optim, model->parameters());
  UpdateStep update_step(*model, *optimizer, config.clipping, config.loss_scaler, precision, device);
  DynamicLossScaler& scaler = update_step.loss_scaler();
  const bool scaling = update_step.scaling();

  TrainConfig resolved = config;
  const std::string config_yaml = config_to_yaml(resolved.fields());
  CheckpointContents checkpoint = describe_run(config_yaml, config.data.dir, data);
  TrainingProgress& progress = checkpoint.progress;
  const std::string last_path = last_checkpoint_path(options.run_dir);
  if (run_plan.resume) {
    const auto saved = read_checkpoint_contents(last_path);
    check_same_vocabulary(saved, checkpoint, last_path, config.data.dir);
    load_model_weights(last_path, *model);
    load_optimizer_state(last_path, *optimizer);
    progress = saved.progress;
    restore_rng_state(device, progress);
    if (scaling && progress.loss_scale > 0) scaler.load_state({progress.loss_scale, progress.loss_scale_clean_steps});
    log_info("train: resuming from ", last_path, " at update ", progress.step, ", epoch ", progress.epoch, " batch ",
             progress.epoch_batches);
  } else if (start == RunStart::kResume) {
    log_info("train: --resume given but ", options.run_dir, " holds no previous run; starting from scratch");
  }
  if (parallel.group) {
    GradientReducerOptions reducer_options;
    reducer_options.bucket_cap_mb = config.distributed.bucket_cap_mb;
    reducer_options.overlap = config.distributed.overlap;
    parallel.reducer = std::make_unique<GradientReducer>(model->parameters(), *parallel.group, reducer_options);
    update_step.set_gradient_reducer(parallel.reducer.get());
    log_info("train: gradients all-reduced in ", parallel.reducer->bucket_count(), " buckets of up to ",
             config.distributed.bucket_cap_mb, " MB", config.distributed.overlap ? ", during backward" : "");
  }
  log_info("train: configuration\n", config_yaml);
  log_info("train: ", config.model.arch, " with ", count_parameters(*model), " parameters, vocabulary ",
           data.vocabulary().size(), ", device ", device.str(), ", precision ", options.precision);

  const auto& train_source = data.source("train");
  const auto& train_target = data.target("train");
  const auto source_lengths = model_lengths(train_source), target_lengths = model_lengths(train_target);
  BatchingOptions batching;
  batching.max_tokens = config.data.max_tokens;
  batching.max_sentences = config.data.max_sentences;
  batching.max_length = config.data.max_length;
  batching.sentence_multiple = config.data.sentence_multiple;
  batching.seed = static_cast<uint64_t>(options.seed);
  batching.rank = parallel.rank();
  batching.world_size = parallel.world_size();
  const auto first_plan = plan_epoch_batches(source_lengths, target_lengths, batching, 1);
  const int64_t updates_per_epoch = static_cast<int64_t>(first_plan.batches.size()) / options.update_freq;
  MIXSEQ_CHECK(updates_per_epoch > 0, "the training split makes ", first_plan.batches.size(),
               " batches, fewer than train.update_freq (", options.update_freq, ")");
  if (first_plan.skipped_too_long > 0)
    log_info("train: skipping ", first_plan.skipped_too_long, " pairs longer than data.max_length (",
             config.data.max_length, ")");
  int64_t total_steps = planned_total_steps(options, updates_per_epoch);
  LrSchedule schedule(config.schedule, config.optim.lr, total_steps);
  const double seconds_before = progress.train_seconds;  // of earlier invocations of this run
  const auto train_seconds = [&] { return seconds_before + seconds_since(started); };
  double validation_seconds = 0;  // the last validation's duration: reserved at the end of a time budget
  // train.max_time: the updates that fit in what is left of the budget at the speed so far
  // (validations included), never more than the epochs or steps allow. The schedules that
  // depend on the total (gnmt_step's decay, cosine) are re-sized to it, as NVIDIA's GNMT
  // benchmark mode does.
  const auto fit_schedule_to_time_budget = [&] {
    if (options.max_time <= 0 || progress.step == 0) return;
    const double per_update = train_seconds() / static_cast<double>(progress.step);
    const double left = std::max(0.0, options.max_time - train_seconds() - validation_seconds);
    const int64_t fits = progress.step + static_cast<int64_t>(left / per_update);
    int64_t sized = std::min(planned_total_steps(options, updates_per_epoch), std::max(fits, progress.step + 1));
    // Ranks measure slightly different times; they must agree on the schedule.
    sized = std::llround(parallel.sum({static_cast<double>(sized)})[0] / static_cast<double>(parallel.world_size()));
    if (sized == total_steps) return;
    log_info("train: max_time ", options.max_time, " s: ", format_decimal(per_update * 1e3, 0),
             " ms per update so far, schedule sized to ", sized, " updates");
    total_steps = sized;
    schedule = LrSchedule(config.schedule, config.optim.lr, total_steps);
  };
  const auto out_of_time = [&] {
    return options.max_time > 0 && train_seconds() + validation_seconds >= options.max_time;
  };
  // Everything is checked: only now does the run folder change (--overwrite deletes the old run).
  if (parallel.leader()) {
    apply_run_directory_plan(options.run_dir, run_plan);
    OutputFile config_file(options.run_dir + "/config.yaml");
    config_file.stream() << config_yaml;
    config_file.commit();
  }

  MetricsLog metrics(parallel.leader() ? metrics_path(options.run_dir) : "");
  TrainSummary summary;
  IntervalSums interval;
  const auto zero = [&] { return torch::zeros({}, torch::device(device)); };
  interval.loss = zero(), interval.nll = zero();
  const int64_t first_step = progress.step;
  const auto save_last = [&] {
    progress.train_seconds = train_seconds();
    if (!parallel.leader()) return;  // all ranks hold the same model and optimizer state
    save_rng_state(device, progress);
    if (scaling) progress.loss_scale = scaler.state().scale, progress.loss_scale_clean_steps = scaler.state().clean_steps;
    save_checkpoint(last_path, checkpoint, *model, optimizer.get());
    if (options.keep_last_checkpoints == 0) return;
    // Numbered copies for averaging (mixseq average-checkpoints); resume reads checkpoint_last only.
    save_checkpoint(numbered_checkpoint_path(options.run_dir, progress.step), checkpoint, *model, optimizer.get());
    const auto numbered = numbered_checkpoints(options.run_dir);
    for (size_t i = 0; i + static_cast<size_t>(options.keep_last_checkpoints) < numbered.size(); ++i)
      std::filesystem::remove(numbered[i]);
  };
  bool stopping = false;
  const auto validate = [&](bool with_bleu) {
    const auto validation_started = Clock::now();
    const auto valid = validation_loss(*model, data, validation_plan, config, device, precision, parallel);
    summary.last_valid_loss = valid.loss;
    nlohmann::json record = {{"kind", "valid"}, {"epoch", progress.epoch}, {"step", progress.step},
                             {"loss", valid.loss}, {"ppl", valid.perplexity}};
    std::string line = str_cat("valid | epoch ", progress.epoch, " | step ", progress.step, " | loss ", valid.loss,
                               " | ppl ", valid.perplexity);
    // The best checkpoint has the highest BLEU; without BLEU, the lowest validation loss (the
    // default of fairseq's best_checkpoint_metric and of Marian's first valid-metric).
    bool best = false;
    if (with_bleu) {
      const auto bleu = validation_bleu(*model, data, *tokenizer, config, device, precision, parallel);
      record["bleu"] = bleu.score;
      line += str_cat(" | bleu ", format_decimal(bleu.score, 2));
      best = bleu.score > progress.best_score;
      if (best) progress.best_score = bleu.score;
      summary.best_bleu = progress.best_score;
      if (options.target_bleu > 0 && bleu.score >= options.target_bleu) {
        summary.reached_target_bleu = true;
        stopping = true;
        line += str_cat(" | reached train.target_bleu ", options.target_bleu);
      }
    } else if (!options.validate_bleu) {
      best = progress.best_loss < 0 || valid.loss < progress.best_loss;
      if (best) progress.best_loss = valid.loss;
    }
    if (best) {
      save_rng_state(device, progress);
      if (parallel.leader())
        save_checkpoint(best_checkpoint_path(options.run_dir), checkpoint, *model, optimizer.get());
      line += " (best)";
    }
    validation_seconds = seconds_since(validation_started);
    metrics.write(record, line);
  };

  model->train();
  bool time_is_up = false;
  while (progress.step < total_steps && !stopping) {
    const auto plan = plan_epoch_batches(source_lengths, target_lengths, batching, progress.epoch).batches;
    const auto batches_in_epoch = static_cast<int64_t>(plan.size());
    while (progress.epoch_batches + options.update_freq <= batches_in_epoch && progress.step < total_steps) {
      std::vector<TranslationBatch> batches;
      int64_t target_tokens = 0;
      for (int64_t micro = 0; micro < options.update_freq; ++micro) {
        batches.push_back(make_translation_batch(train_source, &train_target, plan[progress.epoch_batches + micro]));
        target_tokens += batches.back().target_tokens;
      }
      // One exchange per update: the update's target tokens over all ranks (the loss is per
      // token of the whole update) and whether any rank was asked to stop (all stop together).
      const int signal = stop_signal();
      const auto agreed = parallel.sum({static_cast<double>(target_tokens), signal == SIGINT ? 1.0 : 0.0,
                                        signal == SIGTERM ? 1.0 : 0.0, out_of_time() ? 1.0 : 0.0});
      if (agreed[1] + agreed[2] > 0) {
        // A rank that got no signal itself stops as the others were told to.
        summary.stop_signal = signal != 0 ? signal : agreed[2] > 0 ? SIGTERM : SIGINT;
        log_info("train: stop requested (", summary.stop_signal == SIGINT ? "SIGINT" : "SIGTERM", "); saving ",
                 last_path);
        stopping = true;
        break;
      }
      if (agreed[3] > 0) {
        log_info("train: train.max_time (", options.max_time, " s) reached, leaving time for a last validation");
        time_is_up = true;
        break;
      }
      const double lr = schedule.lr_at(progress.step);
      set_learning_rate(*optimizer, lr);
      const auto update = update_step.run(
          options.update_freq,
          [&](int64_t micro) { return translation_loss(*model, batches[micro], config.criterion, precision, device); },
          static_cast<int64_t>(agreed[0]));
      interval.loss += update.loss;
      interval.nll += update.nll;
      interval.source_tokens += update.source_tokens;
      interval.target_tokens += update.target_tokens;
      ++progress.step;
      progress.epoch_batches += options.update_freq;
      ++interval.updates;
      interval.skipped += update.skipped;

      const double elapsed = seconds_since(interval.start);
      const double eta = seconds_since(started) / (progress.step - first_step) * (total_steps - progress.step);
      if (progress.step % options.log_interval == 0 || progress.step == total_steps) {
        const auto sums = parallel.sum({interval.loss.item<double>(), interval.nll.item<double>(),
                                        static_cast<double>(interval.source_tokens),
                                        static_cast<double>(interval.target_tokens)});
        const double per_token = 1.0 / std::max(sums[3], 1.0);
        const double loss = sums[0] * per_token;
        const double perplexity = std::exp(sums[1] * per_token);
        const double tokens_per_second = (sums[2] + sums[3]) / std::max(elapsed, 1e-9);  // all ranks
        const double ms_per_update = elapsed * 1e3 / interval.updates;
        nlohmann::json record = {{"kind", "train"}, {"epoch", progress.epoch}, {"step", progress.step},
                                 {"lr", lr}, {"ms_per_update", ms_per_update}, {"tok_per_s", tokens_per_second},
                                 {"loss", loss}, {"ppl", perplexity}, {"skipped_updates", interval.skipped}};
        if (scaling) record["loss_scale"] = scaler.current_scale();
        metrics.write(record, str_cat("train | epoch ", progress.epoch, " | step ", progress.step, "/", total_steps,
                                      " | lr ", lr, " | ", format_decimal(ms_per_update, 1), " ms/update | ",
                                      format_decimal(tokens_per_second, 0), " tok/s | loss ", format_decimal(loss, 4),
                                      " | ppl ", format_decimal(perplexity, 2),
                                      scaling ? str_cat(" | loss scale ", scaler.current_scale()) : "",
                                      " | ETA ", format_duration(eta)));
        interval = IntervalSums{};
        interval.loss = zero(), interval.nll = zero();
      } else if (parallel.leader()) {
        // This rank's rate times the ranks: an estimate that needs no exchange.
        const double tokens_per_second = static_cast<double>(interval.source_tokens + interval.target_tokens) *
                                         static_cast<double>(parallel.world_size()) / std::max(elapsed, 1e-9);
        metrics.progress(str_cat("epoch ", progress.epoch, " step ", progress.step, "/", total_steps, " | ",
                                 format_decimal(tokens_per_second, 0), " tok/s | ETA ", format_duration(eta)));
      }
      if (can_validate && options.validate_interval > 0 && progress.step % options.validate_interval == 0)
        validate(/*with_bleu=*/false);
      if (options.save_interval > 0 && progress.step % options.save_interval == 0) save_last();
      if (progress.step == first_step + 20) fit_schedule_to_time_budget();  // the first speed measurement
    }
    const bool epoch_complete = progress.epoch_batches + options.update_freq > batches_in_epoch;
    // A run that ends inside an epoch (max_steps, max_time) validates its final model too.
    const bool ending = time_is_up || (progress.step >= total_steps && !stopping);
    if ((epoch_complete || ending) && can_validate) validate(options.validate_bleu);
    if (epoch_complete) {
      summary.epochs = progress.epoch;
      ++progress.epoch;
      progress.epoch_batches = 0;
      fit_schedule_to_time_budget();
    }
    if (time_is_up) stopping = true;
    save_last();
  }
  if (!can_validate && summary.stop_signal == 0 && stop_signal() == 0 && progress.step > first_step &&
      parallel.leader()) {
    // Nothing to choose a best model by: the final one is it, so that the usual
    // `translate -c <run_dir>/checkpoint_best.pt` works.
    save_checkpoint(best_checkpoint_path(options.run_dir), checkpoint, *model, optimizer.get());
    log_info("train: no validation split in ", config.data.dir, ": ", best_checkpoint_path(options.run_dir),
             " is the final model, the same as checkpoint_last.pt");
  }
  if (summary.stop_signal == 0) summary.stop_signal = stop_signal();  // one that came after the last update
  summary.steps = progress.step;
  summary.best_bleu = progress.best_score;
  summary.seconds = seconds_since(started);
  return summary;
}

}  // namespace mixseq
