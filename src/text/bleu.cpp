#include "mixseq/text/bleu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <unordered_map>
#include <utility>

#include "mixseq/text/lowercase.h"
#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"
#include "text/reference_streams.h"

namespace mixseq {
namespace {

// The only place that names every smoothing method.
constexpr std::array<std::pair<std::string_view, BleuSmoothing>, 4> kSmoothingNames = {{
    {"none", BleuSmoothing::kNone},
    {"floor", BleuSmoothing::kFloor},
    {"add-k", BleuSmoothing::kAddK},
    {"exp", BleuSmoothing::kExp},
}};

// Chen & Cherry 2014 (W14-3346), the values sacreBLEU uses when --smooth-value is not given.
constexpr double kDefaultFloor = 0.1;
constexpr double kDefaultAddK = 1.0;

std::optional<double> default_smooth_value(BleuSmoothing smoothing) {
  if (smoothing == BleuSmoothing::kFloor) return kDefaultFloor;
  if (smoothing == BleuSmoothing::kAddK) return kDefaultAddK;
  return std::nullopt;
}

// N-gram -> count for one order; an n-gram is its tokens joined by ' ' (tokens hold no whitespace).
using NgramCounts = std::unordered_map<std::string, int64_t>;
using NgramsByOrder = std::array<NgramCounts, kBleuMaxOrder>;

// sacreBLEU's _preprocess_segment: lowercase, rstrip, tokenize.
std::string preprocess(const std::string& segment, const BleuOptions& options) {
  const std::string text = options.lowercase ? lowercase(segment) : segment;
  return bleu_tokenize(rstrip_whitespace(text), options.tokenizer);
}

// helpers.extract_all_word_ngrams: n-grams of orders 1..4 of the whitespace-split tokens.
NgramsByOrder extract_ngrams(const std::string& tokenized, int64_t& length) {
  const std::vector<std::string_view> tokens = split_whitespace(tokenized);
  length = static_cast<int64_t>(tokens.size());
  NgramsByOrder ngrams;
  for (size_t n = 1; n <= kBleuMaxOrder; ++n) {
    for (size_t i = 0; i + n <= tokens.size(); ++i) {
      std::string key(tokens[i]);
      for (size_t j = i + 1; j < i + n; ++j) (key += ' ') += tokens[j];
      ++ngrams[n - 1][key];
    }
  }
  return ngrams;
}

// Sufficient statistics of a corpus (or one segment), summed over segments.
struct BleuStats {
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  std::array<int64_t, kBleuMaxOrder> counts{};
  std::array<int64_t, kBleuMaxOrder> totals{};
};

// sacreBLEU's _get_closest_ref_len: the reference length nearest the hypothesis length, the
// shorter on ties.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t best_diff = -1, best_len = -1;
  for (int64_t ref_len : ref_lens) {
    const int64_t diff = std::abs(hyp_len - ref_len);
    if (best_diff == -1 || diff < best_diff || (diff == best_diff && ref_len < best_len)) {
      best_diff = diff;
      best_len = ref_len;
    }
  }
  return best_len;
}

// Adds one segment's statistics to `stats`; `refs` holds the segment's non-empty references.
void add_segment(const std::string& hypothesis, const std::vector<const std::string*>& refs,
                 const BleuOptions& options, BleuStats& stats) {
  NgramsByOrder max_ref_ngrams;
  std::vector<int64_t> ref_lens;
  for (const std::string* ref : refs) {
    int64_t length = 0;
    NgramsByOrder ngrams = extract_ngrams(preprocess(*ref, options), length);
    ref_lens.push_back(length);
    for (size_t n = 0; n < kBleuMaxOrder; ++n)
      for (const auto& [ngram, count] : ngrams[n]) {
        int64_t& best = max_ref_ngrams[n][ngram];
        best = std::max(best, count);
      }
  }
  int64_t hyp_len = 0;
  const NgramsByOrder hyp_ngrams = extract_ngrams(preprocess(hypothesis, options), hyp_len);
  stats.sys_len += hyp_len;
  stats.ref_len += closest_ref_len(hyp_len, ref_lens);
  for (size_t n = 0; n < kBleuMaxOrder; ++n) {
    for (const auto& [ngram, count] : hyp_ngrams[n]) {
      stats.totals[n] += count;
      const auto ref = max_ref_ngrams[n].find(ngram);
      if (ref != max_ref_ngrams[n].end()) stats.counts[n] += std::min(count, ref->second);
    }
  }
}

// sacreBLEU's my_log: log, with log(0) floored to a large negative number instead of -inf.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// sacreBLEU's BLEU.compute_bleu, operation for operation, so that scores agree to the last bit.
BleuScore compute_bleu(const BleuStats& stats, const BleuOptions& options, int num_refs) {
  BleuScore result;
  result.counts = stats.counts;
  result.totals = stats.totals;
  result.sys_len = stats.sys_len;
  result.ref_len = stats.ref_len;
  result.num_refs = num_refs;
  result.ratio = stats.ref_len != 0 ? static_cast<double>(stats.sys_len) / static_cast<double>(stats.ref_len) : 0.0;
  if (stats.sys_len < stats.ref_len) {
    result.bp = stats.sys_len > 0
                    ? std::exp(1.0 - static_cast<double>(stats.ref_len) / static_cast<double>(stats.sys_len))
                    : 0.0;
  } else {
    result.bp = 1.0;
  }
  // No match at any order: BLEU is 0 without smoothing (sacreBLEU #141).
  if (std::all_of(stats.counts.begin(), stats.counts.end(), [](int64_t c) { return c == 0; })) return result;

  const double smooth_value = options.smooth_value.value_or(default_smooth_value(options.smoothing).value_or(0.0));
  double exp_denominator = 1.0;
  int effective_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    double correct = static_cast<double>(stats.counts[n - 1]);
    double total = static_cast<double>(stats.totals[n - 1]);
    if (options.smoothing == BleuSmoothing::kAddK && n > 1) {
      correct += smooth_value;
      total += smooth_value;
    }
    if (total == 0.0) break;
    if (options.effective_order) effective_order = n;
    double& precision = result.precisions[n - 1];
    if (correct == 0.0) {
      if (options.smoothing == BleuSmoothing::kExp) {
        exp_denominator *= 2.0;
        precision = 100.0 / (exp_denominator * total);
      } else if (options.smoothing == BleuSmoothing::kFloor) {
        precision = 100.0 * smooth_value / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < effective_order; ++n) log_sum += floored_log(result.precisions[n]);
  result.score = result.bp * std::exp(log_sum / effective_order);
  return result;
}

}  // namespace

std::string_view bleu_smoothing_name(BleuSmoothing smoothing) {
  for (const auto& [name, value] : kSmoothingNames)
    if (value == smoothing) return name;
  throw Error(str_cat("unknown BleuSmoothing value ", static_cast<int>(smoothing)));
}

BleuSmoothing parse_bleu_smoothing(std::string_view name) {
  std::string known;
  for (const auto& [known_name, value] : kSmoothingNames) {
    if (known_name == name) return value;
    known += known.empty() ? "" : ", ";
    known += known_name;
  }
  throw Error(str_cat("unknown BLEU smoothing method '", name, "'; known: ", known));
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const BleuOptions& options) {
  check_reference_streams(hypotheses, references);
  BleuStats stats;
  for (size_t i = 0; i < hypotheses.size(); ++i) add_segment(hypotheses[i], segment_references(references, i), options, stats);
  return compute_bleu(stats, options, static_cast<int>(references.size()));
}

BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        const BleuOptions& options) {
  std::vector<std::vector<std::string>> streams;
  for (const auto& ref : references) streams.push_back({ref});
  return corpus_bleu({hypothesis}, streams, options);
}

