#include "mixseq/decode/beam_search.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "mixseq/decode/beam_candidates.h"
#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"

namespace mixseq {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A sentence still being searched.
struct LiveSentence {
  int64_t index;    // position in the input batch
  int64_t max_len;  // tokens before </s>
};

// Wu et al. 2016, §7, eq. 14. pow(x, 0) = 1, so alpha = 0 disables it.
double length_penalty(int64_t length, const BeamSearchOptions& o) {
  return std::pow((o.length_penalty_const + static_cast<double>(length)) / (o.length_penalty_const + 1.0),
                  o.length_penalty);
}

// Wu et al. 2016, §7, eq. 14: beta · Σ_i log(min(Σ_j a_ij, 1)). A position never attended
// (padding) would add log 0 = -inf; it adds 0, as in NVIDIA's GNMT beam_search.py.
torch::Tensor coverage_penalty(const torch::Tensor& coverage, double beta) {  // [R, S] -> [R]
  return coverage.clamp_max(1.0).log().masked_fill(coverage == 0, 0.0).sum(1) * beta;
}

Hypothesis end_hypothesis(std::vector<int64_t> tokens, bool with_eos, double log_prob, double coverage,
                          const BeamSearchOptions& o) {
  const int64_t length = static_cast<int64_t>(tokens.size()) + (with_eos ? 1 : 0);
  return {std::move(tokens), log_prob / length_penalty(length, o) + coverage, log_prob, length, /*alignment=*/{}};
}

// The last step of a sentence: the one that forces </s> after max_len tokens, or with
// suppress_eos the one that makes the max_len-th token.
bool is_last_step(int64_t step, const LiveSentence& s, const BeamSearchOptions& o) {
  return step == (o.suppress_eos ? s.max_len - 1 : s.max_len);
}

// A host vector as an int64 tensor on `device`; always a copy, so the vector may go away.
torch::Tensor upload(const std::vector<int64_t>& values, const torch::Device& device) {
  auto host = at::from_blob(const_cast<int64_t*>(values.data()), {static_cast<int64_t>(values.size())}, at::kLong);
  return host.to(device, at::kLong, /*non_blocking=*/false, /*copy=*/true);
}

// The best `count` continuations of each live sentence's `beams` rows: [n, count] scores (each
// row's score plus the step's log-probability in fp32; logits may be bf16/fp16 under autocast)
// and their indices beam·V + token. The search's constraints: never <pad> or <s>; no </s> before
// min_len or with suppress_eos; nothing but </s> for a sentence at its max_len (fairseq).
std::tuple<torch::Tensor, torch::Tensor> step_candidates(const DecoderStep& out, int64_t step,
                                                         const std::vector<LiveSentence>& live,
                                                         const torch::Tensor& scores, int64_t beams, int64_t count,
                                                         int64_t vocab_size, const BeamSearchOptions& o) {
  const auto n = static_cast<int64_t>(live.size());
  MIXSEQ_CHECK(out.logits.dim() == 2 && out.logits.size(0) == n * beams && out.logits.size(1) == vocab_size,
               "Seq2SeqModel::step returned logits of shape ", out.logits.sizes(), "; expected [", n * beams, ", ",
               vocab_size, "] (rows fed, vocab_size())");
  ContinuationRules rules;
  rules.eos_allowed = !o.suppress_eos && step >= o.min_len;
  if (!o.suppress_eos)
    for (const auto& sentence : live) rules.only_eos.push_back(is_last_step(step, sentence, o));
  if (out.logits.device().is_cpu()) return best_continuations(out.logits, scores, beams, count, rules);

  // Elsewhere (GPU) through LibTorch's ops, by the same rules.
  auto lprobs = at::log_softmax(out.logits.to(at::kFloat), -1);  // [n·K, V]
  lprobs.select(1, kPadId).fill_(-kInf);
  lprobs.select(1, kBosId).fill_(-kInf);
  if (!rules.eos_allowed) lprobs.select(1, kEosId).fill_(-kInf);
  std::vector<int64_t> forced;
  for (int64_t j = 0; j < static_cast<int64_t>(rules.only_eos.size()); ++j)
    if (rules.only_eos[j])
      for (int64_t r = 0; r < beams; ++r) forced.push_back(j * beams + r);
  if (!forced.empty()) {
    const auto index = upload(forced, lprobs.device());                // [F]
    const auto eos = lprobs.index_select(0, index).select(1, kEosId);  // [F]
    lprobs.index_fill_(0, index, -kInf);
    lprobs.select(1, kEosId).index_copy_(0, index, eos);
  }
  const auto [best, indices] = (scores.unsqueeze(1) + lprobs).view({n, beams * vocab_size}).topk(count);
  return {best, indices};
}

// The step's attention in fp32, for the coverage penalty.
torch::Tensor step_attention(const DecoderStep& out, int64_t rows, int64_t source_width, const BeamSearchOptions& o) {
  MIXSEQ_CHECK(out.attention.defined(), o.return_alignment ? "the alignment" : "coverage_penalty",
               " needs the model's attention, but this model reports none",
               o.return_alignment ? "" : "; set coverage_penalty to 0");
  MIXSEQ_CHECK(out.attention.dim() == 2 && out.attention.size(0) == rows && out.attention.size(1) == source_width,
               "Seq2SeqModel::step returned attention of shape ", out.attention.sizes(), "; expected [", rows, ", ",
               source_width, "]");
  return out.attention.to(at::kFloat);  // [R, S]
}

std::vector<std::vector<Hypothesis>> greedy_search(Seq2SeqModelImpl& model, const torch::Tensor& source,
                                                   const torch::Tensor& source_lengths,
                                                   std::vector<LiveSentence> live, const BeamSearchOptions& o) {
  const int64_t B = source.size(0), S = source.size(1), V = model.vocab_size();
  const bool use_coverage = o.coverage_penalty != 0;
  std::vector<std::vector<Hypothesis>> results(B);

  auto state = model.start(source, source_lengths);
  state->report_attention = use_coverage || o.return_alignment;  // one row per live sentence
  auto tokens = at::full({B}, kBosId, source.options().dtype(at::kLong));  // [B]
  auto log_prob = at::zeros({B}, source.options().dtype(at::kFloat));      // [B]
  torch::Tensor coverage;  // [B, S] attention summed over the steps so far
  if (use_coverage) coverage = at::zeros({B, S}, source.options().dtype(at::kFloat));
  std::vector<std::vector<int64_t>> history(B);    // tokens so far, per row
  std::vector<std::vector<int64_t>> alignment(B);  // with return_alignment: their attended positions

  for (int64_t step = 0; !live.empty(); ++step) {
    adapt_threads_to_load();
    const int64_t n = static_cast<int64_t>(live.size());
    const DecoderStep out = model.step(*state, tokens);
    const auto [best, best_token] = step_candidates(out, step, live, log_prob, 1, 1, V, o);  // [n, 1]
    const auto token = best_token.flatten();                                                  // [n]
    log_prob = best.flatten();                                                                // [n]
    std::vector<torch::Tensor> to_host = {token.to(at::kDouble), log_prob.to(at::kDouble)};
    if (use_coverage) {
      coverage = coverage + step_attention(out, n, S, o);                             // [n, S]
      to_host.push_back(coverage_penalty(coverage, o.coverage_penalty).to(at::kDouble));  // [n]
    }
    if (o.return_alignment) to_host.push_back(step_attention(out, n, S, o).argmax(1).to(at::kDouble));  // [n]
    const auto host = at::cat(to_host).cpu();  // the step's one device-to-host copy
    const double* host_token = host.data_ptr<double>();
    const double* host_log_prob = host_token + n;
    const double* host_coverage = host_log_prob + n;
    const double* host_aligned = host_coverage + (use_coverage ? n : 0);

    std::vector<LiveSentence> next_live;
    std::vector<int64_t> keep;
    for (int64_t j = 0; j < n; ++j) {
      const auto t = static_cast<int64_t>(host_token[j]);
      const double cp = use_coverage ? host_coverage[j] : 0.0;
      if (t == kEosId) {
        results[live[j].index].push_back(end_hypothesis(std::move(history[j]), true, host_log_prob[j], cp, o));
        results[live[j].index].back().alignment = std::move(alignment[j]);
        continue;
      }
      history[j].push_back(t);
      if (o.return_alignment) alignment[j].push_back(static_cast<int64_t>(host_aligned[j]));
      if (is_last_step(step, live[j], o)) {  // only with suppress_eos: otherwise </s> was forced
        results[live[j].index].push_back(end_hypothesis(std::move(history[j]), false, host_log_prob[j], cp, o));
        results[live[j].index].back().alignment = std::move(alignment[j]);
        continue;
      }
      if (static_cast<int64_t>(keep.size()) != j) {
        history[keep.size()] = std::move(history[j]);
        alignment[keep.size()] = std::move(alignment[j]);
      }
      keep.push_back(j);
      next_live.push_back(live[j]);
    }
    live = std::move(next_live);
    history.resize(keep.size());
    alignment.resize(keep.size());
    tokens = token;
    if (live.empty() || static_cast<int64_t>(keep.size()) == n) continue;
    const auto rows = upload(keep, source.device());  // [n']: finished sentences leave the batch
    state->select(rows);
    tokens = tokens.index_select(0, rows);
    log_prob = log_prob.index_select(0, rows);
    if (use_coverage) coverage = coverage.index_select(0, rows);
  }
  return results;
}

std::vector<std::vector<Hypothesis>> batched_beam_search(Seq2SeqModelImpl& model, const torch::Tensor& source,
                                                         const torch::Tensor& source_lengths,
                                                         std::vector<LiveSentence> live, const BeamSearchOptions& o) {
  const int64_t B = source.size(0), S = source.size(1), V = model.vocab_size(), K = o.beam_size;
  const bool use_coverage = o.coverage_penalty != 0;
  const auto device = source.device();
  std::vector<std::vector<Hypothesis>> results(B);

  // Rows j·K .. j·K + K-1 hold the K beams of live sentence j. At step 0 every beam would extend
  // the same <s> from the same state: the model runs one row per sentence, its output is spread
  // over the K beams, of which only beam 0 is live (the others start at -inf), and the state
  // follows with the rows step 0 keeps.
  auto state = model.start(source, source_lengths);
  state->report_attention = use_coverage || o.return_alignment;
  auto tokens = at::full({B}, kBosId, source.options().dtype(at::kLong));  // [B], then [n·K]
  auto scores = at::full({B, K}, -kInf, source.options().dtype(at::kFloat));  // [B, K] log P of each beam
  scores.select(1, 0).fill_(0);
  scores = scores.view({B * K});  // [B·K]
  torch::Tensor coverage;  // [B·K, S] attention summed over each beam's steps
  if (use_coverage) coverage = at::zeros({B * K, S}, source.options().dtype(at::kFloat));
  std::vector<std::vector<int64_t>> history(B * K);    // tokens so far, per row
  std::vector<std::vector<int64_t>> alignment(B * K);  // with return_alignment: their attended positions

  for (int64_t step = 0; !live.empty(); ++step) {
    adapt_threads_to_load();
    const int64_t n = static_cast<int64_t>(live.size());
    DecoderStep out = model.step(*state, tokens);
    if (step == 0) {
      const auto beams = at::arange(n, tokens.options()).repeat_interleave(K);  // [n·K]: row j·K + k from row j
      out.logits = out.logits.index_select(0, beams);
      if (out.attention.defined()) out.attention = out.attention.index_select(0, beams);
    }
    // 2K candidates: at most K of them end in </s> (one per beam), so K others can go on.
    const auto [cand_scores, cand_index] = step_candidates(out, step, live, scores, K, 2 * K, V, o);  // [n, 2K]
    std::vector<torch::Tensor> to_host = {cand_scores.flatten().to(at::kDouble), cand_index.flatten().to(at::kDouble)};
    if (use_coverage) {
      coverage = coverage + step_attention(out, n * K, S, o);                            // [n·K, S]
      to_host.push_back(coverage_penalty(coverage, o.coverage_penalty).to(at::kDouble));  // [n·K]
    }
    if (o.return_alignment) to_host.push_back(step_attention(out, n * K, S, o).argmax(1).to(at::kDouble));  // [n·K]
    const auto host = at::cat(to_host).cpu();  // the step's one device-to-host copy
    const double* host_score = host.data_ptr<double>();
    const double* host_index = host_score + n * 2 * K;
    const double* host_coverage = host_index + n * 2 * K;
    const double* host_aligned = host_coverage + (use_coverage ? n * K : 0);
    // The alignment of row `row` extended by this step's position.
    const auto aligned_with_step = [&](int64_t row) {
      auto extended = alignment[row];
      if (o.return_alignment) extended.push_back(static_cast<int64_t>(host_aligned[row]));
      return extended;
    };

    std::vector<LiveSentence> next_live;
    std::vector<int64_t> next;  // rows to keep (repeats allowed), then their new tokens, then candidate positions
    std::vector<int64_t> next_tokens, next_candidates;
    std::vector<std::vector<int64_t>> next_history, next_alignment;
    for (int64_t j = 0; j < n; ++j) {
      auto& ended = results[live[j].index];
      const bool last = is_last_step(step, live[j], o);
      // fairseq: only candidates among the first K may end a hypothesis; -inf ones are dead beams.
      for (int64_t c = j * 2 * K; c < j * 2 * K + K && host_score[c] != -kInf; ++c) {
        const auto index = static_cast<int64_t>(host_index[c]);
        const int64_t row = j * K + index / V, token = index % V;
        const double cp = use_coverage ? host_coverage[row] : 0.0;
        if (token == kEosId) {
          if (static_cast<int64_t>(ended.size()) < K) {
            ended.push_back(end_hypothesis(history[row], true, host_score[c], cp, o));
            ended.back().alignment = alignment[row];
          }
        } else if (last && o.suppress_eos) {
          auto tokens_so_far = history[row];
          tokens_so_far.push_back(token);
          ended.push_back(end_hypothesis(std::move(tokens_so_far), false, host_score[c], cp, o));
          ended.back().alignment = aligned_with_step(row);
        }
      }
      if (last || static_cast<int64_t>(ended.size()) >= K) continue;
      next_live.push_back(live[j]);
      // When fewer than K continuations are possible (step 0 with a tiny vocabulary), the
      // rest are -inf beams: they fill the K rows, feed whatever token, and never end.
      for (int64_t c = j * 2 * K, kept = 0; kept < K; ++c) {
        const auto index = static_cast<int64_t>(host_index[c]);
        const int64_t row = j * K + index / V, token = index % V;
        if (token == kEosId) continue;
        next.push_back(row);
        next_tokens.push_back(token);
        next_candidates.push_back(c);
        next_history.push_back(history[row]);
        next_history.back().push_back(token);
        if (o.return_alignment) next_alignment.push_back(aligned_with_step(row));
        ++kept;
      }
    }
    live = std::move(next_live);
    if (live.empty()) break;
    history = std::move(next_history);
    if (o.return_alignment) alignment = std::move(next_alignment);
    const int64_t rows_left = static_cast<int64_t>(next.size());
    next.insert(next.end(), next_tokens.begin(), next_tokens.end());
    next.insert(next.end(), next_candidates.begin(), next_candidates.end());
    const auto next_device = upload(next, device).view({3, rows_left});  // the step's one host-to-device copy
    const auto rows = next_device[0];                                    // [n'·K]
    if (step == 0)
      state->select(at::div(rows, K, "floor"));  // from one row per sentence to its K beams
    else if (static_cast<int64_t>(live.size()) == n)
      state->select_within_sources(rows);  // reorders beams within their sentences
    else
      state->select(rows);  // reorders beams and drops finished sentences
    tokens = next_device[1];                                             // [n'·K]
    scores = cand_scores.flatten().index_select(0, next_device[2]);       // [n'·K]
    if (use_coverage) coverage = coverage.index_select(0, rows);        // [n'·K, S]
  }
  return results;
}

}  // namespace

