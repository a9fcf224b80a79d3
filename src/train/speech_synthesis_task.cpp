// The speech-synthesis task (train/training_tasks.h): Tacotron 2 teacher-forced on transcribed
// audio, as DeepLearningExamples' train.py trains it. docs/architecture.md ("Adding a task") walks
// through the translation task, whose shape this file follows.
#include "mixseq/train/speech_synthesis_task.h"

#include <ATen/Context.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "mixseq/criteria/synthesis_loss.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/data/synthesis_batch.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/text/score_report.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/train/planned_epoch_task.h"
#include "mixseq/train/speech_training_data.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {
namespace {

// The prenet's dropout stays on at inference (models/tacotron2.h), so a validation draws random
// numbers: it draws them from a fixed seed, and the training's generator is put back after it, so
// that validations are comparable and do not change the training run.
class ValidationRandomness {
 public:
  explicit ValidationRandomness(const torch::Device& device)
      : generator_(at::globalContext().defaultGenerator(device.type())) {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    state_ = generator_.get_state();
    generator_.set_current_seed(kValidationSeed);
  }
  ~ValidationRandomness() {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(state_);
  }
  ValidationRandomness(const ValidationRandomness&) = delete;
  ValidationRandomness& operator=(const ValidationRandomness&) = delete;

 private:
  static constexpr uint64_t kValidationSeed = 20180216;  // any fixed value
  at::Generator generator_;
  torch::Tensor state_;
};

class SpeechSynthesisTask : public PlannedEpochTask {
 public:
  SpeechSynthesisTask(const TrainConfig& config, const TrainingSession& session)
      : PlannedEpochTask(config.train.update_freq),
        config_(config),
        device_(session.device()),
        precision_(session.precision()),
        parallel_(session.parallel()),
        data_(open_speech_training_data(config.data.dir, "a speech synthesizer", config.synthesis.sample_rate,
                                        "synthesis.sample_rate")) {
    const SynthesisInputConfig& input = config.synthesis;
    input.check();
    torch::manual_seed(static_cast<uint64_t>(config.train.seed));
    model_ = build_speech_synthesizer(config.model, static_cast<int64_t>(synthesis_symbols().size()));
    MIXSEQ_CHECK(model_->frame_bins() == input.frame_bins(), "the model's frames have ", model_->frame_bins(),
                 " bins (model.", config.model.arch, ".n_mel_channels) but the data's have ", input.describe_frames(),
                 " (synthesis.frames ", input.frames, input.frames == "magnitude" ? ", n_fft / 2 + 1" : ", synthesis.n_mels",
                 "); make them equal");
    model_->to(device_);
    loss_options_.guided_attention_weight = input.guided_attention_weight;
    loss_options_.guided_attention_sigma = input.guided_attention_sigma;

    const auto start = std::chrono::steady_clock::now();
    train_ = std::make_unique<SynthesisSplit>(data_.split("train"), config.data.dir + "/train.tsv", input);
    can_validate_ = data_.has_split("valid");
    if (can_validate_)
      valid_ = std::make_unique<SynthesisSplit>(data_.split("valid"), config.data.dir + "/valid.tsv", input);
    if (input.bias_from_data) {  // overwritten by the checkpoint on resume
      int64_t frames = 0;
      for (const int64_t length : train_->frame_lengths()) frames += length;
      const double stop = std::min(0.5, static_cast<double>(train_->size()) / static_cast<double>(frames));
      model_->initialize_output_bias(train_->frame_mean().to(device_), std::log(stop / (1.0 - stop)));
    }
    log_info("train: the frames of ", train_->size(), " training utterances", can_validate_ ? " and the validation split" : "",
             " computed in ",
             format_decimal(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1), " s, ",
             (train_->bytes() + (valid_ ? valid_->bytes() : 0)) / 1048576, " MB in memory");

    batching_.max_tokens = input.max_frames;
    batching_.max_sentences = input.max_utterances;
    batching_.seed = static_cast<uint64_t>(config.train.seed);
    batching_.rank = parallel_.rank();
    batching_.world_size = parallel_.world_size();
    batching_.name_for_messages("training", config.data.dir, "frames", "synthesis.max_frames");
    updates_per_epoch_ = updates_in(plan_epoch_batches(train_->frame_lengths(), {}, batching_, 1).batches.size());
    if (can_validate_) {
      BatchingOptions valid;
      valid.max_tokens = input.valid_max_frames;
      valid.shuffle = false;
      valid.name_for_messages("valid", config.data.dir, "frames", "synthesis.valid_max_frames");
      valid_plan_ = plan_epoch_batches(valid_->frame_lengths(), {}, valid, 1).batches;
    }
  }

