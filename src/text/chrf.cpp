#include "mixseq/text/chrf.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "mixseq/text/lowercase.h"
#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"
#include "text/reference_streams.h"

namespace mixseq {
namespace {

// N-gram counts of every order: characters 1..char_order, then words 1..word_order.
// Character n-grams are keyed by their code points, word n-grams by their words joined with ' '.
struct SegmentNgrams {
  std::vector<std::unordered_map<std::u32string, int64_t>> chars;
  std::vector<std::unordered_map<std::string, int64_t>> words;
};

// Python's string.punctuation, which sacreBLEU's chrF++ splits off words.
bool is_ascii_punctuation(char32_t c) {
  return (c >= U'!' && c <= U'/') || (c >= U':' && c <= U'@') || (c >= U'[' && c <= U'`') ||
         (c >= U'{' && c <= U'~');
}

// sacreBLEU's CHRF._remove_punctuation (after github.com/m-popovic/chrF): one punctuation mark
// is split off the end of a word, or else off its start; so "(hi)" gives "(hi" and ")"
// (sacreBLEU #124).
std::vector<std::string> chrf_words(const std::string& segment) {
  std::vector<std::string> words;
  for (std::string_view word : split_whitespace(segment)) {
    const std::u32string w = decode_utf8(word);
    if (w.size() > 1 && is_ascii_punctuation(w.back())) {
      words.push_back(encode_utf8(w.substr(0, w.size() - 1)));
      words.push_back(encode_utf8(w.substr(w.size() - 1)));
    } else if (w.size() > 1 && is_ascii_punctuation(w.front())) {
      words.push_back(encode_utf8(w.substr(0, 1)));
      words.push_back(encode_utf8(w.substr(1)));
    } else {
      words.emplace_back(word);
    }
  }
  return words;
}

SegmentNgrams extract_ngrams(const std::string& raw_segment, const ChrfOptions& options) {
  const std::string segment = options.lowercase ? lowercase(raw_segment) : raw_segment;
  SegmentNgrams ngrams;
  // helpers.extract_all_char_ngrams: ''.join(line.split()) drops all whitespace first.
  std::u32string chars;
  if (options.whitespace) {
    chars = decode_utf8(segment);
  } else {
    for (std::string_view piece : split_whitespace(segment)) chars += decode_utf8(piece);
  }
  ngrams.chars.resize(static_cast<size_t>(options.char_order));
  for (size_t n = 1; n <= ngrams.chars.size(); ++n)
    for (size_t i = 0; i + n <= chars.size(); ++i) ++ngrams.chars[n - 1][chars.substr(i, n)];
  if (options.word_order > 0) {
    const std::vector<std::string> words = chrf_words(segment);
    ngrams.words.resize(static_cast<size_t>(options.word_order));
    for (size_t n = 1; n <= ngrams.words.size(); ++n) {
      for (size_t i = 0; i + n <= words.size(); ++i) {
        std::string key = words[i];
        for (size_t j = i + 1; j < i + n; ++j) (key += ' ') += words[j];
        ++ngrams.words[n - 1][key];
      }
    }
  }
  return ngrams;
}

// sacreBLEU's CHRF._get_match_statistics: [hypothesis n-grams, reference n-grams, matches];
// hypothesis n-grams count only when the reference has n-grams of this order.
template <typename Counts>
void append_match_statistics(const Counts& hyp, const Counts& ref, std::vector<int64_t>& statistics) {
  int64_t hyp_count = 0, ref_count = 0, matches = 0;
  for (const auto& [ngram, count] : hyp) {
    hyp_count += count;
    const auto it = ref.find(ngram);
    if (it != ref.end()) matches += std::min(count, it->second);
  }
  for (const auto& entry : ref) ref_count += entry.second;
  statistics.push_back(ref.empty() ? 0 : hyp_count);
  statistics.push_back(ref_count);
  statistics.push_back(matches);
}

std::vector<int64_t> match_statistics(const SegmentNgrams& hyp, const SegmentNgrams& ref) {
  std::vector<int64_t> statistics;
  for (size_t n = 0; n < hyp.chars.size(); ++n) append_match_statistics(hyp.chars[n], ref.chars[n], statistics);
  for (size_t n = 0; n < hyp.words.size(); ++n) append_match_statistics(hyp.words[n], ref.words[n], statistics);
  return statistics;
}

// sacreBLEU's CHRF._compute_f_score, operation for operation.
double f_score(const std::vector<int64_t>& statistics, const ChrfOptions& options) {
  constexpr double kEps = 1e-16;
  const int order = options.char_order + options.word_order;
  const double factor = static_cast<double>(options.beta) * options.beta;
  double eps_score = 0.0, precision_sum = 0.0, recall_sum = 0.0;
  int effective_order = 0;
  for (int i = 0; i < order; ++i) {
    const int64_t n_hyp = statistics[3 * i], n_ref = statistics[3 * i + 1], n_match = statistics[3 * i + 2];
    const double precision = n_hyp > 0 ? static_cast<double>(n_match) / static_cast<double>(n_hyp) : kEps;
    const double recall = n_ref > 0 ? static_cast<double>(n_match) / static_cast<double>(n_ref) : kEps;
    const double denominator = factor * precision + recall;
    eps_score += denominator > 0 ? (1 + factor) * precision * recall / denominator : kEps;
    if (n_hyp > 0 && n_ref > 0) {
      precision_sum += precision;
      recall_sum += recall;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * eps_score / order;
  if (effective_order == 0) return 0.0;
  const double precision = precision_sum / effective_order, recall = recall_sum / effective_order;
  if (precision + recall == 0.0) return 0.0;
  double score = (1 + factor) * precision * recall;
  score /= factor * precision + recall;
  return 100 * score;
}

void check_options(const ChrfOptions& options) {
  MIXSEQ_CHECK(options.char_order >= 0 && options.word_order >= 0 && options.char_order + options.word_order > 0,
               "chrF needs char_order >= 0, word_order >= 0 and at least one n-gram order; got char_order=",
               options.char_order, ", word_order=", options.word_order, " (sacreBLEU's chrF2: 6 and 0)");
  MIXSEQ_CHECK(options.beta >= 0, "chrF beta must be >= 0, got ", options.beta);
}

}  // namespace

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const ChrfOptions& options) {
  check_options(options);
  check_reference_streams(hypotheses, references);
  ChrfScore result;
  result.num_refs = static_cast<int>(references.size());
  result.statistics.assign(3 * static_cast<size_t>(options.char_order + options.word_order), 0);
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    std::vector<SegmentNgrams> refs;
    for (const std::string* ref : segment_references(references, i)) refs.push_back(extract_ngrams(*ref, options));
    // The first reference with the strictly best F-score wins.
    const SegmentNgrams hyp = extract_ngrams(hypotheses[i], options);
    std::vector<int64_t> best;
    double best_f = -1.0;
    for (const auto& ref : refs) {
      std::vector<int64_t> statistics = match_statistics(hyp, ref);
      const double f = f_score(statistics, options);
      if (f > best_f) {
        best_f = f;
        best = std::move(statistics);
      }
    }
    for (size_t k = 0; k < best.size(); ++k) result.statistics[k] += best[k];
  }
  result.score = f_score(result.statistics, options);
  return result;
}

ChrfScore sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                        const ChrfOptions& options) {
  std::vector<std::vector<std::string>> streams;
  for (const auto& ref : references) streams.push_back({ref});
  return corpus_chrf({hypothesis}, streams, options);
}

std::string chrf_name(const ChrfOptions& options) {
  return "chrF" + std::to_string(options.beta) + std::string(static_cast<size_t>(std::max(options.word_order, 0)), '+');
}

std::vector<SignatureField> chrf_signature(const ChrfOptions& options, int num_refs) {
  return {
      {"nrefs", "#", std::to_string(num_refs)},
      {"case", "c", options.lowercase ? "lc" : "mixed"},
      {"eff", "e", options.eps_smoothing ? "no" : "yes"},
      {"nc", "nc", std::to_string(options.char_order)},
      {"nw", "nw", std::to_string(options.word_order)},
      {"space", "s", options.whitespace ? "yes" : "no"},
      {"version", "v", signature_version()},
  };
}

ScoreReport chrf_report(const ChrfScore& score, const ChrfOptions& options) {
  return {chrf_name(options), score.score, chrf_signature(options, score.num_refs), ""};
}

}  // namespace mixseq
