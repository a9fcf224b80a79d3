// Printing scores the way sacreBLEU 2.x prints them (sacrebleu/metrics/base.py): the signature
// that records how a score was computed, the one-line result, --score-only and --format json.
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

namespace mixseq {

// The "version" field of every signature, e.g. "2.x+mixseq-0.1.0": mixseq's own implementation
// of the sacreBLEU 2.x definitions, at this mixseq version. It is deliberately not a sacreBLEU
// release number, which would claim the score came from that program (docs/scoring.md).
std::string signature_version();

// One "key:value" field of a signature.
struct SignatureField {
  std::string key;        // long name, e.g. "nrefs", "case", "tok"
  std::string short_key;  // sacreBLEU's --short name, e.g. "#", "c", "tok"
  std::string value;      // e.g. "1", "mixed", "13a"
};

// A score as sacreBLEU reports it.
struct ScoreReport {
  std::string name;                       // "BLEU", "chrF2", "chrF2++"
  double score = 0.0;                     // on sacreBLEU's 0..100 scale
  std::vector<SignatureField> signature;  // in sacreBLEU's order, "version" last
  std::string verbose;                    // BLEU's "52.1/26.4/14.3/7.9 (BP = ...)"; empty for chrF
};

// "nrefs:1|case:mixed|...|version:..." ("#:1|c:mixed|..." with short_keys).
std::string format_signature(const std::vector<SignatureField>& signature, bool short_keys);

// sacreBLEU's text line: "BLEU|nrefs:1|...|version:... = 20.34 52.1/26.4/14.3/7.9 (BP = ...)",
// the score with `width` decimals (>= 0).
std::string format_score_line(const ScoreReport& report, int width, bool short_signature);

// Python's f'{value:.{decimals}f}' (decimals >= 0); with the score, what --score-only prints.
std::string format_decimal(double value, int decimals);

// sacreBLEU's JSON object (json.dumps(indent=1)): name, score rounded to `width` decimals,
// signature, verbose_score (when there is one), then every signature field as a string.
std::string format_score_json(const ScoreReport& report, int width);

// Python's repr() of a finite float, which is how json.dumps writes numbers: the shortest digits
// that read back to the same double, "20.3", "100.0", "1e-05".
std::string python_float_repr(double value);

}  // namespace mixseq
