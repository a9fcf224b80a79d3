#include "mixseq/train/training_session.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "mixseq/data/prepared_data.h"
#include "mixseq/distributed/launch_environment.h"
#include "mixseq/text/score_report.h"
#include "mixseq/train/checkpoint_average.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/file_bytes.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Joins the job's other ranks when a launcher started several; on CUDA each local rank takes
// its own GPU.
DataParallel join_data_parallel(const LaunchEnvironment& launch, const DistributedConfig& config,
                                torch::Device& device) {
  DataParallel parallel;
  if (!launch.distributed()) return parallel;
  if (device.is_cuda()) device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(launch.local_rank));
  configure_log_lines(str_cat("[rank ", launch.rank, "] "), launch.rank == 0 || config.log_all_ranks);
  parallel.group = std::make_unique<ProcessGroup>(launch, device, config.group);
  log_info("train: rank ", launch.rank, " of ", launch.world_size, " (", launch.launcher, ", local rank ",
           launch.local_rank, ") joined the ", parallel.group->backend(), " group at ", launch.master_addr, ":",
           launch.master_port);
  return parallel;
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

// What every task's loop needs of train.* and distributed.*, checked before anything starts.
void check_options(const TrainOptions& train, const DistributedConfig& distributed) {
  MIXSEQ_CHECK(train.max_epochs > 0 || train.max_steps > 0 || train.max_time > 0,
               "train.max_epochs, train.max_steps and train.max_time are all 0: set one of them to say when to stop");
  MIXSEQ_CHECK(std::isfinite(train.max_time) && train.max_time >= 0, "train.max_time (", train.max_time,
               ") must be a number of seconds, or 0 for no time budget");
  MIXSEQ_CHECK(train.max_epochs >= 0 && train.max_steps >= 0, "train.max_epochs (", train.max_epochs,
               ") and train.max_steps (", train.max_steps, ") must not be negative");
  MIXSEQ_CHECK(train.update_freq >= 1, "train.update_freq (", train.update_freq, ") must be at least 1");
  MIXSEQ_CHECK(train.log_interval >= 1, "train.log_interval (", train.log_interval, ") must be at least 1");
  MIXSEQ_CHECK(train.keep_last_checkpoints >= 0, "train.keep_last_checkpoints (", train.keep_last_checkpoints,
               ") must be 0 (none) or positive");
  MIXSEQ_CHECK(train.validate_interval >= 0, "train.validate_interval (", train.validate_interval,
               ") must be 0 (at epoch ends only) or positive");
  MIXSEQ_CHECK(train.patience >= 0, "train.patience (", train.patience, ") must be 0 (off) or positive");
  MIXSEQ_CHECK(train.save_interval >= 0, "train.save_interval (", train.save_interval,
               ") must be 0 (at epoch ends only) or positive");
  MIXSEQ_CHECK(distributed.group.timeout >= 1, "distributed.timeout (", distributed.group.timeout,
               ") must be at least 1 second");
  MIXSEQ_CHECK(distributed.reducer.bucket_cap_mb > 0, "distributed.bucket_cap_mb (", distributed.reducer.bucket_cap_mb,
               ") must be positive");
}

const TrainOptions& checked(const TrainOptions& train, const DistributedConfig& distributed) {
  check_options(train, distributed);
  return train;
}

}  // namespace

int64_t planned_total_steps(const TrainOptions& options, int64_t updates_per_epoch) {
  const int64_t by_epochs = options.max_epochs * updates_per_epoch;
  if (options.max_epochs == 0 && options.max_steps == 0) return kUnboundedSteps;
  if (options.max_steps == 0) return by_epochs;
  return options.max_epochs == 0 ? options.max_steps : std::min(options.max_steps, by_epochs);
}

TrainingSession::TrainingSession(const TrainOptions& options, const DistributedConfig& distributed, RunStart start)
    : options_(checked(options, distributed)), distributed_(distributed), start_(start), device_(resolve_device(options.device, "--train.device")) {
  parallel_ = join_data_parallel(detect_launch_environment(), distributed, device_);
  precision_ = resolve_precision(options.precision, device_);
  configure_precision(precision_, device_);
  std::error_code unreadable;
  created_run_dir_ = parallel_.leader() && !std::filesystem::exists(options.run_dir, unreadable) && !unreadable;
  run_plan_ = claim_run_directory(options.run_dir, start, parallel_, run_dir_lock_);
  watch_stop_signals();
}

