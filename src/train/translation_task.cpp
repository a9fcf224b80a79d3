// The translation task (train/training_tasks.h): sentence pairs in token-budget batches, the
// label-smoothed cross-entropy of a sequence-to-sequence model, validation by loss and beam-search
// BLEU on the raw references. docs/architecture.md ("Adding a task") walks through this file.
#include "mixseq/train/translation_task.h"

#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "mixseq/data/prepared_data.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/score_report.h"
#include "mixseq/train/planned_epoch_task.h"
#include "mixseq/train/translation_loss.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"

namespace mixseq {
namespace {

void check_options(const TrainConfig& config) {
  const auto& train = config.train;
  MIXSEQ_CHECK(std::isfinite(train.target_bleu) && train.target_bleu >= 0 && train.target_bleu <= 100,
               "train.target_bleu (", train.target_bleu, ") must be between 0 (none) and 100");
  MIXSEQ_CHECK(train.target_bleu == 0 || train.validate_bleu, "train.target_bleu (", train.target_bleu,
               ") needs train.validate_bleu true: it is checked at each BLEU validation");
  MIXSEQ_CHECK(train.best_metric != "bleu" || train.validate_bleu,
               "train.best_metric bleu needs train.validate_bleu true; or pick the best model by loss");
  MIXSEQ_CHECK(config.data.valid_max_tokens >= 1, "data.valid_max_tokens (", config.data.valid_max_tokens,
               ") must be at least 1");
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

class TranslationTask : public PlannedEpochTask {
 public:
  TranslationTask(const TrainConfig& config, const TrainingSession& session)
      : PlannedEpochTask(config.train.update_freq),
        config_(config),
        device_(session.device()),
        precision_(session.precision()),
        parallel_(session.parallel()),
        data_(config.data.dir) {
    check_options(config);
    MIXSEQ_CHECK(!data_.monolingual(), "'", config.data.dir, "' holds a monolingual corpus; translation needs pairs");
    MIXSEQ_CHECK(data_.has_split("train"), "'", config.data.dir, "' has no training split");
    tokenizer_ = load_tokenizer(data_.tokenizer());
    can_validate_ = data_.has_split("valid");
    check_validation_search(config, data_);
    if (can_validate_) {  // planned once, before training, so a bad data.valid_max_tokens fails at start
      BatchingOptions batching;
      batching.max_tokens = config.data.valid_max_tokens;
      batching.shuffle = false;
      // (no max_length: validation skips nothing)
      batching.name_for_messages("valid", config.data.dir, "tokens", "data.valid_max_tokens");
      validation_plan_ = plan_epoch_batches(model_lengths(data_.source("valid")), model_lengths(data_.target("valid")),
                                            batching, 1);
    }
    torch::manual_seed(static_cast<uint64_t>(config.train.seed));
    data_.note_unpadded_vocabulary();
    model_ = build_seq2seq_model(config.model, data_.vocabulary().size());
    model_->to(device_);

    train_source_ = &data_.source("train");
    train_target_ = &data_.target("train");
    source_lengths_ = model_lengths(*train_source_);
    target_lengths_ = model_lengths(*train_target_);
    batching_ = config.data.batching;
    batching_.seed = static_cast<uint64_t>(config.train.seed);
    batching_.rank = parallel_.rank();
    batching_.world_size = parallel_.world_size();
    batching_.name_for_messages("training", config.data.dir, "tokens", "data.max_tokens", "data.max_length");
    const auto first_plan = plan_epoch_batches(source_lengths_, target_lengths_, batching_, 1);
    updates_per_epoch_ = updates_in(first_plan.batches.size());
    if (first_plan.skipped_too_long > 0)
      log_info("train: skipping ", first_plan.skipped_too_long, " pairs longer than data.max_length (",
               config.data.batching.max_length, ")");
  }

  torch::nn::Module& model() override { return *model_; }
  TaskMetric metric() const override {
    // Without BLEU, the loss is all validation measures.
    return config_.train.validate_bleu ? TaskMetric{"bleu", true, true} : TaskMetric{"loss", false, false};
  }
  int64_t updates_per_epoch() const override { return updates_per_epoch_; }
  bool can_validate() const override { return can_validate_; }
  CheckpointContents describe_data() const override { return describe_prepared_data(config_.data.dir, data_); }
  std::string description() const override {
    return str_cat(config_.model.arch, " with ", count_parameters(*model_), " parameters, vocabulary ",
                   data_.vocabulary().size());
  }

  void start_epoch(const TrainingProgress& progress) override {
    plan(plan_epoch_batches(source_lengths_, target_lengths_, batching_, progress.epoch).batches);
  }
  std::optional<int64_t> next_update(const TrainingProgress& progress) override {
    if (!has_update(progress)) return std::nullopt;
    batches_.clear();
    int64_t target_tokens = 0;
    for (int64_t micro = 0; micro < update_freq(); ++micro) {
      batches_.push_back(make_translation_batch(*train_source_, train_target_, planned_batch(progress, micro)));
      target_tokens += batches_.back().target_tokens;
    }
    return target_tokens;
  }
  LossSums micro_batch_loss(int64_t micro) override {
    return translation_loss(*model_, batches_[micro], config_.criterion, precision_, device_);
  }

  TaskValidation validate(bool with_metric) override {
    TaskValidation result = validation_loss();
    result.text = str_cat("loss ", result.loss, " | ppl ", result.perplexity);
    if (with_metric && config_.train.validate_bleu) {
      const double bleu = validation_bleu().score;
      result.metric = bleu;
      result.fields["bleu"] = bleu;
      result.text += str_cat(" | bleu ", format_decimal(bleu, 2));
    }
    return result;
  }

 private:
  // Over all ranks: each takes every world_size-th batch, then the sums are added up.
  TaskValidation validation_loss() {
    const auto& source = data_.source("valid");
    const auto& target = data_.target("valid");
    torch::NoGradGuard no_grad;
    model_->eval();
    auto loss = torch::zeros({}, torch::device(device_)), nll = torch::zeros({}, torch::device(device_));
    int64_t tokens = 0;
    for (size_t b = parallel_.rank(); b < validation_plan_.batches.size(); b += parallel_.world_size()) {
      const auto sums = translation_loss(*model_, make_translation_batch(source, &target, validation_plan_.batches[b]),
                                         config_.criterion, precision_, device_);
      loss += sums.loss;
      nll += sums.nll;
      tokens += sums.target_tokens;
    }
    model_->train();
    const auto sums = parallel_.sum({loss.item<double>(), nll.item<double>(), static_cast<double>(tokens)});
    const double per_token = sums[2] > 0 ? 1.0 / sums[2] : 0.0;
    TaskValidation result;
    result.loss = sums[0] * per_token;
    result.perplexity = std::exp(sums[1] * per_token);
    return result;
  }

  // Over all ranks: each translates every world_size-th sentence; all ranks get the same score.
  BleuScore validation_bleu() {
    const auto& source = data_.source("valid");
    std::vector<std::vector<int64_t>> sources;
    for (int64_t i = parallel_.rank(); i < source.size(); i += parallel_.world_size())
      sources.push_back(source.sequence(i));
    BatchTranslator translator(*model_, data_.vocabulary(), *tokenizer_, device_, precision_);
    TranslateOptions options;
    options.search = config_.validation_search;
    options.search.nbest = 1;
    options.max_tokens = config_.data.valid_max_tokens;
    const auto hypotheses = translator.translate_ids(sources, options);
    std::vector<std::vector<int64_t>> mine;
    for (const auto& best : hypotheses) mine.push_back(best.empty() ? std::vector<int64_t>{} : best.front().tokens);
    std::vector<std::string> texts;
    for (const auto& tokens : gather_hypotheses(mine, source.size(), parallel_, device_))
      texts.push_back(translator.detokenize(tokens));
    return corpus_bleu(texts, {read_lines(data_.references_path("valid"))}, BleuOptions{});
  }

  const TrainConfig& config_;
  torch::Device device_;
  Precision precision_;
  const DataParallel& parallel_;
  const PreparedData data_;
  std::unique_ptr<Tokenizer> tokenizer_;
  bool can_validate_ = false;
  EpochBatches validation_plan_;
  Seq2SeqModel model_;
  const TokenDataset* train_source_ = nullptr;  // the training split, looked up once
  const TokenDataset* train_target_ = nullptr;
  std::vector<int64_t> source_lengths_, target_lengths_;
  BatchingOptions batching_;
  int64_t updates_per_epoch_ = 0;
  std::vector<TranslationBatch> batches_;     // the prepared update's micro-batches
};

}  // namespace

std::unique_ptr<TrainingTask> make_translation_task(const TrainConfig& config, const TrainingSession& session) {
  return std::make_unique<TranslationTask>(config, session);
}

}  // namespace mixseq
