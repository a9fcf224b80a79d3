// Token-budget batching with length bucketing, as fairseq and Marian batch translation data.
//
// Examples are sorted by (source length, target length), ties in a seeded random order, then
// packed greedily while sentences x longest sentence (padding included) stays within
// max_tokens; batch order is then shuffled. The plan is a pure function of the lengths, the
// options and the epoch number, so a resumed run rebuilds exactly the batches it would have
// seen, and every rank of a data-parallel job agrees on the same global plan and takes its
// share of it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mixseq/util/config.h"

namespace mixseq {

struct BatchingOptions {
  int64_t max_tokens = 4096;       // per batch: sentences x longest side, padding included; 0 = no limit
  int64_t max_sentences = 0;       // per batch; 0 = no limit (at least one of the two limits must be set)
  int64_t max_length = 0;          // skip examples longer than this on either side; 0 = keep all
  int64_t sentence_multiple = 1;   // batch sizes are multiples of this when possible (8: tensor cores); 1 = off
  bool shuffle = true;             // false: batches in length order (validation, translation)
  uint64_t seed = 1;               // with the epoch number, fixes the order
  int64_t rank = 0;                // this process takes global batches rank, rank + world_size, ...
  int64_t world_size = 1;
  // For the error of an example over max_tokens (not read from a config): what the lengths are
  // of, their unit, and the config keys of the two limits ("" where the caller has none: a
  // validation split skips nothing).
  std::string data_name = "the data";
  std::string unit = "tokens";
  std::string max_tokens_key = "max_tokens";
  std::string max_length_key = "max_length";
  // data_name "the <split> split of '<dir>'".
  void name_for_messages(const std::string& split, const std::string& dir, std::string lengths_unit,
                         std::string tokens_key, std::string length_key = {}) {
    data_name = "the " + split + " split of '" + dir + "'";
    unit = std::move(lengths_unit);
    max_tokens_key = std::move(tokens_key);
    max_length_key = std::move(length_key);
  }

  // The limits a config file sets (the data section of train/train_config.h); a training loop
  // fills in the rest.
  void visit(ConfigVisitor& v) {
    v.field("max_tokens", max_tokens, "tokens per batch (sentences x longest side); 0 = no limit");
    v.field("max_sentences", max_sentences, "sentences per batch; 0 = no limit");
    v.field("max_length", max_length, "skip training pairs longer than this; 0 = keep all");
    v.field("sentence_multiple", sentence_multiple, "batch sizes in multiples of this; 1 = off");
  }
};

struct EpochBatches {
  std::vector<std::vector<int64_t>> batches;  // this rank's batches of example indices, in order
  int64_t skipped_too_long = 0;               // examples over max_length
  int64_t dropped_for_sharding = 0;           // last global batches dropped so every rank gets as many
};

// source_lengths / target_lengths: per example, its length as the model sees it (with bos/eos);
// pass an empty target_lengths for monolingual data. Throws if one example alone exceeds max_tokens:
// "the training split of 'data': example 7 (counting from 1) has 5000 tokens, more than
// data.max_tokens (4096); raise data.max_tokens, or set data.max_length to skip such examples".
EpochBatches plan_epoch_batches(const std::vector<int64_t>& source_lengths,
                                const std::vector<int64_t>& target_lengths, const BatchingOptions& options,
                                int64_t epoch);

}  // namespace mixseq