TrainingSession::~TrainingSession() {
  if (!created_run_dir_ || opened_run_dir_ || !run_dir_lock_) return;
  // Still holding the lock: nothing else has written here. Removing the lock file while it is
  // held is safe (a later run locks a new file of the same name); remove() leaves a folder that
  // someone else has put a file in.
  std::error_code ignored;
  std::filesystem::remove(run_dir_lock_->path(), ignored);
  std::filesystem::remove(options_.run_dir, ignored);
}

CheckpointContents describe_prepared_data(const std::string& data_dir, const PreparedData& data) {
  CheckpointContents contents;
  contents.vocabulary_text = read_file_bytes(data_dir + "/vocab.txt");
  contents.vocabulary_fingerprint = vocabulary_fingerprint(data.vocabulary());
  contents.source_lang = data.source_lang();
  contents.target_lang = data.target_lang();
  const std::string& tokenizer_spec = data.tokenizer();
  const auto colon = tokenizer_spec.find(':');
  contents.tokenizer_kind = tokenizer_spec.substr(0, colon);
  if (colon != std::string::npos) contents.tokenizer_model = read_file_bytes(tokenizer_spec.substr(colon + 1));
  return contents;
}

void TrainingSession::begin(const std::string& config_yaml, const std::string& data_dir,
                            const CheckpointContents& data_description, torch::nn::Module& model,
                            torch::optim::Optimizer& optimizer, UpdateStep& update_step) {
  model_ = &model;
  optimizer_ = &optimizer;
  update_step_ = &update_step;
  contents_ = data_description;
  contents_.config_yaml = config_yaml;
  contents_.progress = TrainingProgress{};
  TrainingProgress& progress = contents_.progress;
  const std::string last_path = last_checkpoint_path(options_.run_dir);
  if (run_plan_.resume) {
    const auto saved = read_checkpoint_contents(last_path);
    check_same_vocabulary(saved, contents_, last_path, data_dir);
    load_model_weights(last_path, model);
    load_optimizer_state(last_path, optimizer);
    progress = saved.progress;
    restore_rng_state(device_, progress);
    if (update_step.scaling() && progress.loss_scale > 0)
      update_step.loss_scaler().load_state({progress.loss_scale, progress.loss_scale_clean_steps});
    log_info("train: resuming from ", last_path, " at update ", progress.step, ", epoch ", progress.epoch, " batch ",
             progress.epoch_batches);
  } else if (start_ == RunStart::kResume) {
    log_info("train: --resume given but ", options_.run_dir, " holds no previous run; starting from scratch");
  }
  if (parallel_.group) {
    parallel_.reducer = std::make_unique<GradientReducer>(model.parameters(), *parallel_.group, distributed_.reducer);
    update_step.set_gradient_reducer(parallel_.reducer.get());
    log_info("train: gradients all-reduced in ", parallel_.reducer->bucket_count(), " buckets of up to ",
             distributed_.reducer.bucket_cap_mb, " MB", distributed_.reducer.overlap ? ", during backward" : "");
  }
  seconds_before_ = progress.train_seconds;
  first_step_ = progress.step;
}

void TrainingSession::open_run_directory(const std::string& config_yaml) {
  opened_run_dir_ = true;
  if (parallel_.leader()) {
    apply_run_directory_plan(options_.run_dir, run_plan_);
    OutputFile config_file(options_.run_dir + "/config.yaml");
    config_file.stream() << config_yaml;
    config_file.commit();
  }
  metrics_.emplace(parallel_.leader() ? metrics_path(options_.run_dir) : "");
  reset_interval();
  // A resumed run's first log line covers the updates logged nowhere before the stop, as in a run
  // that never stopped. The sums were over all ranks: rank 0 takes them up.
  const auto& saved = contents_.progress.log_interval_sums;
  if (saved.size() != static_cast<size_t>(kLogIntervalSums)) return;
  const bool leader = parallel_.leader();
  interval_.loss.fill_(leader ? saved[0] : 0.0);
  interval_.nll.fill_(leader ? saved[1] : 0.0);
  interval_.resumed_source_tokens = interval_.source_tokens = leader ? static_cast<int64_t>(saved[2]) : 0;
  interval_.resumed_target_tokens = interval_.target_tokens = leader ? static_cast<int64_t>(saved[3]) : 0;
  interval_.resumed_updates = interval_.updates = static_cast<int64_t>(saved[4]);
  interval_.skipped = static_cast<int64_t>(saved[5]);
  interval_.grad_norm = saved[6];  // every rank's: the same reduced gradients
}

double TrainingSession::seconds() const { return seconds_since(started_); }

double TrainingSession::train_seconds() const { return seconds_before_ + seconds(); }