void check_beam_search_options(const BeamSearchOptions& o, int64_t vocab_size) {
  MIXSEQ_CHECK(o.beam_size >= 1 && o.beam_size <= kMaxBeamSize, "beam_size must be in 1..", kMaxBeamSize,
               " (1 = greedy search); got ", o.beam_size);
  for (const auto& [name, value] : {std::pair{"length_penalty", o.length_penalty},
                                    std::pair{"length_penalty_const", o.length_penalty_const},
                                    std::pair{"coverage_penalty", o.coverage_penalty}, std::pair{"max_len_a", o.max_len_a}})
    MIXSEQ_CHECK(std::isfinite(value), name, " must be a finite number; got ", value);
  MIXSEQ_CHECK(o.max_len_a >= 0 && o.max_len_b >= 0, "max_len_a and max_len_b must be >= 0; got ", o.max_len_a, " and ",
               o.max_len_b);
  MIXSEQ_CHECK(o.nbest >= 1 && o.nbest <= o.beam_size, "nbest (", o.nbest, ") must be between 1 and beam_size (",
               o.beam_size, ")");
  MIXSEQ_CHECK(o.length_penalty_const > -1.0, "length_penalty_const must be above -1 so that lp > 0; got ",
               o.length_penalty_const);
  MIXSEQ_CHECK(o.coverage_penalty >= 0, "coverage_penalty must be >= 0 (0 disables); got ", o.coverage_penalty);
  MIXSEQ_CHECK(o.min_len >= 0, "min_len must be >= 0 (0 = no limit); got ", o.min_len);
  MIXSEQ_CHECK(vocab_size > kSpecialSymbolCount, "the model's vocabulary has ", vocab_size,
               " entries, only special symbols; search needs at least one word");
}

