#include "mixseq/decode/ctc_beam_search.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "mixseq/util/error.h"

namespace mixseq {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
const double kLn10 = std::log(10.0);

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

using WordId = ArpaLanguageModel::WordId;

// The word-level state of a prefix: what the language model and the word bonus have added for its
// completed words, and the word being spelt.
struct WordState {
  double fused = 0;            // sum over completed words of alpha ln p_lm + beta
  double lm_log10 = 0;         // sum of their log10 p_lm
  int64_t words = 0;           // completed words
  std::string word;            // symbols since the last space
  std::vector<WordId> history;  // LM history: <s> (if listed) then the completed words, last N-1 kept
};

// One node of the prefix trie: a prefix is the path from the root.
struct Node {
  int32_t parent = -1;
  int64_t symbol = -1;                             // -1 for the root (empty prefix)
  std::vector<std::pair<int64_t, int32_t>> children;  // (symbol, node)
  double prev_b = kNegInf, prev_nb = kNegInf;        // ln p over paths to the previous frame (valid in the beam)
  double next_b = kNegInf, next_nb = kNegInf;        // ln p over paths to this frame
  int64_t frame = -1;                               // the frame next_* belong to
  WordState state;
};

class PrefixSearch {
 public:
  PrefixSearch(const CtcSymbols& symbols, const CtcBeamSearchOptions& options)
      : options_(options), lm_(options.language_model.get()), alpha_(lm_ ? options.alpha : 0.0) {
    for (int64_t id = 0; id < symbols.size(); ++id) {
      symbol_text_.push_back(symbols.symbol(id));
    }
    if (lm_) history_size_ = static_cast<size_t>(std::max<int64_t>(1, lm_->order() - 1));
  }

  std::vector<CtcScoredHypothesis> run(const torch::Tensor& log_probs) {  // [T, V]
    const auto lp = log_probs.accessor<float, 2>();
    const int64_t frames = log_probs.size(0), vocab = log_probs.size(1);
    nodes_.clear();
    nodes_.emplace_back();
    nodes_[0].prev_b = 0;
    if (lm_ && lm_->begin_sentence_id() != ArpaLanguageModel::kNoWord)
      nodes_[0].state.history.push_back(lm_->begin_sentence_id());
    std::vector<int32_t> beam = {0};
    std::vector<int32_t> touched;
    std::vector<std::pair<float, int64_t>> frame_symbols(static_cast<size_t>(vocab));
    for (int64_t t = 0; t < frames; ++t) {
      // The symbols tried at this frame, most likely first (DeepSpeech2's get_pruned_log_probs).
      for (int64_t c = 0; c < vocab; ++c) frame_symbols[static_cast<size_t>(c)] = {lp[t][c], c};
      size_t kept = frame_symbols.size();
      if (options_.cutoff_top_n > 0 || options_.cutoff_prob < 1.0) {
        std::stable_sort(frame_symbols.begin(), frame_symbols.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        if (options_.cutoff_top_n > 0) kept = std::min(kept, static_cast<size_t>(options_.cutoff_top_n));
        if (options_.cutoff_prob < 1.0) {
          double mass = 0;
          for (size_t i = 0; i < kept; ++i) {
            mass += std::exp(static_cast<double>(frame_symbols[i].first));
            if (mass >= options_.cutoff_prob) {
              kept = i + 1;
              break;
            }
          }
        }
      }
      touched.clear();
      auto touch = [&](int32_t id) -> Node& {
        Node& node = nodes_[static_cast<size_t>(id)];
        if (node.frame != t) {
          node.frame = t;
          node.next_b = node.next_nb = kNegInf;
          touched.push_back(id);
        }
        return node;
      };
      for (const int32_t p : beam) {
        const double p_b = nodes_[static_cast<size_t>(p)].prev_b, p_nb = nodes_[static_cast<size_t>(p)].prev_nb;
        const double p_total = log_add(p_b, p_nb);
        const int64_t last = nodes_[static_cast<size_t>(p)].symbol;
        for (size_t i = 0; i < kept; ++i) {
          const int64_t c = frame_symbols[i].second;
          const double l = frame_symbols[i].first;
          if (c == kCtcBlankId) {
            Node& node = touch(p);
            node.next_b = log_add(node.next_b, p_total + l);
            continue;
          }
          const int32_t child = child_of(p, c);
          if (c == last) {  // "a" + a: the same prefix unless a blank came between
            Node& same = touch(p);
            same.next_nb = log_add(same.next_nb, p_nb + l);
            Node& extended = touch(child);
            extended.next_nb = log_add(extended.next_nb, p_b + l);
          } else {
            Node& extended = touch(child);
            extended.next_nb = log_add(extended.next_nb, p_total + l);
          }
        }
      }
      // The beam_size best by score; ties by creation order, so the result is deterministic.
      std::vector<std::pair<double, int32_t>> ranked;
      ranked.reserve(touched.size());
      for (const int32_t id : touched) {
        const Node& node = nodes_[static_cast<size_t>(id)];
        const double ctc = log_add(node.next_b, node.next_nb);
        if (ctc != kNegInf) ranked.emplace_back(ctc + node.state.fused, id);
      }
      const size_t keep = std::min(ranked.size(), static_cast<size_t>(options_.beam_size));
      std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(), better);
      beam.clear();
      for (size_t i = 0; i < keep; ++i) {
        Node& node = nodes_[static_cast<size_t>(ranked[i].second)];
        node.prev_b = node.next_b;
        node.prev_nb = node.next_nb;
        beam.push_back(ranked[i].second);
      }
    }

    // The end: the last word and </s> count now.
    std::vector<std::pair<double, int32_t>> ranked;
    std::unordered_map<int32_t, WordState> finals;  // by node
    for (const int32_t id : beam) {
      const Node& node = nodes_[static_cast<size_t>(id)];
      WordState state = node.state;
      complete_word(state);
      if (lm_ && options_.lm_end_of_sentence && lm_->end_sentence_id() != ArpaLanguageModel::kNoWord) {
        const double l = lm_->log10_prob(state.history, lm_->end_sentence_id());
        state.lm_log10 += l;
        state.fused += alpha_ * l * kLn10;
      }
      ranked.emplace_back(log_add(node.prev_b, node.prev_nb) + state.fused, id);
      finals[id] = std::move(state);
    }
    std::sort(ranked.begin(), ranked.end(), better);
    std::vector<CtcScoredHypothesis> results;
    for (size_t i = 0; i < ranked.size() && static_cast<int64_t>(i) < options_.nbest; ++i) {
      const int32_t id = ranked[i].second;
      const Node& node = nodes_[static_cast<size_t>(id)];
      const WordState& state = finals.at(id);
      std::vector<int64_t> symbols;
      for (int32_t n = id; n > 0; n = nodes_[static_cast<size_t>(n)].parent)
        symbols.push_back(nodes_[static_cast<size_t>(n)].symbol);
      std::reverse(symbols.begin(), symbols.end());
      CtcScoredHypothesis h;
      h.hypothesis = ctc_forced_alignment(log_probs, symbols);
      h.ctc_log_prob = log_add(node.prev_b, node.prev_nb);
      h.score = ranked[i].first;
      h.lm_log10_prob = state.lm_log10;
      h.words = state.words;
      results.push_back(std::move(h));
    }
    return results;
  }