std::vector<SignatureField> bleu_signature(const BleuOptions& options, int num_refs) {
  std::string smooth(bleu_smoothing_name(options.smoothing));
  if (const auto value = default_smooth_value(options.smoothing))
    smooth += "[" + format_decimal(options.smooth_value.value_or(*value), 2) + "]";
  return {
      {"nrefs", "#", std::to_string(num_refs)},
      {"case", "c", options.lowercase ? "lc" : "mixed"},
      {"eff", "e", options.effective_order ? "yes" : "no"},
      {"tok", "tok", std::string(bleu_tokenizer_name(options.tokenizer))},
      {"smooth", "s", smooth},
      {"version", "v", signature_version()},
  };
}

ScoreReport bleu_report(const BleuScore& score, const BleuOptions& options) {
  std::string verbose;
  for (double precision : score.precisions) verbose += (verbose.empty() ? "" : "/") + format_decimal(precision, 1);
  verbose += " (BP = " + format_decimal(score.bp, 3) + " ratio = " + format_decimal(score.ratio, 3) +
             " hyp_len = " + std::to_string(score.sys_len) + " ref_len = " + std::to_string(score.ref_len) + ")";
  return {"BLEU", score.score, bleu_signature(options, score.num_refs), verbose};
}

}  // namespace mixseq
