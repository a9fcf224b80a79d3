// The speech-recognition task (train/training_tasks.h): CTC over characters, as Wave2Letter+,
// Jasper and DeepSpeech2 train. docs/architecture.md ("Adding a task") walks through the
// translation task, whose shape this file follows.
#include "mixseq/train/speech_recognition_task.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <chrono>
#include <memory>

#include "mixseq/criteria/ctc_loss.h"
#include "mixseq/data/speech_batch.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/decode/ctc_decoding.h"
#include "mixseq/distributed/launch_environment.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/error_rate.h"
#include "mixseq/text/score_report.h"
#include "mixseq/train/planned_epoch_task.h"
#include "mixseq/train/speech_training_data.h"
#include "mixseq/train/update_prefetch.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/threads.h"

namespace mixseq {
namespace {

// The feature bins the model section of `arch` declares.
int64_t model_feature_bins(const ModelConfig& model) {
  if (model.arch == "jasper") return model.jasper.in_feats;
  if (model.arch == "wave2letter_plus") return model.wave2letter_plus.in_feats;
  return model.deepspeech2.in_feats;
}

// A generator for one training batch, a pure function of the seed, the epoch and the batch, so that
// a resumed run draws the same augmentation.
at::Generator batch_generator(int64_t seed, int64_t epoch, int64_t batch) {
  uint64_t state = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(epoch) * 0xBF58476D1CE4E5B9ull ^
                   static_cast<uint64_t>(batch) * 0x94D049BB133111EBull;
  state ^= state >> 31;
  return at::make_generator<at::CPUGeneratorImpl>(state);
}

// speech.prefetch: on where a CPU core is left over for the background thread. On 2 cores that both
// train, it took CPU time from the training threads: FSDD's recognizer 5% slower (docs/benchmarks.md,
// "Speech features made ahead"); at --threads 1 on the same machine, 9% faster.
bool prefetch_features(const std::string& setting, const torch::Device& device) {
  if (setting != "auto") return setting == "true";
  // The ranks of a data-parallel job on this node share its cores.
  const int64_t ranks = detect_launch_environment().local_world_size;
  const int64_t training_threads = at::get_num_threads() * ranks;
  const bool spare_core = !device.is_cpu() || usable_cpu_count() > training_threads;
  if (spare_core)
    log_info("train: speech.prefetch auto: the next update's features are made on a background thread (",
             device.is_cpu() ? str_cat(usable_cpu_count(), " usable cores, ", training_threads, " training thread",
                                     training_threads == 1 ? "" : "s", ranks > 1 ? " on this node" : "")
                             : str_cat("training on ", device.str()),
             ")");
  return spare_core;
}

class SpeechRecognitionTask : public PlannedEpochTask {
 public:
  SpeechRecognitionTask(const TrainConfig& config, const TrainingSession& session)
      : PlannedEpochTask(config.train.update_freq),
        config_(config),
        device_(session.device()),
        precision_(session.precision()),
        parallel_(session.parallel()),
        data_(open_speech_training_data(config.data.dir, "a speech recognizer", config.speech.sample_rate,
                                        "speech.sample_rate")),
        prefetch_(prefetch_features(config.speech.prefetch, session.device())) {
    config.speech.check();
    const SpeechFeatureOptions features = config.speech.feature_options();
    MIXSEQ_CHECK(model_feature_bins(config.model) == features.bins(), "model.", config.model.arch,
                 ".in_feats (", model_feature_bins(config.model), ") must equal the bins of the features (",
                 features.bins(), " for speech.features ", config.speech.features,
                 config.speech.features == "log_mel" ? str_cat(" with n_mels ", config.speech.n_mels)
                                                     : str_cat(" with n_fft ", config.speech.n_fft),
                 ")");
    torch::manual_seed(static_cast<uint64_t>(config.train.seed));
    model_ = build_speech_recognizer(config.model, data_.symbols().size());
    model_->to(device_);

    train_ = &data_.split("train");
    train_frames_ = speech_frame_lengths(*train_, config.speech);
    batching_.max_tokens = config.speech.max_frames;
    batching_.max_sentences = config.speech.max_utterances;
    batching_.seed = static_cast<uint64_t>(config.train.seed);
    batching_.rank = parallel_.rank();
    batching_.world_size = parallel_.world_size();
    // (no max_length: prepare --max-seconds keeps long utterances out)
    batching_.name_for_messages("training", config.data.dir, "frames", "speech.max_frames");
    updates_per_epoch_ = updates_in(plan_epoch_batches(train_frames_, {}, batching_, 1).batches.size());
    can_validate_ = data_.has_split("valid");
    if (can_validate_) {
      BatchingOptions valid;
      valid.max_tokens = config.speech.valid_max_frames;
      valid.shuffle = false;
      valid.name_for_messages("valid", config.data.dir, "frames", "speech.valid_max_frames");
      valid_plan_ = plan_epoch_batches(speech_frame_lengths(data_.split("valid"), config.speech),
                                       {}, valid, 1)
                        .batches;
    }
    if (config.speech.cache_features) {  // features once, before the first update (docs/speech.md measures it)
      const auto start = std::chrono::steady_clock::now();
      train_cache_ = std::make_unique<SpeechFeatureCache>(*train_, config.speech);
      if (can_validate_) valid_cache_ = std::make_unique<SpeechFeatureCache>(data_.split("valid"), config.speech);
      log_info("train: speech.cache_features: the features of ", train_->size(), " training utterances",
               can_validate_ ? " and the validation split" : "", " computed in ",
               format_decimal(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1),
               " s, ", (train_cache_->bytes() + (valid_cache_ ? valid_cache_->bytes() : 0)) / 1048576, " MB in memory");
    }
  }