double TrainingSession::seconds_per_update() const {
  const int64_t step = contents_.progress.step;
  return step > 0 ? train_seconds() / static_cast<double>(step) : 0.0;
}

bool TrainingSession::out_of_time() const {
  return options_.max_time > 0 && train_seconds() + validation_seconds_ >= options_.max_time;
}

int64_t TrainingSession::fit_to_time_budget(int64_t total_steps, int64_t most_steps) const {
  const int64_t step = contents_.progress.step;
  if (options_.max_time <= 0 || step == 0) return total_steps;
  const double per_update = seconds_per_update();
  const double left = std::max(0.0, options_.max_time - train_seconds() - validation_seconds_);
  const int64_t fits = step + static_cast<int64_t>(left / per_update);
  int64_t sized = std::min(most_steps, std::max(fits, step + 1));
  // Ranks measure slightly different times; they must agree on the schedule.
  sized = std::llround(parallel_.sum({static_cast<double>(sized)})[0] / static_cast<double>(parallel_.world_size()));
  return sized;
}

UpdateAgreement TrainingSession::agree_on_update(int64_t target_tokens) {
  // One exchange per update: the update's target tokens over all ranks (the loss is per token of
  // the whole update) and whether any rank was asked to stop (all stop together).
  const int signal = stop_signal();
  const auto agreed = parallel_.sum({static_cast<double>(target_tokens), signal == SIGINT ? 1.0 : 0.0,
                                     signal == SIGTERM ? 1.0 : 0.0, out_of_time() ? 1.0 : 0.0, train_seconds()});
  agreed_train_seconds_ = agreed[4] / static_cast<double>(parallel_.world_size());
  UpdateAgreement agreement;
  agreement.update_tokens = static_cast<int64_t>(agreed[0]);
  if (agreed[1] + agreed[2] > 0) {
    // A rank that got no signal itself stops as the others were told to.
    agreement.stop_signal = signal != 0 ? signal : agreed[2] > 0 ? SIGTERM : SIGINT;
    log_info("train: stop requested (", agreement.stop_signal == SIGINT ? "SIGINT" : "SIGTERM", "); saving ",
             last_checkpoint_path(options_.run_dir));
    return agreement;
  }
  if (agreed[3] > 0) {
    log_info("train: train.max_time (", options_.max_time, " s) reached, leaving time for a last validation");
    agreement.out_of_time = true;
  }
  return agreement;
}

void TrainingSession::reset_interval() {
  interval_ = IntervalSums{};
  interval_.loss = torch::zeros({}, torch::device(device_));
  interval_.nll = torch::zeros({}, torch::device(device_));
}

std::vector<double> TrainingSession::summed_interval() const {
  return parallel_.sum({interval_.loss.item<double>(), interval_.nll.item<double>(),
                        static_cast<double>(interval_.source_tokens), static_cast<double>(interval_.target_tokens),
                        static_cast<double>(interval_.resumed_source_tokens),
                        static_cast<double>(interval_.resumed_target_tokens)});
}

