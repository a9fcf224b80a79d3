#include "mixseq/train/language_model_trainer.h"

#include <torch/utils.h>

#include <chrono>
#include <cmath>

#include "mixseq/data/lm_stream.h"
#include "mixseq/data/prepared_data.h"
#include "mixseq/decode/lm_evaluation.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/text/score_report.h"
#include "mixseq/train/run_schedule.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {
namespace {

using Clock = std::chrono::steady_clock;

void check_options(const TrainConfig& config) {
  const LmDataConfig& lm = config.lm;
  MIXSEQ_CHECK(!config.data.dir.empty(), "data.dir is empty: give the folder written by `mixseq prepare`");
  MIXSEQ_CHECK(config.train.target_bleu == 0, "train.target_bleu (", config.train.target_bleu,
               ") is for translation models; a language model is validated by perplexity");
  MIXSEQ_CHECK(config.train.best_metric != "bleu", "train.best_metric bleu is for translation models; a language ",
               "model's best checkpoint has the lowest validation loss");
  MIXSEQ_CHECK(config.train.update_freq == 1, "train.update_freq (", config.train.update_freq,
               ") must be 1 for a language model: lm.batch_chunk splits an update into micro-batches");
  MIXSEQ_CHECK(lm.batch_size >= 1 && lm.tgt_len >= 1 && lm.batch_chunk >= 1, "lm.batch_size (", lm.batch_size,
               "), lm.tgt_len (", lm.tgt_len, ") and lm.batch_chunk (", lm.batch_chunk, ") must be positive");
  MIXSEQ_CHECK(lm.batch_size % lm.batch_chunk == 0, "lm.batch_size (", lm.batch_size,
               ") must be a multiple of lm.batch_chunk (", lm.batch_chunk, ")");
  MIXSEQ_CHECK(lm.eval_batch_size >= 1 && lm.eval_tgt_len >= 1 && lm.eval_mem_len >= 0, "lm.eval_batch_size (",
               lm.eval_batch_size, ") and lm.eval_tgt_len (", lm.eval_tgt_len,
               ") must be positive, lm.eval_mem_len (", lm.eval_mem_len, ") 0 (the model's) or positive");
}

// The memory of every chunk of this rank's streams, kept between updates.
class StreamMemories {
 public:
  StreamMemories(int64_t chunks, int64_t rows_per_chunk) : memories_(chunks), rows_per_chunk_(rows_per_chunk) {}

  LmMemory& of_chunk(int64_t chunk) { return memories_[chunk]; }
  void reset() {
    for (auto& memory : memories_) memory = {};
  }

  // Per layer [B, M, D] over all ranks' streams (row = stream), for the checkpoint; empty when
  // the memory is. All ranks.
  std::vector<torch::Tensor> gather(const DataParallel& parallel) const {
    if (memories_.front().empty()) return {};
    std::vector<torch::Tensor> layers;
    for (size_t l = 0; l < memories_.front().layers.size(); ++l) {
      std::vector<torch::Tensor> chunks;
      for (const auto& memory : memories_) chunks.push_back(memory.layers[l]);
      const auto local = torch::cat(chunks, 0);  // [B/W, M, D]
      if (parallel.world_size() == 1) {
        layers.push_back(local.cpu());
        continue;
      }
      // Each rank writes its rows into a zero table; a sum over ranks joins them.
      auto sizes = local.sizes().vec();
      sizes[0] *= parallel.world_size();
      auto all = torch::zeros(sizes, local.options());
      all.narrow(0, parallel.rank() * local.size(0), local.size(0)).copy_(local);
      parallel.group->all_reduce_sum(all);
      layers.push_back(all.cpu());
    }
    return layers;
  }

  // The inverse of gather(): this rank's rows of `layers`, split into its chunks.
  void restore(const std::vector<torch::Tensor>& layers, const DataParallel& parallel, const torch::Device& device) {
    reset();
    const int64_t local_rows = rows_per_chunk_ * static_cast<int64_t>(memories_.size());
    for (const auto& layer : layers) {
      MIXSEQ_CHECK(layer.dim() == 3 && layer.size(0) == local_rows * parallel.world_size(),
                   "the memory saved in the checkpoint has shape ", layer.sizes(), ", not that of ",
                   local_rows * parallel.world_size(), " streams: was lm.batch_size changed?");
      const auto local = layer.narrow(0, parallel.rank() * local_rows, local_rows).to(device);
      for (size_t c = 0; c < memories_.size(); ++c)
        memories_[c].layers.push_back(local.narrow(0, static_cast<int64_t>(c) * rows_per_chunk_, rows_per_chunk_));
    }
  }