  torch::nn::Module& model() override { return *model_; }
  TaskMetric metric() const override { return TaskMetric{"wer", false, false}; }
  int64_t updates_per_epoch() const override { return updates_per_epoch_; }
  bool can_validate() const override { return can_validate_; }
  CheckpointContents describe_data() const override {
    CheckpointContents contents;
    contents.vocabulary_text = data_.symbols_text();
    contents.vocabulary_fingerprint = checksum64(data_.symbols_text().data(), data_.symbols_text().size());
    contents.tokenizer_kind = "none";
    return contents;
  }
  TrainingUnits units() const override { return {"frames", false, false}; }
  std::string description() const override {
    return str_cat(config_.model.arch, " with ", count_parameters(*model_), " parameters, ", data_.symbols().size(),
                   " symbols, ", train_->size(), " training utterances (", format_decimal(train_->seconds() / 3600, 2),
                   " h), features ", config_.speech.features);
  }

  void start_epoch(const TrainingProgress& progress) override {
    plan(plan_epoch_batches(train_frames_, {}, batching_, progress.epoch).batches);
  }
  std::optional<int64_t> next_update(const TrainingProgress& progress) override {
    if (!has_update(progress)) return std::nullopt;
    batches_ = prefetch_.take(progress.epoch, progress.epoch_batches, [&] { return update_maker(progress)(); });
    int64_t utterances = 0;
    for (const auto& batch : batches_) utterances += static_cast<int64_t>(batch.targets.size());
    TrainingProgress next = progress;  // the next update's features while this one runs
    next.epoch_batches += update_freq();
    if (has_update(next)) prefetch_.start(next.epoch, next.epoch_batches, update_maker(next));
    return utterances;
  }
  LossSums micro_batch_loss(int64_t micro) override {
    const SpeechBatch& batch = batches_[static_cast<size_t>(micro)];
    CtcOutput output;
    {
      const AutocastScope autocast(precision_, device_);
      output = model_->forward(batch.features.to(device_), batch.lengths.to(device_));
    }
    const auto sums = ctc_loss_sums(output.logits, output.lengths, batch.targets);
    infeasible_ += sums.infeasible;
    return LossSums{sums.loss, sums.loss.detach(), sums.utterances, batch.frames};
  }

