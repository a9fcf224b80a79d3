// BLEU and chrF from files, as `mixseq bleu` / `mixseq chrf` read them (text/scoring_input.h,
// text/bleu.h, text/chrf.h). Input: "<options byte><hypotheses>\n%%\n<reference 1>[\n%%\n<reference 2>]".
// Bad files get mixseq::Error; scores that come back are finite and within 0..100 (up to rounding).
#include <cmath>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/chrf.h"
#include "mixseq/text/scoring_input.h"

using namespace mixseq;
using fuzz::fuzz_check;

namespace {

// A perfect score may exceed 100 by rounding, as in sacreBLEU: exp(log(100.0)) = 100.00000000000004.
void check_score(double score, const char* what) {
  fuzz_check(std::isfinite(score) && score >= 0 && score <= 100 * (1 + 1e-12), what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const auto parts = fuzz::split_parts(fuzz::as_text(data + 1, size - 1), 3);
  std::vector<std::string> references;
  for (size_t i = 1; i < parts.size(); ++i)
    references.push_back(fuzz::write_scratch_file("ref" + std::to_string(i), parts[i]));
  const std::string hypotheses = fuzz::write_scratch_file("hyp", parts[0]);

  fuzz::expect_clear_errors([&] {
    const ScoringInput input = read_scoring_input(hypotheses, references);
    BleuOptions bleu;
    bleu.tokenizer = static_cast<BleuTokenizer>(flags % 4);
    bleu.lowercase = flags & 4;
    bleu.smoothing = static_cast<BleuSmoothing>((flags >> 3) % 4);
    bleu.effective_order = flags & 32;
    fuzz::expect_clear_errors([&] {
      const BleuScore score = corpus_bleu(input.hypotheses, input.references, bleu);
      check_score(score.score, "corpus BLEU is within 0..100");
      bleu_report(score, bleu);
    });
    ChrfOptions chrf;
    chrf.word_order = (flags >> 6) % 3;
    chrf.lowercase = flags & 4;
    chrf.whitespace = flags & 32;
    chrf.eps_smoothing = flags & 1;
    fuzz::expect_clear_errors([&] {
      const ChrfScore score = corpus_chrf(input.hypotheses, input.references, chrf);
      check_score(score.score, "corpus chrF is within 0..100");
      chrf_report(score, chrf);
    });
    if (input.hypotheses.empty()) return;
    std::vector<std::string> first_references;
    for (const auto& stream : input.references) first_references.push_back(stream.at(0));
    fuzz::expect_clear_errors([&] {
      check_score(sentence_bleu(input.hypotheses[0], first_references, bleu).score, "sentence BLEU is within 0..100");
    });
    fuzz::expect_clear_errors([&] {
      check_score(sentence_chrf(input.hypotheses[0], first_references, chrf).score, "sentence chrF is within 0..100");
    });
  });
  return 0;
}
