// LanguageModelImpl: what language-model training, evaluation and generation know of a decoder-only
// model that carries a memory from one segment of text to the next, as Transformer-XL does
// (Dai et al. 2019). It stands beside Seq2SeqModel (models/seq2seq_model.h); each architecture
// of this family implements it, and nothing outside src/models names an architecture. The
// registry (models/registry.h) says which family an architecture belongs to.
//
// The data are B parallel streams cut into consecutive segments (data/lm_stream.h): row b of
// segment k continues row b of segment k-1. A caller passes each segment with the memory that
// the previous segment of the same rows returned, and an empty LmMemory for the first one (or
// after the rows changed, e.g. at an epoch start). The memory holds detached hidden states:
// gradients stop at the segment boundary, while attention still reaches back M tokens
// (Dai et al. 2019, §3.2, "segment-level recurrence with state reuse").
//
// Why forward() takes the targets and returns per-token NLL instead of logits: with a large
// vocabulary the output layer is an adaptive softmax (Grave et al. 2017; Transformer-XL on
// WikiText-103), which computes -log p(target) from the target's cluster and never builds the
// [B, T, V] scores. The loss is summed by the caller (train/update_step.h wants sums, normalised
// by the tokens of the whole update). Generation and anything that needs the whole distribution
// call log_probs(), which pays for all V entries of every position it is given.
//
// Shapes: B batch (streams), T segment length, M memory length (tokens of earlier segments
// kept), D model width, V vocabulary. Token ids follow text/vocabulary.h; a target of kPadId
// marks a position without a target (its NLL is 0).
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace mixseq {

// The states of earlier segments that the next one attends to.
struct LmMemory {
  // One entry per layer whose input the memory extends, in layer order, each [B, M, D] and
  // detached; the architecture decides how many (Transformer-XL keeps the input of every layer).
  // Empty: no memory, the first segment. Replace these tensors, never modify them in place.
  std::vector<torch::Tensor> layers;

  // What the model derived from layers[i] and may reuse at the next call instead of computing it
  // again (Transformer-XL, in evaluation: each layer's projected keys and values of the memory;
  // generation with one token a step would otherwise project all M of them at every step).
  // Callers pass it along with `layers` and need not maintain it: an entry is used only while
  // `source` is the very tensor in layers[i] and the weights are those it was computed with, so
  // after layers are replaced (rows selected, trimmed) or the weights change it is ignored.
  struct Reusable {
    torch::Tensor source;         // the layers[i] it was computed from
    int64_t weights_version = 0;  // the architecture's version of the weights it was computed with
    torch::Tensor value;
  };
  std::vector<Reusable> reusable;  // empty, or one per layer

  bool empty() const { return layers.empty(); }
  int64_t length() const { return layers.empty() ? 0 : layers.front().size(1); }  // M
};

struct LmOutput {
  torch::Tensor nll;  // [B, T] fp32: -log p(targets[b, t] | tokens up to t and the memory); 0 at kPadId targets
  LmMemory memory;    // for the next segment of the same rows
  torch::Tensor states;  // [B, T, D'] the vectors the output layer scored (after the output dropout and any
                         // projection), in the autocast dtype: what a continuous cache
                         // (decode/continuous_cache.h) compares positions by
};

// How far back the model looks, changeable after construction: evaluation uses a longer
// memory than training (the reference's eval.py calls reset_length and sets clamp_len and
// same_length; Dai et al. 2019 evaluate WikiText-103 with mem_len 1600, clamp_len 1000).
struct LmContext {
  int64_t mem_len = 0;       // M: positions of earlier segments kept as memory; 0 = none
  int64_t clamp_len = -1;    // relative distances above it share its positional embedding; -1 = no clamping
  bool same_length = false;  // every query attends over the same number of keys (mem_len of them), so the
                             // first and last positions of a segment see equally long contexts
};

struct LmLogProbs {
  torch::Tensor log_probs;  // [B, T, V] fp32: log p(v | tokens up to t and the memory)
  LmMemory memory;          // for the next segment of the same rows
};

class LanguageModelImpl : public torch::nn::Module {
 public:
  // tokens [B, T] int64, targets [B, T] int64 (the token after each position), memory of the
  // previous segment of these rows (M may be 0) -> per-token NLL [B, T] and the next memory.
  virtual LmOutput forward(const torch::Tensor& tokens, const torch::Tensor& targets, const LmMemory& memory) = 0;

  // tokens [B, T] int64, memory as for forward() -> the distribution of the token after each
  // position [B, T, V] and the next memory; generation feeds T = 1 at a time.
  virtual LmLogProbs log_probs(const torch::Tensor& tokens, const LmMemory& memory) = 0;

  virtual int64_t vocab_size() const = 0;

  // tokens [B, T] int64, memory as for forward() -> the last layer's output [B, T, D] (before the
  // output layer and its dropout: what a sentence classifier pools, models/sentence_classifier.h)
  // and the next memory.
  virtual std::pair<torch::Tensor, LmMemory> encode(const torch::Tensor& tokens, const LmMemory& memory) = 0;
  // D: the width of encode()'s states.
  virtual int64_t state_size() const = 0;
  // The parameters that encode() uses, in groups from the top layer down, the input layer's with
  // the lowest (for gradual unfreezing and discriminative learning rates).
  virtual std::vector<std::vector<torch::Tensor>> layer_groups() const = 0;

  // The context that forward() and log_probs() use from the next call on; the memory they return
  // is trimmed to the new mem_len. Throws mixseq::Error for a context the architecture cannot use.
  virtual void set_context(const LmContext& context) = 0;
  virtual LmContext context() const = 0;
};

using LanguageModelModule = std::shared_ptr<LanguageModelImpl>;  // as a torch::nn::ModuleHolder holds it

}  // namespace mixseq