 private:
  std::vector<LmMemory> memories_;
  int64_t rows_per_chunk_;
};

}  // namespace

TrainSummary train_language_model(const TrainConfig& config, RunStart start) {
  check_options(config);
  const TrainOptions& options = config.train;
  const LmDataConfig& lm = config.lm;
  TrainingSession session(options, config.distributed, start);
  const torch::Device& device = session.device();
  const Precision precision = session.precision();
  const DataParallel& parallel = session.parallel();
  MIXSEQ_CHECK(lm.batch_size % (parallel.world_size() * lm.batch_chunk) == 0, "lm.batch_size (", lm.batch_size,
               ") must be a multiple of the world size (", parallel.world_size(), ") times lm.batch_chunk (",
               lm.batch_chunk, ")");
  MIXSEQ_CHECK(lm.eval_batch_size % parallel.world_size() == 0, "lm.eval_batch_size (", lm.eval_batch_size,
               ") must be a multiple of the world size (", parallel.world_size(), ")");

  const PreparedData data(config.data.dir);
  MIXSEQ_CHECK(data.monolingual(), "'", config.data.dir, "' holds a parallel corpus (", data.source_lang(), "-",
               data.target_lang(), "); a language model trains on one text: prepare it without a target language");
  MIXSEQ_CHECK(data.has_split("train"), "'", config.data.dir, "' has no training split");
  const auto train_tokens = concatenate_with_eos(data.source("train"), kEosId);
  const bool can_validate = data.has_split("valid");
  const auto valid_tokens = can_validate ? concatenate_with_eos(data.source("valid"), kEosId) : std::vector<int64_t>{};

  LmStreamOptions stream_options;
  stream_options.batch_size = lm.batch_size;
  stream_options.segment_length = lm.tgt_len;
  stream_options.variable_length = lm.varlen;
  stream_options.roll = lm.roll;
  stream_options.seed = static_cast<uint64_t>(options.seed);
  stream_options.rank = parallel.rank();
  stream_options.world_size = parallel.world_size();
  LmStream stream(train_tokens, stream_options);
  // With variable lengths the count is an estimate, which only the schedule's length depends on.
  const int64_t updates_per_epoch = (stream.stream_length() - 1 + lm.tgt_len - 1) / lm.tgt_len;
  LmEvaluationOptions validation;
  validation.batch_size = lm.eval_batch_size;
  validation.tgt_len = lm.eval_tgt_len;
  validation.rank = parallel.rank();
  validation.world_size = parallel.world_size();
  if (can_validate) {  // a validation text too short for its streams fails now, not after an epoch
    try {
      LmStream(valid_tokens, LmStreamOptions{lm.eval_batch_size, lm.eval_tgt_len});
    } catch (const Error& e) {
      throw Error(str_cat("the validation split of '", config.data.dir, "' with lm.eval_batch_size ",
                          lm.eval_batch_size, ": ", e.what()));
    }
  }

  torch::manual_seed(static_cast<uint64_t>(options.seed));
  auto model = build_language_model(config.model, data.vocabulary().size());
  model->to(device);
  const LmContext training_context = model->context();
  LmContext validation_context = training_context;
  if (lm.eval_mem_len > 0) validation_context.mem_len = lm.eval_mem_len;
  auto optimizer = build_optimizer(config.optim, model->parameters());
  UpdateStep update_step(*model, *optimizer, config.clipping, config.loss_scaler, precision, device);
  TrainConfig resolved = config;
  const std::string config_yaml = config_to_yaml(resolved.fields());
  session.begin(config_yaml, config.data.dir, data, *model, *optimizer, update_step);
  TrainingProgress& progress = session.progress();
  log_info("train: configuration\n", config_yaml);
  log_info("train: ", config.model.arch, " language model with ", count_parameters(*model),
           " parameters, vocabulary ", data.vocabulary().size(), ", ", train_tokens.size(), " training tokens in ",
           lm.batch_size, " streams of ", stream.stream_length(), ", device ", device.str(), ", precision ",
           options.precision);

  const int64_t chunks = lm.batch_chunk;
  const int64_t rows_per_chunk = lm.batch_size / parallel.world_size() / chunks;
  StreamMemories memories(chunks, rows_per_chunk);
  stream.seek({progress.epoch, progress.epoch_batches});
  memories.restore(progress.carried_state, parallel, device);
  const auto save_last = [&] {
    progress.carried_state = memories.gather(parallel);
    session.save_last();
  };

  RunSchedule schedule(session, config.schedule, config.optim.lr, updates_per_epoch);
  session.open_run_directory(config_yaml);

  TrainSummary summary;
  bool stopping = session.patience_exhausted();
  if (stopping) log_info("train: train.patience (", options.patience, ") was used up before: nothing to train");
  int64_t validated_step = -1;  // an interval validation on the update that ends the epoch or the run
  const auto validate = [&] {
    if (progress.step == validated_step) return;
    validated_step = progress.step;
    const auto started = Clock::now();
    model->set_context(validation_context);
    const auto scored = evaluate_language_model(*model, valid_tokens, validation, device, precision);
    model->set_context(training_context);
    const auto sums = parallel.sum({scored.nll_sum, static_cast<double>(scored.tokens)});
    const double loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
    summary.last_valid_loss = loss;
    nlohmann::json record = {{"kind", "valid"}, {"epoch", progress.epoch}, {"step", progress.step},
                             {"loss", loss},    {"ppl", std::exp(loss)}, {"tokens", sums[1]},
                             {"train_s", session.train_seconds()}};
    std::string line = str_cat("valid | epoch ", progress.epoch, " | step ", progress.step, " | loss ",
                               format_decimal(loss, 4), " | ppl ", format_decimal(std::exp(loss), 2));
    const bool best = progress.best_loss < 0 || loss < progress.best_loss;
    if (best) {
      progress.best_loss = loss;
      progress.carried_state = {};  // the best model is for evaluation: no training memory in it
      session.save_best();
      line += " (best)";
    }
    if (session.note_validation(best)) {
      stopping = true;
      summary.out_of_patience = true;
      line += str_cat(" | no better loss in ", options.patience, " validations (train.patience): stopping");
    }
    session.set_validation_seconds(std::chrono::duration<double>(Clock::now() - started).count());
    session.metrics().write(record, line);
  };

  model->train();
  while (progress.step < schedule.total_steps() && !stopping) {
    bool epoch_complete = false, time_is_up = false;
    while (progress.step < schedule.total_steps() && !stopping) {
      const auto segment = stream.next();
      if (!segment) {
        epoch_complete = true;
        break;
      }
      const auto agreed = session.agree_on_update(segment->target.numel());
      if (agreed.stop_signal != 0) {
        summary.stop_signal = agreed.stop_signal;
        stopping = true;
        break;
      }
      if (agreed.out_of_time) {
        time_is_up = true;
        break;
      }
      const auto input = segment->input.to(device), target = segment->target.to(device);  // [B/W, T]
      const double lr = schedule.lr_at(progress.step);
      set_learning_rate(*optimizer, lr);
      const auto update = update_step.run(
          chunks,
          [&](int64_t chunk) {
            const auto rows = [&](const torch::Tensor& t) { return t.narrow(0, chunk * rows_per_chunk, rows_per_chunk); };
            LmOutput output;
            {
              const AutocastScope autocast(precision, device);
              output = model->forward(rows(input), rows(target), memories.of_chunk(chunk));
            }
            memories.of_chunk(chunk) = std::move(output.memory);
            const auto nll = output.nll.sum();
            return LossSums{nll, nll.detach(), rows(target).numel(), 0};
          },
          agreed.update_tokens);
      ++progress.step;
      progress.epoch_batches = stream.position().segment;
      session.record_update(update, lr, schedule.total_steps());
      if (can_validate && options.validate_interval > 0 && progress.step % options.validate_interval == 0) validate();
      if (options.save_interval > 0 && progress.step % options.save_interval == 0) save_last();
      schedule.after_update(progress.step);
    }
    const bool ending = time_is_up || (progress.step >= schedule.total_steps() && !stopping);
    if ((epoch_complete || ending) && can_validate) validate();
    if (epoch_complete) {
      summary.epochs = progress.epoch;
      ++progress.epoch;
      progress.epoch_batches = 0;
      stream.start_epoch(progress.epoch);
      memories.reset();  // as the reference: each epoch starts without memory
      schedule.fit_to_time_budget();
    }
    if (time_is_up) stopping = true;
    save_last();
  }
  if (!can_validate && summary.stop_signal == 0 && stop_signal() == 0 && progress.step > session.first_step()) {
    progress.carried_state = {};
    session.save_best();
    if (parallel.leader())
      log_info("train: no validation split in ", config.data.dir, ": ", best_checkpoint_path(options.run_dir),
               " is the final model, the same as checkpoint_last.pt");
  }
  if (summary.stop_signal == 0) summary.stop_signal = stop_signal();
  summary.steps = progress.step;
  summary.seconds = session.seconds();
  return summary;
}

}  // namespace mixseq
