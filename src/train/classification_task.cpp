// The classification task (train/training_tasks.h): labelled sentences, cross-entropy, accuracy.
// docs/architecture.md ("Adding a task") walks through the translation task, whose shape this file
// follows.
#include "mixseq/train/classification_task.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <fstream>
#include <sstream>

#include "mixseq/data/classification_data.h"
#include "mixseq/data/prepared_data.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/score_report.h"
#include "mixseq/train/planned_epoch_task.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/file_bytes.h"
#include "mixseq/util/log.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {
namespace {

// The model section as built: the class count from the data, the encoder's shape from the
// pretrained language model.
ModelConfig built_model_config(const TrainConfig& config, const ClassificationData& data) {
  ModelConfig model = config.model;
  const int64_t labels = static_cast<int64_t>(data.labels().size());
  MIXSEQ_CHECK(model.lm_classifier.num_classes == 0 || model.lm_classifier.num_classes == labels,
               "model.lm_classifier.num_classes is ", model.lm_classifier.num_classes, " but '", config.data.dir,
               "' has ", labels, " labels; set it to 0 to take the data's");
  model.lm_classifier.num_classes = labels;
  const std::string& pretrained = config.classify.pretrained;
  if (pretrained.empty()) return model;
  const auto contents = read_checkpoint_contents(pretrained);
  const ModelConfig lm = stored_model_config(contents, pretrained);
  MIXSEQ_CHECK(lm.arch == model.lm_classifier.encoder, "classify.pretrained '", pretrained, "' is a '", lm.arch,
               "' model, but model.lm_classifier.encoder is '", model.lm_classifier.encoder,
               "': give a checkpoint of a language model of that architecture");
  MIXSEQ_CHECK(contents.vocabulary_fingerprint == vocabulary_fingerprint(data.vocabulary()), "classify.pretrained '",
               pretrained, "' was trained with another vocabulary than '", config.data.dir,
               "' holds; prepare the data with `mixseq prepare --task classify --pretrained ", pretrained, "`");
  // The pretrained model's section, with this config's dropouts (fine-tuning regularises on its own).
  if (lm.arch == "lstm_lm") {
    const LstmLmConfig own = model.lstm_lm;
    model.lstm_lm = lm.lstm_lm;
    model.lstm_lm.dropout_embed = own.dropout_embed;
    model.lstm_lm.dropout_hidden = own.dropout_hidden;
    model.lstm_lm.dropout_output = own.dropout_output;
    model.lstm_lm.weight_drop = own.weight_drop;
  } else {
    const TransformerXlConfig own = model.transformer_xl;
    model.transformer_xl = lm.transformer_xl;
    model.transformer_xl.dropout = own.dropout;
    model.transformer_xl.dropatt = own.dropatt;
  }
  return model;
}

std::vector<int64_t> example_lengths(const std::vector<LabelledExample>& examples) {
  std::vector<int64_t> lengths;
  for (const auto& example : examples) lengths.push_back(static_cast<int64_t>(example.ids.size()) + 2);
  return lengths;
}

class ClassificationTask : public PlannedEpochTask {
 public:
  ClassificationTask(const TrainConfig& config, const TrainingSession& session)
      : PlannedEpochTask(config.train.update_freq),
        config_(config),
        device_(session.device()),
        precision_(session.precision()),
        parallel_(session.parallel()),
        data_((check_dataset(config.data.dir), config.data.dir)),
        model_config_(built_model_config(config, data_)) {
    const ClassificationConfig& classify = config.classify;
    MIXSEQ_CHECK(classify.layer_lr_divisor >= 1, "classify.layer_lr_divisor must be at least 1 (ULMFiT's is 2.6; 1 "
                 "= one rate), got ", classify.layer_lr_divisor);
    MIXSEQ_CHECK(classify.unfreeze_every >= 0, "classify.unfreeze_every must be 0 or more, got ",
                 classify.unfreeze_every);
    MIXSEQ_CHECK(data_.has_split("train"), "'", config.data.dir, "' has no training split");
    torch::manual_seed(static_cast<uint64_t>(config.train.seed));
    model_ = build_sentence_classifier(model_config_, data_.vocabulary().size());
    if (!classify.pretrained.empty()) {
      load_model_weights(classify.pretrained, *model_->encoder());
      log_info("train: the encoder starts from the language model '", classify.pretrained, "'");
    }
    model_->to(device_);
    train_ = &data_.split("train");
    train_lengths_ = example_lengths(*train_);
    batching_.max_tokens = classify.max_tokens;
    batching_.max_sentences = classify.max_sentences;
    batching_.seed = static_cast<uint64_t>(config.train.seed);
    batching_.rank = parallel_.rank();
    batching_.world_size = parallel_.world_size();
    batching_.name_for_messages("training", config.data.dir, "tokens", "classify.max_tokens");
    updates_per_epoch_ = updates_in(plan_epoch_batches(train_lengths_, {}, batching_, 1).batches.size());
    can_validate_ = data_.has_split("valid");
    if (can_validate_) {
      BatchingOptions valid;
      valid.max_tokens = classify.valid_max_tokens;
      valid.shuffle = false;
      valid.name_for_messages("valid", config.data.dir, "tokens", "classify.valid_max_tokens");
      valid_plan_ = plan_epoch_batches(example_lengths(data_.split("valid")), {}, valid, 1).batches;
    }
  }

