// BLEU (Papineni et al. 2002) computed exactly as sacreBLEU 2.x computes it (Post 2018;
// sacrebleu/metrics/bleu.py): every segment is lowercased (optionally), stripped of trailing
// whitespace and tokenized; its n-grams (n = 1..4) are clipped against the most frequent
// occurrence in any reference; matches, n-gram totals, hypothesis lengths and closest reference
// lengths are summed over the corpus; the score is the brevity penalty times the geometric mean
// of the smoothed n-gram precisions, on a 0..100 scale.
//
// Inputs follow sacreBLEU's API, BLEU.corpus_score(hypotheses, [refs_1, refs_2, ...]): one
// hypothesis per segment, and one stream per reference set with one string per segment. An empty
// reference string means "this set has no reference for this segment" (the signature then says
// nrefs:var); a segment whose references are all empty is an error, as in sacreBLEU. Lines are
// not stripped here: sacreBLEU's command line strips them when it reads files
// (mixseq/text/scoring_input.h), its API does not.
// All functions are pure and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mixseq/text/sacrebleu_tokenizer.h"
#include "mixseq/text/score_report.h"

namespace mixseq {

constexpr int kBleuMaxOrder = 4;  // n-gram orders 1..4, sacreBLEU's MAX_NGRAM_ORDER

// How precisions with no matches are kept from zeroing the geometric mean (Chen & Cherry 2014).
enum class BleuSmoothing {
  kNone,   // no smoothing: one order without matches gives BLEU 0
  kFloor,  // "floor", method 1: precision = smooth_value / total for orders without matches
  kAddK,   // "add-k", method 2: adds smooth_value to matches and totals of orders 2..4
  kExp,    // "exp", method 3 (mteval-v13a.pl, sacreBLEU's default): the k-th order without
           // matches gets precision 1 / (2^k * total)
};

// sacreBLEU's names: "none", "floor", "add-k", "exp".
std::string_view bleu_smoothing_name(BleuSmoothing smoothing);
// The method with that name; throws mixseq::Error listing the known names otherwise.
BleuSmoothing parse_bleu_smoothing(std::string_view name);

struct BleuOptions {
  BleuTokenizer tokenizer = BleuTokenizer::k13a;  // --tokenize; k13a is the WMT standard
  bool lowercase = false;                         // -lc: Python's str.lower() before tokenizing
  BleuSmoothing smoothing = BleuSmoothing::kExp;  // --smooth-method; kNone disables smoothing
  std::optional<double> smooth_value;             // --smooth-value for floor (default 0.1) and
                                                  // add-k (default 1); the other methods ignore it
  bool effective_order = false;  // average log precisions only over the orders that have
                                 // hypothesis n-grams; sacreBLEU's --sentence-level turns it on
                                 // (short segments would score 0 otherwise)
};

struct BleuScore {
  double score = 0.0;                           // BLEU, 0..100
  std::array<int64_t, kBleuMaxOrder> counts{};  // clipped n-gram matches per order (before add-k)
  std::array<int64_t, kBleuMaxOrder> totals{};  // hypothesis n-grams per order (before add-k)
  std::array<double, kBleuMaxOrder> precisions{};  // smoothed precisions in percent; 0 past the
                                                   // first order without hypothesis n-grams
  double bp = 0.0;       // brevity penalty: exp(1 - ref_len / sys_len) when sys_len < ref_len, else 1
  double ratio = 0.0;    // sys_len / ref_len (0 when ref_len is 0)
  int64_t sys_len = 0;   // hypothesis tokens
  int64_t ref_len = 0;   // per segment, the reference length closest to the hypothesis length
                         // (the shorter one on ties), summed
  int num_refs = 0;      // references per segment: one per stream, empty ones included
};

// Corpus BLEU of `hypotheses` against `references` (see above for the layout).
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const BleuOptions& options);

// BLEU of one segment, as sacreBLEU's BLEU.sentence_score(hypothesis, references). For
// sentence-level scores set options.effective_order, as sacreBLEU's --sentence-level does.
BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        const BleuOptions& options);

// sacreBLEU's BLEU signature: nrefs, case, eff, tok, smooth, version.
std::vector<SignatureField> bleu_signature(const BleuOptions& options, int num_refs);

// The report sacreBLEU prints: name "BLEU", the score, the signature and the verbose part
// "52.1/26.4/14.3/7.9 (BP = 1.000 ratio = 1.000 hyp_len = 10 ref_len = 10)".
ScoreReport bleu_report(const BleuScore& score, const BleuOptions& options);

}  // namespace mixseq