 private:
  static bool better(const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  }

  // Ends the word being spelt (if any): its LM term and bonus.
  void complete_word(WordState& state) const {
    if (state.word.empty()) return;
    if (lm_) {
      const WordId id = lm_->word_id(state.word);
      const double l = lm_->log10_prob(state.history, id);
      state.lm_log10 += l;
      state.fused += alpha_ * l * kLn10;
      state.history.push_back(id);
      if (state.history.size() > history_size_) state.history.erase(state.history.begin());
    }
    state.fused += options_.beta;
    ++state.words;
    state.word.clear();
  }

  int32_t child_of(int32_t parent, int64_t symbol) {
    for (const auto& [s, id] : nodes_[static_cast<size_t>(parent)].children)
      if (s == symbol) return id;
    const auto id = static_cast<int32_t>(nodes_.size());
    nodes_.emplace_back();  // std::deque: references to other nodes stay valid
    Node& child = nodes_.back();
    const Node& p = nodes_[static_cast<size_t>(parent)];
    child.parent = parent;
    child.symbol = symbol;
    child.state = p.state;
    // A symbol that begins with a space (the space, or a piece that begins a word) ends the word.
    const std::string& text = symbol_text_[static_cast<size_t>(symbol)];
    if (!text.empty() && text.front() == ' ') {
      complete_word(child.state);
      child.state.word.append(text, 1);
    } else {
      child.state.word += text;
    }
    nodes_[static_cast<size_t>(parent)].children.emplace_back(symbol, id);
    return id;
  }

  const CtcBeamSearchOptions& options_;
  const ArpaLanguageModel* lm_;
  double alpha_;
  std::vector<std::string> symbol_text_;
  size_t history_size_ = 1;
  std::deque<Node> nodes_;
};

}  // namespace

void check_ctc_beam_search_options(const CtcBeamSearchOptions& options, const CtcSymbols& symbols) {
  MIXSEQ_CHECK(options.beam_size >= 1, "CTC beam search: beam_size must be at least 1, not ", options.beam_size);
  MIXSEQ_CHECK(options.nbest >= 1 && options.nbest <= options.beam_size, "CTC beam search: nbest (", options.nbest,
               ") must be from 1 to beam_size (", options.beam_size, ")");
  MIXSEQ_CHECK(options.cutoff_top_n >= 0, "CTC beam search: cutoff_top_n must be 0 (off) or positive, not ",
               options.cutoff_top_n);
  MIXSEQ_CHECK(options.cutoff_prob > 0 && options.cutoff_prob <= 1, "CTC beam search: cutoff_prob must be in (0, 1], not ",
               options.cutoff_prob);
  MIXSEQ_CHECK(std::isfinite(options.alpha) && std::isfinite(options.beta), "CTC beam search: alpha (", options.alpha,
               ") and beta (", options.beta, ") must be finite");
  if (options.language_model) {
    bool has_space = false;
    for (int64_t id = 1; id < symbols.size(); ++id) has_space |= symbols.symbol(id).front() == ' ';
    MIXSEQ_CHECK(has_space, "CTC beam search: a word language model needs a space symbol (or pieces that begin words) "
                 "to split words; the model's symbols have none");
  }
}