int64_t max_output_length(const BeamSearchOptions& o, int64_t source_length) {
  const auto max_len = static_cast<int64_t>(
      std::floor(o.max_len_a * static_cast<double>(source_length) + static_cast<double>(o.max_len_b)));
  const int64_t least = std::max<int64_t>(o.min_len, o.suppress_eos ? 1 : 0);
  MIXSEQ_CHECK(max_len >= least, "a source of ", source_length, " tokens gets max_len = floor(max_len_a ",
               o.max_len_a, " * ", source_length, " + max_len_b ", o.max_len_b, ") = ", max_len, ", below min_len (",
               o.min_len, ")", o.suppress_eos ? " or 1 (suppress_eos)" : "",
               "; raise max_len_a / max_len_b or lower min_len");
  return max_len;
}

std::vector<std::vector<Hypothesis>> beam_search(Seq2SeqModelImpl& model, const torch::Tensor& source,
                                                 const torch::Tensor& source_lengths,
                                                 const BeamSearchOptions& options) {
  check_beam_search_options(options, model.vocab_size());
  MIXSEQ_CHECK(!model.is_training(), "beam_search needs the model in eval() mode (dropout would randomize it)");
  MIXSEQ_CHECK(source.dim() == 2 && source.scalar_type() == at::kLong, "source must be [B, S] int64; got ",
               source.sizes(), " ", source.scalar_type());
  MIXSEQ_CHECK(source_lengths.dim() == 1 && source_lengths.scalar_type() == at::kLong &&
                   source_lengths.size(0) == source.size(0),
               "source_lengths must be [B] int64 with B = ", source.size(0), "; got ", source_lengths.sizes(), " ",
               source_lengths.scalar_type());
  const int64_t B = source.size(0);
  if (B == 0) return {};

  const auto lengths = source_lengths.cpu();
  std::vector<LiveSentence> live;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t length = lengths[i].item<int64_t>();
    MIXSEQ_CHECK(length >= 1 && length <= source.size(1), "source_lengths[", i, "] = ", length,
                 " is outside [1, S = ", source.size(1), "]");
    live.push_back({i, max_output_length(options, length)});
  }

  at::NoGradGuard no_grad;
  auto results = options.beam_size == 1 ? greedy_search(model, source, source_lengths, std::move(live), options)
                                        : batched_beam_search(model, source, source_lengths, std::move(live), options);
  for (auto& hypotheses : results) {
    std::stable_sort(hypotheses.begin(), hypotheses.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (static_cast<int64_t>(hypotheses.size()) > options.nbest) hypotheses.resize(options.nbest);
  }
  return results;
}

}  // namespace mixseq