  torch::nn::Module& model() override { return *model_; }
  TaskMetric metric() const override { return TaskMetric{"accuracy", true, false}; }
  int64_t updates_per_epoch() const override { return updates_per_epoch_; }
  bool can_validate() const override { return can_validate_; }
  void complete_model_config(ModelConfig& model) const override { model = model_config_; }
  std::vector<ParameterGroup> parameter_groups() override {
    if (config_.classify.layer_lr_divisor == 1) return {{model_->parameters(), 1.0}};
    std::vector<ParameterGroup> groups;
    double scale = 1;
    for (auto& group : model_->layer_groups()) {
      groups.push_back({std::move(group), scale});
      scale /= config_.classify.layer_lr_divisor;
    }
    return groups;
  }
  CheckpointContents describe_data() const override {
    CheckpointContents contents;
    contents.vocabulary_text = read_file_bytes(config_.data.dir + "/vocab.txt");
    contents.vocabulary_fingerprint = vocabulary_fingerprint(data_.vocabulary());
    const std::string& spec = data_.tokenizer();
    const auto colon = spec.find(':');
    contents.tokenizer_kind = spec.substr(0, colon);
    if (colon != std::string::npos) contents.tokenizer_model = read_file_bytes(spec.substr(colon + 1));
    contents.labels_text = labels_text(data_.labels());
    return contents;
  }
  TrainingUnits units() const override { return {"tok", false, false}; }
  std::string description() const override {
    return str_cat("lm_classifier with ", count_parameters(*model_), " parameters (", model_config_.lm_classifier.encoder,
                   " encoder", config_.classify.pretrained.empty() ? " from scratch" : ", pretrained", "), ",
                   data_.labels().size(), " labels, ", train_->size(), " training examples");
  }

  void start_epoch(const TrainingProgress& progress) override {
    plan(plan_epoch_batches(train_lengths_, {}, batching_, progress.epoch).batches);
  }
  std::optional<int64_t> next_update(const TrainingProgress& progress) override {
    if (!has_update(progress)) return std::nullopt;
    set_trainable_groups(progress.step);
    batches_.clear();
    int64_t examples = 0;
    for (int64_t micro = 0; micro < update_freq(); ++micro) {
      batches_.push_back(make_classification_batch(*train_, planned_batch(progress, micro)));
      examples += batches_.back().labels.size(0);
    }
    return examples;
  }
  LossSums micro_batch_loss(int64_t micro) override {
    const ClassificationBatch& batch = batches_[static_cast<size_t>(micro)];
    torch::Tensor logits;
    {
      const AutocastScope autocast(precision_, device_);
      logits = model_->forward(batch.tokens.to(device_), batch.lengths.to(device_));  // [B, C] fp32
    }
    const auto loss = at::cross_entropy_loss(logits, batch.labels.to(device_), {}, at::Reduction::Sum);
    return LossSums{loss, loss.detach(), batch.labels.size(0), batch.tokens_read};
  }