  torch::nn::Module& model() override { return *model_; }
  TaskMetric metric() const override { return TaskMetric{"loss", false, false}; }
  int64_t updates_per_epoch() const override { return updates_per_epoch_; }
  bool can_validate() const override { return can_validate_; }
  CheckpointContents describe_data() const override {
    CheckpointContents contents;
    contents.vocabulary_text = synthesis_symbols_text();
    contents.vocabulary_fingerprint = checksum64(contents.vocabulary_text.data(), contents.vocabulary_text.size());
    contents.tokenizer_kind = "none";
    return contents;
  }
  TrainingUnits units() const override { return {"frames", false, false}; }
  std::string description() const override {
    double seconds = data_.split("train").seconds();
    return str_cat(config_.model.arch, " with ", count_parameters(*model_), " parameters, ", synthesis_symbols().size(),
                   " symbols, ", train_->size(), " training utterances (", format_decimal(seconds / 3600, 2), " h), ",
                   config_.synthesis.describe_frames(), " every ", format_decimal(config_.synthesis.hop_ms, 2), " ms",
                   config_.synthesis.guided_attention_weight > 0
                       ? str_cat(", guided attention x ", config_.synthesis.guided_attention_weight)
                       : std::string());
  }

  void start_epoch(const TrainingProgress& progress) override {
    plan(plan_epoch_batches(train_->frame_lengths(), {}, batching_, progress.epoch).batches);
  }
  std::optional<int64_t> next_update(const TrainingProgress& progress) override {
    if (!has_update(progress)) return std::nullopt;
    batches_.clear();
    int64_t utterances = 0;
    for (int64_t micro = 0; micro < update_freq(); ++micro) {
      batches_.push_back(train_->batch(planned_batch(progress, micro)));
      utterances += batches_.back().text.size(0);
    }
    return utterances;
  }
  LossSums micro_batch_loss(int64_t micro) override {
    const SynthesisBatch& batch = batches_[static_cast<size_t>(micro)];
    const SynthesisLoss loss = batch_loss(batch);
    const auto utterances = batch.text.size(0);
    return LossSums{loss.total * static_cast<double>(utterances), loss.total.detach() * static_cast<double>(utterances),
                    utterances, batch.total_frames};
  }

