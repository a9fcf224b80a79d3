// TrainConfig: everything `mixseq train` reads from a YAML file (configs/*.yaml) and from
// command-line overrides written as YAML paths (--train.precision bf16). The resolved config
// is logged at start, written to <run_dir>/config.yaml and stored in every checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include "mixseq/criteria/label_smoothed_cross_entropy.h"
#include "mixseq/data/speech_batch.h"
#include "mixseq/data/synthesis_batch.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/decode/beam_search.h"
#include "mixseq/distributed/gradient_reducer.h"
#include "mixseq/distributed/process_group.h"
#include "mixseq/models/model_config.h"
#include "mixseq/optim/gradient_clipping.h"
#include "mixseq/optim/loss_scaler.h"
#include "mixseq/optim/lr_schedule.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/util/config.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct DataConfig {
  std::string dir;  // folder written by `mixseq prepare`
  // Translation training batches, per rank (data/token_batching.h), written at this level of the
  // YAML (data.max_tokens, ...); training skips pairs over 50 pieces + </s> by default.
  BatchingOptions batching = training_batching();
  int64_t valid_max_tokens = 8192;  // per validation and translation batch

  void visit(ConfigVisitor& v) {
    v.field("dir", dir, "folder written by mixseq prepare");
    batching.visit(v);
    v.field("valid_max_tokens", valid_max_tokens, "tokens per validation batch");
  }

 private:
  static BatchingOptions training_batching() {
    BatchingOptions batching;
    batching.max_length = 50;
    return batching;
  }
};

// Language-model data (model families in models/registry.h): the training text as parallel
// streams cut into consecutive segments (data/lm_stream.h), as Transformer-XL reads it.
struct LmDataConfig {
  int64_t batch_size = 16;      // B: parallel streams over all ranks (a multiple of world size x batch_chunk)
  int64_t tgt_len = 64;         // T: tokens per training segment (Transformer-XL --tgt_len)
  int64_t batch_chunk = 1;      // micro-batches an update's streams are split into, each with its own memory
                                // (less memory, the same update; --batch_chunk); 1 = off
  bool varlen = false;          // segment lengths ~ N(tgt_len, 5), sometimes tgt_len / 2 (--varlen)
  bool roll = false;            // start every epoch at a random offset of each stream (NVIDIA's --roll)
  int64_t eval_batch_size = 10; // streams at validation
  int64_t eval_tgt_len = 64;    // segment length at validation
  int64_t eval_mem_len = 0;     // memory length at validation; 0 = the model's mem_len

  void visit(ConfigVisitor& v) {
    v.field("batch_size", batch_size, "parallel streams over all ranks");
    v.field("tgt_len", tgt_len, "tokens per training segment");
    v.field("batch_chunk", batch_chunk, "micro-batches per update, splitting the streams; 1 = off");
    v.field("varlen", varlen, "variable segment lengths around tgt_len");
    v.field("roll", roll, "rotate each stream by a random offset every epoch");
    v.field("eval_batch_size", eval_batch_size, "parallel streams at validation");
    v.field("eval_tgt_len", eval_tgt_len, "segment length at validation");
    v.field("eval_mem_len", eval_mem_len, "memory length at validation; 0 = the model's mem_len");
  }
};

struct TrainOptions {
  std::string run_dir = "runs/train";  // checkpoints, config.yaml and metrics.jsonl go here
  std::string device = "auto";         // auto | cpu | cuda | cuda:N
  std::string precision = "fp32";      // auto | fp32 | tf32 | bf16 | fp16 (train/mixed_precision.h)
  int64_t seed = 1;                    // initialization, dropout and batch order
  int64_t max_epochs = 6;              // stop after this many epochs; 0 = no limit (set max_steps)
  int64_t max_steps = 0;               // stop after this many updates; 0 = no limit (set max_epochs)
  double max_time = 0;                 // wall-clock budget in seconds, validation included, across resumes; 0 = none
  double target_bleu = 0;              // stop once validation BLEU reaches this; unreached = failure; 0 = none
  int64_t update_freq = 1;             // batches accumulated into one update (gradient accumulation)
  int64_t log_interval = 50;           // updates between log lines
  // Intervals count updates (optimizer steps), as Marian's; fairseq's --validate-interval and
  // --save-interval count epochs, which is what 0 (at epoch ends) gives.
  int64_t validate_interval = 0;       // updates between validation-loss checks; 0 = at epoch ends only
  int64_t save_interval = 0;           // updates between saves of checkpoint_last; 0 = at epoch ends only
  int64_t keep_last_checkpoints = 0;   // also save checkpoint_<update>.pt at each save, keeping the newest N; 0 = none
  bool validate_bleu = true;           // beam-search BLEU on the validation split at each epoch end
  std::string best_metric = "auto";    // what picks checkpoint_best: auto (the task's metric: bleu for translation
                                       // with validate_bleu, else loss) | loss | the task's metric by name
  int64_t patience = 0;                // stop after this many validations of best_metric without improvement; 0 = off