  TaskValidation validate(bool) override {
    const auto& valid = data_.split("valid");
    const int64_t C = static_cast<int64_t>(data_.labels().size());
    torch::NoGradGuard no_grad;
    model_->eval();
    double loss = 0;
    std::vector<double> confusion(static_cast<size_t>(C * C), 0.0);  // [reference][prediction], then the loss
    for (size_t b = static_cast<size_t>(parallel_.rank()); b < valid_plan_.size();
         b += static_cast<size_t>(parallel_.world_size())) {
      const ClassificationBatch batch = make_classification_batch(valid, valid_plan_[b]);
      torch::Tensor logits;
      {
        const AutocastScope autocast(precision_, device_);
        logits = model_->forward(batch.tokens.to(device_), batch.lengths.to(device_));
      }
      const auto labels = batch.labels.to(device_);
      loss += at::cross_entropy_loss(logits, labels, {}, at::Reduction::Sum).item<double>();
      const auto predictions = logits.argmax(1).cpu();
      const auto predicted = predictions.accessor<int64_t, 1>();
      const auto reference = batch.labels.accessor<int64_t, 1>();  // batch.labels is on the CPU
      for (int64_t i = 0; i < predictions.size(0); ++i) confusion[static_cast<size_t>(reference[i] * C + predicted[i])] += 1;
    }
    model_->train();
    confusion.push_back(loss);
    const auto sums = parallel_.sum(confusion);
    const auto at = [&](int64_t reference, int64_t prediction) { return sums[static_cast<size_t>(reference * C + prediction)]; };
    double examples = 0, correct = 0, f1_sum = 0;
    nlohmann::json matrix = nlohmann::json::array();
    for (int64_t r = 0; r < C; ++r) {
      double in_reference = 0, in_prediction = 0;
      nlohmann::json row = nlohmann::json::array();
      for (int64_t p = 0; p < C; ++p) {
        in_reference += at(r, p);
        in_prediction += at(p, r);
        row.push_back(static_cast<int64_t>(at(r, p)));
      }
      matrix.push_back(row);
      examples += in_reference;
      correct += at(r, r);
      // F1 of label r: 2 TP / (2 TP + FP + FN); a label neither predicted nor present scores 0.
      const double denominator = in_reference + in_prediction;
      f1_sum += denominator > 0 ? 2 * at(r, r) / denominator : 0.0;
    }
    TaskValidation result;
    result.loss = examples > 0 ? sums.back() / examples : 0.0;
    const double accuracy = examples > 0 ? 100.0 * correct / examples : 0.0;
    const double macro_f1 = 100.0 * f1_sum / static_cast<double>(C);
    result.metric = accuracy;
    result.fields = {{"accuracy", accuracy}, {"macro_f1", macro_f1}, {"examples", examples},
                     {"labels", data_.labels()}, {"confusion", matrix}};
    result.text = str_cat("loss ", format_decimal(result.loss, 3), " | accuracy ", format_decimal(accuracy, 2),
                          " | macro F1 ", format_decimal(macro_f1, 2));
    return result;
  }

 private:
  static void check_dataset(const std::string& dir) {
    MIXSEQ_CHECK(!dir.empty(), "data.dir is empty: give the folder written by `mixseq prepare --task classify`");
    MIXSEQ_CHECK(is_classification_dataset(dir), "'", dir, "' is not a classification dataset: a classifier trains "
                 "on a folder written by `mixseq prepare --task classify`");
  }

  // Gradual unfreezing: the layer groups from the top that train at update `step` (all without it).
  void set_trainable_groups(int64_t step) {
    const int64_t every = config_.classify.unfreeze_every;
    if (every == 0) return;
    const auto groups = model_->layer_groups();
    const int64_t trainable = std::min<int64_t>(static_cast<int64_t>(groups.size()), 1 + step / every);
    if (trainable == trainable_groups_) return;
    for (int64_t g = 0; g < static_cast<int64_t>(groups.size()); ++g)
      for (auto parameter : groups[static_cast<size_t>(g)]) parameter.set_requires_grad(g < trainable);
    if (trainable_groups_ != 0 || trainable > 1)
      log_info("train: update ", step + 1, ": ", trainable, " of ", groups.size(), " layer groups train");
    trainable_groups_ = trainable;
  }

  const TrainConfig& config_;
  torch::Device device_;
  Precision precision_;
  const DataParallel& parallel_;
  const ClassificationData data_;
  const ModelConfig model_config_;
  SentenceClassifier model_{nullptr};
  const std::vector<LabelledExample>* train_ = nullptr;
  std::vector<int64_t> train_lengths_;
  BatchingOptions batching_;
  int64_t updates_per_epoch_ = 0;
  bool can_validate_ = false;
  std::vector<std::vector<int64_t>> valid_plan_;
  std::vector<ClassificationBatch> batches_;
  int64_t trainable_groups_ = 0;  // set by set_trainable_groups; 0 before its first call
};

}  // namespace

std::unique_ptr<TrainingTask> make_classification_task(const TrainConfig& config, const TrainingSession& session) {
  return std::make_unique<ClassificationTask>(config, session);
}

}  // namespace mixseq
