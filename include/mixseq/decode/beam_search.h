// Beam search and greedy search over any Seq2SeqModel (models/seq2seq_model.h).
//
// beam_search() encodes a batch once (start), repeats each sentence's state into K beams with
// IncrementalState::select, then steps all live rows together. At each step it takes
// log_softmax of the logits in fp32, adds them to the K hypotheses' log-probabilities and
// keeps the 2K best continuations of each sentence over [K·V] (fairseq's SequenceGenerator):
// a continuation with </s> among the first K ends a hypothesis, and the K best others
// continue. A sentence is done when it has K ended hypotheses or reaches its max_len; its
// rows then leave the batch (select), so finished sentences cost nothing further. beam_size 1
// runs a greedy fast path (argmax, no top-k) with the same rules and results.
//
// Scores. Hypotheses are ranked during search by log P(Y|X) alone; the GNMT penalties
// (Wu et al. 2016, §7, eq. 14) are applied once, when a hypothesis ends:
//   score = log P(Y|X) / lp(Y) + cp(X; Y)
//   lp(Y) = ((c + |Y|) / (c + 1))^alpha
//   cp    = beta · Σ_i log(min(Σ_j a_ij, 1))
// where a_ij is the attention of target step j on source position i, summed over every step
// that produced a token of Y (the </s> step included), and a position whose summed attention
// is 0 (padding) adds 0, as NVIDIA's GNMT beam_search.py does.
//
// |Y| counts the output tokens with their </s>: "a b </s>" has |Y| = 3, as fairseq's
// (step + 1) and tensorflow/nmt count it. (NVIDIA's GNMT example also counts <s>, so its lp
// uses |Y| + 1.) A hypothesis cut by suppress_eos has no </s>: |Y| is its token count.
//
// Lengths. max_len = floor(max_len_a · source_length + max_len_b) for each sentence, with
// source_length its own length as given in source_lengths (with the source </s>), so a
// sentence gets the same result alone as in any batch (fairseq uses the padded batch width).
// As in fairseq, max_len counts tokens before </s>: a hypothesis has at most max_len tokens,
// then </s> is forced, so a sentence takes at most max_len + 1 steps. With suppress_eos, </s>
// is never chosen and every hypothesis has exactly max_len tokens (max_len steps, no </s>).
//
// Stopping. A sentence stops at K ended hypotheses (fairseq's is_finished). There is no
// "cannot improve" cut-off: with alpha > 0 or beta > 0 a live hypothesis's final score can
// still rise (lp grows, coverage rises), so no bound on it is safe.
//
// Contract. The model must be in eval() mode (dropout would make the search random). The search
// runs under NoGradGuard and leaves autocast as the caller set it: logits may come in
// bf16/fp16 and are converted to fp32 before log_softmax. Tensors live on source's device.
// A search keeps no state between calls; calls on different models may run in parallel.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "mixseq/models/seq2seq_model.h"
#include "mixseq/util/config.h"

namespace mixseq {

// Beam sizes past a few dozen do not improve translations (Koehn & Knowles 2017, §3.6); each
// hypothesis costs a row of [V] logits per sentence, so beyond this a beam only exhausts memory.
constexpr int64_t kMaxBeamSize = 1000;

struct BeamSearchOptions {
  int64_t beam_size = 5;              // K, hypotheses kept per sentence; 1 = greedy search; at most kMaxBeamSize
  double length_penalty = 0.6;        // GNMT alpha in lp(Y) = ((c + |Y|) / (c + 1))^alpha; 0 disables
  double length_penalty_const = 5.0;  // GNMT c in lp(Y); Wu et al. use 5
  double coverage_penalty = 0.1;      // GNMT beta; 0 disables (needed for models that report no attention)
  double max_len_a = 0.0;             // max tokens before </s> = floor(a · source_length + b); fairseq's
  int64_t max_len_b = 200;            // defaults: 200 tokens whatever the source length
  int64_t min_len = 1;                // fewest tokens before </s> (fairseq's default bans empty output); 0 = off
  int64_t nbest = 1;                  // hypotheses returned per sentence, best first; at most beam_size
  bool suppress_eos = false;          // never choose </s>: every hypothesis runs to max_len (benchmarks)
  bool return_alignment = false;      // fill Hypothesis::alignment (needs a model that reports attention)

  void visit(ConfigVisitor& v) {
    v.field("beam_size", beam_size, "hypotheses kept per sentence; 1 = greedy search");
    v.field("length_penalty", length_penalty, "GNMT alpha: score = log P / ((c + |Y|) / (c + 1))^alpha; 0 disables");
    v.field("length_penalty_const", length_penalty_const, "GNMT c in the length penalty");
    v.field("coverage_penalty", coverage_penalty, "GNMT beta; 0 disables");
    v.field("max_len_a", max_len_a, "max output tokens = floor(a * source_length + b)");
    v.field("max_len_b", max_len_b, "max output tokens = floor(a * source_length + b)");
    v.field("min_len", min_len, "fewest output tokens before </s>; 0 = no limit");
    v.field("nbest", nbest, "hypotheses returned per sentence, at most beam_size");
    v.field("suppress_eos", suppress_eos, "never end a hypothesis before max_len (fixed benchmark workload)");
  }

  // Same search (a server batches only requests that agree).
  bool operator==(const BeamSearchOptions& o) const {
    return beam_size == o.beam_size && length_penalty == o.length_penalty &&
           length_penalty_const == o.length_penalty_const && coverage_penalty == o.coverage_penalty &&
           max_len_a == o.max_len_a && max_len_b == o.max_len_b && min_len == o.min_len && nbest == o.nbest &&
           suppress_eos == o.suppress_eos && return_alignment == o.return_alignment;
  }
  bool operator!=(const BeamSearchOptions& o) const { return !(*this == o); }
};

struct Hypothesis {
  std::vector<int64_t> tokens;  // output ids, without </s>
  double score = 0;             // log_prob / lp(Y) + cp(X; Y): what hypotheses are ranked by
  double log_prob = 0;          // log P(Y|X), the </s> step included
  int64_t length = 0;           // |Y| as lp counts it: tokens.size() + 1, or tokens.size() without </s>
  // With return_alignment, for each of `tokens` the source position its step attended most
  // (the model's DecoderStep::attention; position source_length - 1 is the source's </s>), as
  // fairseq's --print-alignment; empty otherwise.
  std::vector<int64_t> alignment;
};

// Throws mixseq::Error naming the option, its value and the fix when `options` cannot search a
// model of vocab_size entries. beam_search runs it on every call; a trainer runs it on its
// validation search before the first update, so that a bad setting fails at once rather than
// at the first validation.
void check_beam_search_options(const BeamSearchOptions& options, int64_t vocab_size);

// max_len = floor(max_len_a · source_length + max_len_b) for a source of source_length tokens
// (its </s> included); throws mixseq::Error when that leaves no room for min_len tokens (or,
// with suppress_eos, for one). With max_len_a >= 0 the shortest source gets the least.
int64_t max_output_length(const BeamSearchOptions& options, int64_t source_length);

// source [B, S] int64 (right-padded with kPadId), source_lengths [B] int64 -> for each
// sentence, in input order, its best hypotheses, best first: nbest of them, or fewer when
// fewer ended (a tiny vocabulary, or max_len reached with fewer than K live hypotheses).
// Throws mixseq::Error for bad options or inputs.
std::vector<std::vector<Hypothesis>> beam_search(Seq2SeqModelImpl& model, const torch::Tensor& source,
                                                 const torch::Tensor& source_lengths,
                                                 const BeamSearchOptions& options = {});

}  // namespace mixseq