  TaskValidation validate(bool) override {
    const SpeechSplit& valid = data_.split("valid");
    torch::NoGradGuard no_grad;
    model_->eval();
    double loss = 0;
    int64_t utterances = 0;
    std::vector<std::string> hypotheses, references;
    for (size_t b = static_cast<size_t>(parallel_.rank()); b < valid_plan_.size();
         b += static_cast<size_t>(parallel_.world_size())) {
      const SpeechBatch batch = make_speech_batch(valid, valid_plan_[b], config_.speech, nullptr, valid_cache_.get());
      CtcOutput output;
      {
        const AutocastScope autocast(precision_, device_);
        output = model_->forward(batch.features.to(device_), batch.lengths.to(device_));
      }
      loss += ctc_loss_sums(output.logits, output.lengths, batch.targets).loss.item<double>();
      utterances += static_cast<int64_t>(batch.targets.size());
      for (const auto& hypothesis : ctc_greedy_decode(output.logits.to(torch::kFloat), output.lengths))
        hypotheses.push_back(data_.symbols().decode(hypothesis.symbols));
      for (const int64_t i : valid_plan_[b]) references.push_back(valid.transcript(i));
    }
    model_->train();
    ErrorRateOptions words, characters;
    characters.unit = ErrorRateUnit::kCharacter;
    const ErrorCounts w = corpus_error_rate(hypotheses, references, words).counts;
    const ErrorCounts c = corpus_error_rate(hypotheses, references, characters).counts;
    const auto sums = parallel_.sum({loss, static_cast<double>(utterances), static_cast<double>(w.errors()),
                                     static_cast<double>(w.reference_length()), static_cast<double>(c.errors()),
                                     static_cast<double>(c.reference_length()),
                                     static_cast<double>(infeasible_)});
    infeasible_ = 0;
    TaskValidation result;
    result.loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
    const double wer = sums[3] > 0 ? 100.0 * sums[2] / sums[3] : 0.0;
    const double cer = sums[5] > 0 ? 100.0 * sums[4] / sums[5] : 0.0;
    result.metric = wer;
    result.fields = {{"wer", wer}, {"cer", cer}, {"utterances", sums[1]}, {"infeasible_ctc", sums[6]}};
    result.text = str_cat("loss ", format_decimal(result.loss, 3), " | wer ", format_decimal(wer, 2), " | cer ",
                          format_decimal(cer, 2));
    if (sums[6] > 0) result.text += str_cat(" | ", sums[6], " training utterances too short for their transcript");
    return result;
  }

 private:
  // Makes the micro-batches of the update after progress.epoch_batches: a pure function of the
  // seed, the epoch and the batches' places (train/update_prefetch.h), holding its plan by value.
  UpdatePrefetch<SpeechBatch>::Maker update_maker(const TrainingProgress& progress) const {
    std::vector<std::vector<int64_t>> planned;
    for (int64_t micro = 0; micro < update_freq(); ++micro) planned.push_back(planned_batch(progress, micro));
    return [this, planned = std::move(planned), epoch = progress.epoch, first = batch_index(progress, 0)] {
      std::vector<SpeechBatch> batches;
      for (size_t micro = 0; micro < planned.size(); ++micro) {
        at::Generator generator = batch_generator(
            config_.train.seed, epoch, (first + static_cast<int64_t>(micro)) * parallel_.world_size() + parallel_.rank());
        batches.push_back(make_speech_batch(*train_, planned[micro], config_.speech, &generator, train_cache_.get()));
      }
      return batches;
    };
  }

  const TrainConfig& config_;
  torch::Device device_;
  Precision precision_;
  const DataParallel& parallel_;
  const SpeechData data_;
  SpeechRecognizer model_;
  const SpeechSplit* train_ = nullptr;
  std::vector<int64_t> train_frames_;
  BatchingOptions batching_;
  int64_t updates_per_epoch_ = 0;
  bool can_validate_ = false;
  std::vector<std::vector<int64_t>> valid_plan_;
  std::vector<SpeechBatch> batches_;
  std::unique_ptr<const SpeechFeatureCache> train_cache_, valid_cache_;  // speech.cache_features; else null
  int64_t infeasible_ = 0;  // CTC losses zeroed since the last validation
  UpdatePrefetch<SpeechBatch> prefetch_;  // last: its job in flight reads the members above
};

}  // namespace

std::unique_ptr<TrainingTask> make_speech_recognition_task(const TrainConfig& config, const TrainingSession& session) {
  return std::make_unique<SpeechRecognitionTask>(config, session);
}

}  // namespace mixseq
