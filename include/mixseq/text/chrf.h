// chrF (Popović 2015) and chrF++ (Popović 2017) computed exactly as sacreBLEU 2.x computes them
// (sacrebleu/metrics/chrf.py): character n-grams of orders 1..char_order (whitespace removed
// unless asked for) and word n-grams of orders 1..word_order are matched against each reference;
// per segment the reference with the best F-score is kept; the counts are summed over the corpus
// and turned into an F-beta score on a 0..100 scale.
//
// Inputs are laid out as for BLEU (mixseq/text/bleu.h): hypotheses, and reference streams with
// "" for a missing reference; a segment whose references are all empty is an error, as in
// sacreBLEU. Lines are not stripped here (sacreBLEU's chrF does not strip them either; its
// command line does when reading files). All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/text/score_report.h"

namespace mixseq {

struct ChrfOptions {
  int char_order = 6;          // --chrf-char-order: character n-grams of orders 1..6; 0 disables
  int word_order = 0;          // --chrf-word-order: word n-grams of orders 1..n; 2 gives chrF++;
                               // 0 disables (plain chrF)
  int beta = 2;                // --chrf-beta: recall counts beta times as much as precision
                               // (Popović 2016, W16-2341, chose 2)
  bool lowercase = false;      // --chrf-lowercase / -lc: Python's str.lower() first
  bool whitespace = false;     // --chrf-whitespace: keep whitespace inside character n-grams
  bool eps_smoothing = false;  // --chrf-eps-smoothing: average the per-order F-scores with an
                               // epsilon for empty orders (chrF++.py, Moses, NLTK); false uses
                               // sacreBLEU's default, the F-score of precision and recall averaged
                               // over the orders present in both ("eff:yes")
};

struct ChrfScore {
  double score = 0.0;  // chrF, 0..100
  // For each order, characters 1..char_order then words 1..word_order, three sums over the
  // corpus: hypothesis n-grams (counted only where the chosen reference has n-grams of that
  // order), reference n-grams, matched n-grams.
  std::vector<int64_t> statistics;
  int num_refs = 0;  // references per segment: one per stream, empty ones included
};

// Corpus chrF of `hypotheses` against `references`.
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, const ChrfOptions& options);

// chrF of one segment, as sacreBLEU's CHRF.sentence_score(hypothesis, references).
ChrfScore sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                        const ChrfOptions& options);

// "chrF2", "chrF2++" for word_order 2: sacreBLEU's name, a "+" per word order.
std::string chrf_name(const ChrfOptions& options);

// sacreBLEU's chrF signature: nrefs, case, eff, nc, nw, space, version.
std::vector<SignatureField> chrf_signature(const ChrfOptions& options, int num_refs);

// The report sacreBLEU prints for chrF (no verbose part).
ScoreReport chrf_report(const ChrfScore& score, const ChrfOptions& options);

}  // namespace mixseq
