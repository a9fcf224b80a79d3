// Checkpoints. A checkpoint holds everything needed to translate with a model (its resolved
// configuration, vocabulary and tokenizer model ride along, so `mixseq translate` needs only
// the file) and everything needed to continue training exactly where it stopped (optimizer
// moments, loss scale, random generator state and the data position). The format lives here,
// below train/ and decode/, because serving reads it too (models/trained_model.h); the
// training loop is one of its writers.
//
// Files are written to "<path>.tmp", flushed to disk and renamed over <path>: a run killed
// while saving leaves the previous checkpoint intact. Reading checks the format and version
// and reports a truncated file, a foreign file or a parameter of the wrong shape by name.
//
// Corruption that leaves the file readable (a flipped byte in a weight) is caught by checksums
// (util/checksum.h) saved inside since version 2: one over the contents below, one per model
// tensor, and one over the optimizer state, each verified by the function that reads that
// part, with an error naming the file (and the tensor). Version 1 checkpoints, which have
// none, still load, with one warning per process.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mixseq {

// Reads 1 (no checksums), 2 and 3. Writes 2, or 3 when some weights are stored in 8 bits
// (mixseq quantize): a reader older than int8 storage then refuses the file by its version
// instead of copying 8-bit integers into float weights.
constexpr int64_t kCheckpointVersion = 3;
constexpr int64_t kCheckpointVersionWithInt8Weights = 3;

// TrainingProgress::schedule_pace holds this many numbers when it holds any.
constexpr int64_t kSchedulePaceValues = 5;
// How many numbers TrainingProgress::log_interval_sums holds.
constexpr int64_t kLogIntervalSums = 7;

// Where training stands, besides the model and optimizer.
struct TrainingProgress {
  int64_t step = 0;               // optimizer updates done
  int64_t epoch = 1;              // the epoch in progress, from 1
  int64_t epoch_batches = 0;      // this rank's batches of that epoch already consumed
  double best_score = -1;         // best validation score so far (BLEU for translation); -1: none yet
  double best_loss = -1;          // lowest validation loss so far, the best-model metric without BLEU; -1: none yet
  int64_t validations_without_improvement = 0;  // of the best-model metric, since it last improved (train.patience)
  double loss_scale = 0;          // fp16 dynamic loss scale; 0 when not in use
  int64_t loss_scale_clean_steps = 0;  // steps since the scale last changed
  double train_seconds = 0;       // wall time of training so far, validation included, across resumes
  torch::Tensor cpu_rng_state;    // LibTorch's default CPU generator (dropout), for exact resume
  torch::Tensor cuda_rng_state;   // the current CUDA device's generator; undefined on CPU runs
  // What a task's loop carries from one update to the next and needs back to resume exactly: a
  // language model's memory (per layer, [B, M, D] over all ranks' streams). Empty for translation.
  std::vector<torch::Tensor> carried_state;
  // How train.max_time sized the run (train/run_schedule.h): {nominal total, anchor step, anchor
  // position, pace, total steps}; empty until it has.
  std::vector<double> schedule_pace;
  // The train log's sums over the updates since its last line, over all ranks, so that the first
  // line after a resume covers the same updates as in a run that never stopped: {loss, nll,
  // source tokens, target tokens, updates, skipped updates, summed gradient norm}; empty when the
  // last update was logged (and in checkpoints written before them).
  std::vector<double> log_interval_sums;
};

struct CheckpointContents {
  std::string config_yaml;      // the resolved training configuration
  std::string vocabulary_text;  // vocab.txt, byte for byte
  uint64_t vocabulary_fingerprint = 0;  // of the token list (data/prepared_data.h); 0 in version 1 checkpoints
  std::string tokenizer_kind;   // "bpe", "spm" or "none"
  std::string tokenizer_model;  // the codes file or SentencePiece model, byte for byte ("" for none)
  std::string labels_text;      // a classifier's labels in id order, one per line (labels.txt); "" for other models
  // The prepared data's languages (dataset.json): a translation's source and target, a language
  // model's text language (target ""); both "" for speech and for checkpoints written before them.
  std::string source_lang, target_lang;
  TrainingProgress progress;
  // The quantization plan `mixseq quantize` stored (quant/quantization_plan.h, JSON); "" for a
  // float checkpoint. The plan says how to quantize the weights on load; those of its int8
  // layers may be stored in 8 bits (Int8StoredWeight below).
  std::string quantization;
};

// A weight a quantized checkpoint stores in 8 bits instead of fp32: real = scale * value, with
// one scale per row (symmetric grids, as the int8 engines take them).
struct Int8StoredWeight {
  torch::Tensor values;  // int8 [N, K]
  torch::Tensor scale;   // fp32 [N], or [] for one scale for the whole matrix
};

// Saves atomically; `optimizer` may be null (e.g. averaged or exported models). The parameters
// named in `int8_weights` are stored as those int8 values and scales (checksummed like every
// tensor), which needs a quantized checkpoint (contents.quantization set).
void save_checkpoint(const std::string& path, const CheckpointContents& contents, const torch::nn::Module& model,
                     const torch::optim::Optimizer* optimizer,
                     const std::map<std::string, Int8StoredWeight>& int8_weights = {});

// Reads everything but the tensors of the model and the optimizer.
CheckpointContents read_checkpoint_contents(const std::string& path);

// Copies the checkpoint's parameters and buffers into `model`, which must have the same
// names and shapes (build it from the checkpoint's config first). A quantized checkpoint is an
// error that says so unless `accept_quantized` (set only by loaders that apply the plan).
// Weights stored in 8 bits are dequantized into the float parameters (scale * value, exactly
// what quantize-dequantize of the original gives); their scales are returned by parameter name,
// so that the plan quantizes them on the same grid again.
std::map<std::string, torch::Tensor> load_model_weights(const std::string& path, torch::nn::Module& model,
                                                        bool accept_quantized = false);

// Whether the checkpoint holds optimizer state: a training checkpoint, which --resume needs, as
// opposed to an averaged or exported model.
bool has_optimizer_state(const std::string& path);

// Restores the optimizer's state; throws if the checkpoint has none.
void load_optimizer_state(const std::string& path, torch::optim::Optimizer& optimizer);

}  // namespace mixseq
