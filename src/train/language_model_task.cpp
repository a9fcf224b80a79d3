#include "mixseq/train/language_model_task.h"

#include <torch/utils.h>

#include <cmath>

#include "mixseq/data/lm_stream.h"
#include "mixseq/data/prepared_data.h"
#include "mixseq/decode/lm_evaluation.h"
#include "mixseq/models/language_model_loss.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/score_report.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"

namespace mixseq {
namespace {

void check_options(const TrainConfig& config, const DataParallel& parallel) {
  const LmDataConfig& lm = config.lm;
  MIXSEQ_CHECK(config.train.update_freq == 1, "train.update_freq (", config.train.update_freq,
               ") must be 1 for a language model: lm.batch_chunk splits an update into micro-batches");
  MIXSEQ_CHECK(lm.batch_size >= 1 && lm.tgt_len >= 1 && lm.batch_chunk >= 1, "lm.batch_size (", lm.batch_size,
               "), lm.tgt_len (", lm.tgt_len, ") and lm.batch_chunk (", lm.batch_chunk, ") must be positive");
  MIXSEQ_CHECK(lm.batch_size % lm.batch_chunk == 0, "lm.batch_size (", lm.batch_size,
               ") must be a multiple of lm.batch_chunk (", lm.batch_chunk, ")");
  MIXSEQ_CHECK(lm.eval_batch_size >= 1 && lm.eval_tgt_len >= 1 && lm.eval_mem_len >= 0, "lm.eval_batch_size (",
               lm.eval_batch_size, ") and lm.eval_tgt_len (", lm.eval_tgt_len,
               ") must be positive, lm.eval_mem_len (", lm.eval_mem_len, ") 0 (the model's) or positive");
  MIXSEQ_CHECK(lm.batch_size % (parallel.world_size() * lm.batch_chunk) == 0, "lm.batch_size (", lm.batch_size,
               ") must be a multiple of the world size (", parallel.world_size(), ") times lm.batch_chunk (",
               lm.batch_chunk, ")");
  MIXSEQ_CHECK(lm.eval_batch_size % parallel.world_size() == 0, "lm.eval_batch_size (", lm.eval_batch_size,
               ") must be a multiple of the world size (", parallel.world_size(), ")");
}

LmStreamOptions training_stream_options(const TrainConfig& config, const DataParallel& parallel) {
  LmStreamOptions options;
  options.batch_size = config.lm.batch_size;
  options.segment_length = config.lm.tgt_len;
  options.variable_length = config.lm.varlen;
  options.roll = config.lm.roll;
  options.seed = static_cast<uint64_t>(config.train.seed);
  options.rank = parallel.rank();
  options.world_size = parallel.world_size();
  return options;
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

class LanguageModelTask : public TrainingTask {
 public:
  LanguageModelTask(const TrainConfig& config, const TrainingSession& session)
      : config_((check_options(config, session.parallel()), config)),
        device_(session.device()),
        precision_(session.precision()),
        parallel_(session.parallel()),
        data_(config.data.dir),
        train_tokens_(opened_training_text(config, data_)),
        stream_(train_tokens_, training_stream_options(config, parallel_)),
        chunks_(config.lm.batch_chunk),
        rows_per_chunk_(config.lm.batch_size / parallel_.world_size() / chunks_),
        memories_(chunks_, rows_per_chunk_) {
    const LmDataConfig& lm = config.lm;
    can_validate_ = data_.has_split("valid");
    if (can_validate_) {  // a validation text too short for its streams fails now, not after an epoch
      valid_tokens_ = concatenate_with_eos(data_.source("valid"), kEosId);
      try {
        LmStream(valid_tokens_, LmStreamOptions{lm.eval_batch_size, lm.eval_tgt_len});
      } catch (const Error& e) {
        throw Error(str_cat("the validation split of '", config.data.dir, "' with lm.eval_batch_size ",
                            lm.eval_batch_size, ": ", e.what()));
      }
    }
    validation_.batch_size = lm.eval_batch_size;
    validation_.tgt_len = lm.eval_tgt_len;
    validation_.rank = parallel_.rank();
    validation_.world_size = parallel_.world_size();
    // With variable lengths the count is an estimate, which only the schedule's length depends on.
    updates_per_epoch_ = (stream_.stream_length() - 1 + lm.tgt_len - 1) / lm.tgt_len;

    torch::manual_seed(static_cast<uint64_t>(config.train.seed));
    const int64_t vocabulary_size = data_.vocabulary().size();
    data_.note_unpadded_vocabulary();
    model_ = build_language_model(config.model, vocabulary_size);
    model_->to(device_);
    training_context_ = model_->context();
    validation_context_ = training_context_;
    if (lm.eval_mem_len > 0) validation_context_.mem_len = lm.eval_mem_len;
  }

  torch::nn::Module& model() override { return *model_; }
  TaskMetric metric() const override { return TaskMetric{"loss", false, false}; }
  int64_t updates_per_epoch() const override { return updates_per_epoch_; }
  bool can_validate() const override { return can_validate_; }
  CheckpointContents describe_data() const override { return describe_prepared_data(config_.data.dir, data_); }
  std::string description() const override {
    return str_cat(config_.model.arch, " language model with ", count_parameters(*model_), " parameters, vocabulary ",
                   data_.vocabulary().size(), ", ", train_tokens_.size(), " training tokens in ",
                   config_.lm.batch_size, " streams of ", stream_.stream_length());
  }

  // The stream keeps its own place: restore_state seeks it, end_epoch starts the next epoch.
  void start_epoch(const TrainingProgress&) override {}
  std::optional<int64_t> next_update(const TrainingProgress&) override {
    segment_ = stream_.next();
    if (!segment_) {
      epoch_used_up_ = true;
      return std::nullopt;
    }
    input_ = segment_->input.to(device_), target_ = segment_->target.to(device_);  // [B/W, T]
    return target_.numel();
  }
  int64_t micro_batches() const override { return chunks_; }
  LossSums micro_batch_loss(int64_t chunk) override {
    const auto rows = [&](const torch::Tensor& t) { return t.narrow(0, chunk * rows_per_chunk_, rows_per_chunk_); };
    auto loss = language_model_loss(*model_, rows(input_), rows(target_), memories_.of_chunk(chunk), precision_, device_);
    memories_.of_chunk(chunk) = std::move(loss.memory);
    return LossSums{loss.nll_sum, loss.nll_sum.detach(), loss.targets, 0};
  }
  void finish_update(TrainingProgress& progress) override { progress.epoch_batches = stream_.position().segment; }
  bool epoch_ends_after(const TrainingProgress&) const override { return false; }  // varlen: unknown in advance
  bool epoch_complete(const TrainingProgress&) const override { return epoch_used_up_; }
  void end_epoch(const TrainingProgress& progress) override {
    stream_.start_epoch(progress.epoch);
    memories_.reset();  // as the reference: each epoch starts without memory
    epoch_used_up_ = false;
  }

  TaskValidation validate(bool) override {
    model_->set_context(validation_context_);
    const auto scored = evaluate_language_model(*model_, valid_tokens_, validation_, device_, precision_);
    model_->set_context(training_context_);
    const auto sums = parallel_.sum({scored.nll_sum, static_cast<double>(scored.tokens)});
    TaskValidation result;
    result.loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
    result.perplexity = std::exp(result.loss);
    result.fields = {{"tokens", sums[1]}};
    result.text = str_cat("loss ", format_decimal(result.loss, 4), " | ppl ", format_decimal(result.perplexity, 2));
    return result;
  }

  void save_state(TrainingProgress& progress) override { progress.carried_state = memories_.gather(parallel_); }
  void restore_state(const TrainingProgress& progress) override {
    stream_.seek({progress.epoch, progress.epoch_batches});
    memories_.restore(progress.carried_state, parallel_, device_);
  }

 private:
  static std::vector<int64_t> opened_training_text(const TrainConfig& config, const PreparedData& data) {
    MIXSEQ_CHECK(data.monolingual(), "'", config.data.dir, "' holds a parallel corpus (", data.source_lang(), "-",
                 data.target_lang(),
                 "); a language model trains on one text: prepare it without a target language");
    MIXSEQ_CHECK(data.has_split("train"), "'", config.data.dir, "' has no training split");
    return concatenate_with_eos(data.source("train"), kEosId);
  }

  const TrainConfig& config_;
  torch::Device device_;
  Precision precision_;
  const DataParallel& parallel_;
  const PreparedData data_;
  const std::vector<int64_t> train_tokens_;
  LmStream stream_;
  int64_t chunks_;
  int64_t rows_per_chunk_;
  StreamMemories memories_;
  bool can_validate_ = false;
  std::vector<int64_t> valid_tokens_;
  LmEvaluationOptions validation_;
  int64_t updates_per_epoch_ = 0;
  LanguageModelModule model_;
  LmContext training_context_, validation_context_;
  std::optional<LmSegment> segment_;
  torch::Tensor input_, target_;  // the prepared update's segment on the device: [B/W, T]
  bool epoch_used_up_ = false;
};

}  // namespace

std::unique_ptr<TrainingTask> make_language_model_task(const TrainConfig& config, const TrainingSession& session) {
  return std::make_unique<LanguageModelTask>(config, session);
}

}  // namespace mixseq