  TaskValidation validate(bool) override {
    torch::NoGradGuard no_grad;
    const ValidationRandomness randomness(device_);
    model_->eval();
    double total = 0, mel = 0, gate = 0, guided = 0, utterances = 0;
    AlignmentFigures figures;
    for (size_t b = static_cast<size_t>(parallel_.rank()); b < valid_plan_.size();
         b += static_cast<size_t>(parallel_.world_size())) {
      const SynthesisBatch batch = valid_->batch(valid_plan_[b]);
      SynthesisOutput output;
      const SynthesisLoss loss = batch_loss(batch, &output);
      const auto n = static_cast<double>(batch.text.size(0));
      total += loss.total.item<double>() * n;
      mel += loss.mel.item<double>() * n;
      gate += loss.gate.item<double>() * n;
      guided += loss.guided_attention.item<double>() * n;
      utterances += n;
      const AlignmentFigures f = alignment_figures(output.alignments, batch.text_lengths, batch.frame_lengths);
      figures.diagonal += f.diagonal;
      figures.focus += f.focus;
      figures.steps += f.steps;
    }
    model_->train();
    const auto sums = parallel_.sum({total, mel, gate, guided, utterances, figures.diagonal, figures.focus,
                                     static_cast<double>(figures.steps)});
    const double per = sums[4] > 0 ? 1.0 / sums[4] : 0.0;   // utterances: the batches' and the figures' alike
    const double diagonal = sums[5] * per;
    const double focus = sums[7] > 0 ? sums[6] / sums[7] : 0.0;
    TaskValidation result;
    result.loss = sums[0] * per;
    result.metric = result.loss;
    result.fields = {{"mel_loss", sums[1] * per},      {"gate_loss", sums[2] * per}, {"utterances", sums[4]},
                     {"attention_diagonal", diagonal}, {"attention_focus", focus}};
    if (loss_options_.guided_attention_weight > 0) result.fields["guided_attention_loss"] = sums[3] * per;
    result.text = str_cat("loss ", format_decimal(result.loss, 4), " | mel ", format_decimal(sums[1] * per, 4),
                          " | gate ", format_decimal(sums[2] * per, 4), " | attention diagonal ",
                          format_decimal(diagonal, 3), " focus ", format_decimal(focus, 3));
    return result;
  }

 private:
  // The teacher-forced forward pass (under autocast) and the losses, in fp32; `output` receives the
  // model's output when given.
  SynthesisLoss batch_loss(const SynthesisBatch& batch, SynthesisOutput* output = nullptr) {
    const auto text_lengths = batch.text_lengths.to(device_);
    const auto frame_lengths = batch.frame_lengths.to(device_);
    const auto targets = batch.frames.to(device_);
    SynthesisOutput out;
    {
      const AutocastScope autocast(precision_, device_);
      out = model_->forward(batch.text.to(device_), text_lengths, targets);
    }
    out.frames = out.frames.to(torch::kFloat);
    out.frames_postnet = out.frames_postnet.to(torch::kFloat);
    out.gate_logits = out.gate_logits.to(torch::kFloat);
    out.alignments = out.alignments.to(torch::kFloat);
    if (config_.synthesis.mask_padding) {  // the frames of their Tacotron2.parse_output with mask_padding
      const auto padding = torch::arange(out.frames.size(2), frame_lengths.options()).unsqueeze(0) >=
                           frame_lengths.unsqueeze(1);  // [B, T]
      out.frames = out.frames.masked_fill(padding.unsqueeze(1), 0.0);
      out.frames_postnet = out.frames_postnet.masked_fill(padding.unsqueeze(1), 0.0);
    }
    SynthesisLoss loss = synthesis_loss(out.frames, out.frames_postnet, out.gate_logits, targets,
                                        batch.gate.to(device_), loss_options_, out.alignments, text_lengths,
                                        frame_lengths);
    if (output) *output = std::move(out);
    return loss;
  }

  const TrainConfig& config_;
  torch::Device device_;
  Precision precision_;
  const DataParallel& parallel_;
  const SpeechData data_;
  SpeechSynthesizer model_;
  SynthesisLossOptions loss_options_;
  std::unique_ptr<const SynthesisSplit> train_, valid_;
  BatchingOptions batching_;
  int64_t updates_per_epoch_ = 0;
  bool can_validate_ = false;
  std::vector<std::vector<int64_t>> valid_plan_;
  std::vector<SynthesisBatch> batches_;
};

}  // namespace

std::unique_ptr<TrainingTask> make_speech_synthesis_task(const TrainConfig& config, const TrainingSession& session) {
  return std::make_unique<SpeechSynthesisTask>(config, session);
}

}  // namespace mixseq