  void visit(ConfigVisitor& v) {
    v.field("run_dir", run_dir, "folder for checkpoints and logs");
    v.field("device", device, "auto, cpu, cuda or cuda:N");
    v.choice("precision", precision, precision_choices(),
             "arithmetic precision; auto = bf16 where computed natively, else fp32");
    v.field("seed", seed, "seed of initialization, dropout and batch order");
    v.field("max_epochs", max_epochs, "epochs to train; 0 = no limit");
    v.field("max_steps", max_steps, "updates to train; 0 = no limit");
    v.field("max_time", max_time, "wall-clock budget in seconds (schedules size to it); 0 = none");
    v.field("target_bleu", target_bleu, "stop at this validation BLEU; a failure if never reached; 0 = none");
    v.field("update_freq", update_freq, "batches accumulated per update");
    v.field("log_interval", log_interval, "updates between log lines");
    v.field("validate_interval", validate_interval, "updates (not epochs) between validation losses; 0 = per epoch");
    v.field("save_interval", save_interval, "updates (not epochs) between checkpoint saves; 0 = per epoch");
    v.field("keep_last_checkpoints", keep_last_checkpoints, "numbered checkpoints kept, for averaging; 0 = none");
    v.field("validate_bleu", validate_bleu, "beam-search BLEU on the validation split each epoch");
    v.field("best_metric", best_metric,
            "what picks checkpoint_best: auto (the task's metric), loss, or the task's metric (bleu for translation)");
    v.field("patience", patience, "stop after this many validations of best_metric without improvement; 0 = off");
  }
};

// Data-parallel training (docs/distributed.md). Rank and world size come from the launcher's
// environment (distributed/launch_environment.h), not from the config.
struct DistributedConfig {
  ProcessGroupOptions group;       // distributed.backend and .timeout (distributed/process_group.h)
  GradientReducerOptions reducer;  // distributed.bucket_cap_mb and .overlap (distributed/gradient_reducer.h)
  bool log_all_ranks = false;      // false: only rank 0 logs

  void visit(ConfigVisitor& v) {
    group.visit(v);
    reducer.visit(v);
    v.field("log_all_ranks", log_all_ranks, "every rank logs to stderr (prefixed by its rank); default rank 0 only");
  }
};

// The classification task (train/classification_task.h): where its encoder starts, its batches,
// and how the pretrained encoder is fine-tuned (ULMFiT, Howard & Ruder 2018, §3.3).
struct ClassificationConfig {
  std::string pretrained;         // a language model's checkpoint whose layers and word vectors start the encoder
                                  // (its vocabulary must be the data's: prepare --task classify --pretrained); "" = from scratch
  int64_t max_tokens = 4096;      // per training batch: sentences x longest, padding included; 0 = no limit
  int64_t max_sentences = 64;     // per training batch; 0 = no limit
  int64_t valid_max_tokens = 16384;  // per validation batch
  int64_t unfreeze_every = 0;     // gradual unfreezing: the head alone trains at first, and every this many updates
                                  // one more layer group (the encoder's layers from the top, the word vectors with the
                                  // first); 0 = everything trains from the start
  double layer_lr_divisor = 1.0;  // discriminative fine-tuning (ULMFiT: 2.6): layer group g from the top (the head is
                                  // 0) learns at lr / layer_lr_divisor^g; 1 = one rate for all

  void visit(ConfigVisitor& v) {
    v.field("pretrained", pretrained, "language model checkpoint that starts the encoder; empty = from scratch");
    v.field("max_tokens", max_tokens, "tokens per training batch (sentences x longest); 0 = no limit");
    v.field("max_sentences", max_sentences, "sentences per training batch; 0 = no limit");
    v.field("valid_max_tokens", valid_max_tokens, "tokens per validation batch");
    v.field("unfreeze_every", unfreeze_every, "gradual unfreezing: one more layer group every this many updates; 0 = off");
    v.field("layer_lr_divisor", layer_lr_divisor, "layer group g from the top learns at lr / divisor^g; 1 = one rate");
  }
};

// Every section any task reads. Which task a run is, and so which of its settings it reads, follows
// from model.arch (train/training_tasks.h): a setting that only another task reads is an error when
// a config file or the command line sets it, and the config stored with the run lists only the
// sections of its own task.
struct TrainConfig {
  ModelConfig model;
  DataConfig data;  // data.dir: every task; the batching keys: translation
  LmDataConfig lm;  // the language-model task
  SpeechInputConfig speech;  // the speech-recognition task: features, augmentation, batches
  ClassificationConfig classify;  // the classification task
  SynthesisInputConfig synthesis;  // the speech-synthesis task: frames, batches, guided attention
  LabelSmoothingOptions criterion;  // the translation task
  OptimizerOptions optim;
  LrScheduleOptions schedule;
  GradientClippingOptions clipping;
  LossScalerOptions loss_scaler;  // used with precision fp16
  TrainOptions train;
  BeamSearchOptions validation_search;  // the translation task: the validation BLEU's search
  DistributedConfig distributed;

  void visit(ConfigVisitor& v) {
    v.section("model", model);
    v.section("data", data);
    v.section("lm", lm);
    v.section("speech", speech);
    v.section("classify", classify);
    v.section("synthesis", synthesis);
    v.section("criterion", criterion);
    v.section("optim", optim);
    v.section("schedule", schedule);
    v.section("clipping", clipping);
    v.section("loss_scaler", loss_scaler);
    v.section("train", train);
    v.section("validation_search", validation_search);
    v.section("distributed", distributed);
  }
  ConfigFields fields() {
    return [this](ConfigVisitor& v) { visit(v); };
  }
};

}  // namespace mixseq