std::vector<CtcScoredHypothesis> ctc_beam_search_utterance(const torch::Tensor& log_probs, const CtcSymbols& symbols,
                                                           const CtcBeamSearchOptions& options) {
  MIXSEQ_CHECK(log_probs.dim() == 2 && log_probs.size(1) == symbols.size() && log_probs.scalar_type() == torch::kFloat &&
                   log_probs.device().is_cpu(),
               "ctc_beam_search_utterance: log_probs must be fp32 [T, V] on the CPU with V = ", symbols.size(),
               " symbols, not ", log_probs.sizes(), " ", log_probs.scalar_type(), " on ", log_probs.device());
  check_ctc_beam_search_options(options, symbols);
  PrefixSearch search(symbols, options);
  return search.run(log_probs.contiguous());
}

std::vector<std::vector<CtcScoredHypothesis>> ctc_beam_search(const torch::Tensor& logits, const torch::Tensor& lengths,
                                                              const CtcSymbols& symbols,
                                                              const CtcBeamSearchOptions& options) {
  MIXSEQ_CHECK(logits.dim() == 3 && lengths.numel() == logits.size(0) && logits.size(2) == symbols.size(),
               "ctc_beam_search: logits [B, T, V] with V = ", symbols.size(), " symbols and [B] lengths, not ",
               logits.sizes(), " and ", lengths.sizes());
  check_ctc_beam_search_options(options, symbols);
  const auto log_probs = logits.to(torch::kCPU, torch::kFloat).log_softmax(-1).contiguous();  // [B, T', V]
  const auto frames = lengths.to(torch::kCPU, torch::kLong).contiguous();
  const auto frames_of = frames.accessor<int64_t, 1>();
  std::vector<std::vector<CtcScoredHypothesis>> results(static_cast<size_t>(logits.size(0)));
  at::parallel_for(0, logits.size(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t length = std::clamp<int64_t>(frames_of[b], 0, log_probs.size(1));
      PrefixSearch search(symbols, options);
      results[static_cast<size_t>(b)] = search.run(log_probs[b].narrow(0, 0, length));
    }
  });
  return results;
}

CtcHypothesis ctc_forced_alignment(const torch::Tensor& log_probs, const std::vector<int64_t>& symbols) {
  const int64_t frames = log_probs.size(0);
  const auto lp = log_probs.accessor<float, 2>();
  CtcHypothesis result;
  result.symbols = symbols;
  if (symbols.empty()) return result;
  // States: blank, s_1, blank, s_2, ..., s_L, blank (2L + 1); state 2i + 1 emits symbols[i].
  const auto states = static_cast<int64_t>(2 * symbols.size() + 1);
  auto label = [&](int64_t s) { return s % 2 ? symbols[static_cast<size_t>(s / 2)] : kCtcBlankId; };
  std::vector<double> score(static_cast<size_t>(states), kNegInf), next(static_cast<size_t>(states));
  std::vector<int8_t> step(static_cast<size_t>(frames * states), 0);  // 0, 1, 2: states moved to reach s at t
  if (frames > 0) {
    score[0] = lp[0][kCtcBlankId];
    score[1] = lp[0][symbols[0]];
  }
  for (int64_t t = 1; t < frames; ++t) {
    for (int64_t s = 0; s < states; ++s) {
      double best = score[static_cast<size_t>(s)];
      int8_t move = 0;
      if (s >= 1 && score[static_cast<size_t>(s - 1)] > best) {
        best = score[static_cast<size_t>(s - 1)];
        move = 1;
      }
      if (s >= 2 && s % 2 == 1 && label(s) != label(s - 2) && score[static_cast<size_t>(s - 2)] > best) {
        best = score[static_cast<size_t>(s - 2)];
        move = 2;
      }
      next[static_cast<size_t>(s)] = best + lp[t][label(s)];
      step[static_cast<size_t>(t * states + s)] = move;
    }
    std::swap(score, next);
  }
  int64_t s = states - 1;
  if (states >= 2 && score[static_cast<size_t>(states - 2)] > score[static_cast<size_t>(states - 1)]) s = states - 2;
  MIXSEQ_CHECK(frames > 0 && score[static_cast<size_t>(s)] != kNegInf, "ctc_forced_alignment: ", symbols.size(),
               " symbols do not fit in ", frames, " frames");
  result.first_frame.assign(symbols.size(), -1);
  result.last_frame.assign(symbols.size(), -1);
  for (int64_t t = frames - 1; t >= 0; --t) {
    if (s % 2 == 1) {
      const auto i = static_cast<size_t>(s / 2);
      result.first_frame[i] = t;
      if (result.last_frame[i] < 0) result.last_frame[i] = t;
    }
    s -= step[static_cast<size_t>(t * states + s)];
  }
  return result;
}

}  // namespace mixseq