void TrainingSession::record_update(const UpdateResult& update, double lr, int64_t total_steps) {
  const TrainingProgress& progress = contents_.progress;
  interval_.loss += update.loss;
  interval_.nll += update.nll;
  interval_.source_tokens += update.source_tokens;
  interval_.target_tokens += update.target_tokens;
  ++interval_.updates;
  interval_.skipped += update.skipped;
  interval_.grad_norm += update.grad_norm;

  const double elapsed = seconds_since(interval_.start);
  double eta = seconds() / (progress.step - first_step_) * (total_steps - progress.step);
  // Before train.max_time has sized an unbounded run, its total means nothing: the budget ends it.
  if (options_.max_time > 0) eta = std::min(eta, std::max(0.0, options_.max_time - train_seconds()));
  const std::string total_text = total_steps >= kUnboundedSteps ? "?" : std::to_string(total_steps);
  const bool scaling = update_step_->scaling();
  if (progress.step % options_.log_interval == 0 || progress.step == total_steps) {
    const auto sums = summed_interval();
    const double per_token = 1.0 / std::max(sums[3], 1.0);
    const double loss = sums[0] * per_token;
    const double perplexity = std::exp(sums[1] * per_token);
    // Speeds over what this invocation timed (a resumed run took the rest over from its checkpoint).
    const double timed_source = sums[2] - sums[4], timed_target = sums[3] - sums[5];
    const double counted = timed_source + (units_.targets_in_throughput ? timed_target : 0.0);
    const double tokens_per_second = counted / std::max(elapsed, 1e-9);  // all ranks
    const double target_tokens_per_second = timed_target / std::max(elapsed, 1e-9);  // fairseq's "wps"
    const double ms_per_update = elapsed * 1e3 / static_cast<double>(interval_.updates - interval_.resumed_updates);
    // Every rank holds the same reduced gradients, so this rank's norms are everyone's.
    const int64_t stepped = interval_.updates - interval_.skipped;
    const double grad_norm = stepped > 0 ? interval_.grad_norm / static_cast<double>(stepped) : 0;
    nlohmann::json record = {{"kind", "train"}, {"epoch", progress.epoch}, {"step", progress.step},
                             {"lr", lr}, {"ms_per_update", ms_per_update}, {units_.throughput + "_per_s", tokens_per_second},
                             {"loss", loss}, {"gnorm", grad_norm}, {"skipped_updates", interval_.skipped},
                             {"train_s", train_seconds()}};
    if (units_.targets_in_throughput) record["tgt_tok_per_s"] = target_tokens_per_second;
    if (units_.perplexity) record["ppl"] = perplexity;
    const double scale = scaling ? update_step_->loss_scaler().current_scale() : 0;
    if (scaling) record["loss_scale"] = scale;
    metrics_->write(record, str_cat("train | epoch ", progress.epoch, " | step ", progress.step, "/", total_text,
                                    " | lr ", lr, " | ", format_decimal(ms_per_update, 1), " ms/update | ",
                                    format_decimal(tokens_per_second, 0), " ", units_.throughput, "/s | loss ",
                                    format_decimal(loss, 4),
                                    units_.perplexity ? str_cat(" | ppl ", format_decimal(perplexity, 2)) : "",
                                    " | gnorm ", format_decimal(grad_norm, 3),
                                    scaling ? str_cat(" | loss scale ", scale) : "", " | ETA ", format_duration(eta)));
    reset_interval();
  } else if (parallel_.leader()) {
    // This rank's rate times the ranks: an estimate that needs no exchange.
    const int64_t timed = interval_.source_tokens - interval_.resumed_source_tokens +
                          (units_.targets_in_throughput ? interval_.target_tokens - interval_.resumed_target_tokens : 0);
    const double tokens_per_second =
        static_cast<double>(timed) * static_cast<double>(parallel_.world_size()) / std::max(elapsed, 1e-9);
    metrics_->progress(str_cat("epoch ", progress.epoch, " step ", progress.step, "/", total_text, " | ",
                               format_decimal(tokens_per_second, 0), " ", units_.throughput, "/s | ETA ",
                               format_duration(eta)));
  }
}

bool TrainingSession::note_validation(bool improved) {
  int64_t& count = contents_.progress.validations_without_improvement;
  count = improved ? 0 : count + 1;
  return patience_exhausted();
}

bool TrainingSession::patience_exhausted() const {
  return options_.patience > 0 && contents_.progress.validations_without_improvement >= options_.patience;
}

void TrainingSession::save_last() {
  TrainingProgress& progress = contents_.progress;
  progress.train_seconds = train_seconds();
  progress.log_interval_sums.clear();
  if (interval_.updates > 0) {  // the same on every rank: every rank sums with the others
    const auto sums = summed_interval();
    progress.log_interval_sums = {sums[0], sums[1], sums[2], sums[3], static_cast<double>(interval_.updates),
                                  static_cast<double>(interval_.skipped), interval_.grad_norm};
  }
  if (!parallel_.leader()) return;  // all ranks hold the same model and optimizer state
  save_rng_state(device_, progress);
  if (update_step_->scaling()) {
    const auto& state = update_step_->loss_scaler().state();
    progress.loss_scale = state.scale, progress.loss_scale_clean_steps = state.clean_steps;
  }
  save_checkpoint(last_checkpoint_path(options_.run_dir), contents_, *model_, optimizer_);
  if (options_.keep_last_checkpoints == 0) return;
  // Numbered copies for averaging (mixseq average-checkpoints); resume reads checkpoint_last only.
  save_checkpoint(numbered_checkpoint_path(options_.run_dir, progress.step), contents_, *model_, optimizer_);
  const auto numbered = numbered_checkpoints(options_.run_dir);
  for (size_t i = 0; i + static_cast<size_t>(options_.keep_last_checkpoints) < numbered.size(); ++i)
    std::filesystem::remove(numbered[i]);
}

void TrainingSession::save_best() {
  save_rng_state(device_, contents_.progress);
  if (parallel_.leader()) save_checkpoint(best_checkpoint_path(options_.run_dir), contents_, *model_, optimizer_);
}

}  // namespace mixseq
