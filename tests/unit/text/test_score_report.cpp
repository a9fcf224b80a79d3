#include "mixseq/text/score_report.h"

#include <gtest/gtest.h>

#include <string>

#include "mixseq/text/bleu.h"
#include "mixseq/text/chrf.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Replaces every "{version}" with signature_version().
std::string report_with_version(std::string text) {
  const std::string placeholder = "{version}";
  for (size_t pos; (pos = text.find(placeholder)) != std::string::npos;)
    text.replace(pos, placeholder.size(), signature_version());
  return text;
}

TEST(ScoreReport, SignatureVersionNamesMixseqNotASacrebleuRelease) {
  EXPECT_EQ(signature_version().rfind("2.x+mixseq-", 0), 0u) << signature_version();
}

// Expected strings are Python's repr() of the same doubles.
TEST(ScoreReport, PythonFloatRepr) {
  EXPECT_EQ(python_float_repr(20.3), "20.3");
  EXPECT_EQ(python_float_repr(100.0), "100.0");
  EXPECT_EQ(python_float_repr(0.0), "0.0");
  EXPECT_EQ(python_float_repr(1e-05), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(12.5), "12.5");
  EXPECT_EQ(python_float_repr(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(python_float_repr(1e+16), "1e+16");
  EXPECT_EQ(python_float_repr(9999999999999998.0), "9999999999999998.0");
  EXPECT_EQ(python_float_repr(1.5e-07), "1.5e-07");
  EXPECT_EQ(python_float_repr(37.99184), "37.99184");
  EXPECT_EQ(python_float_repr(9.313225746154785e-10), "9.313225746154785e-10");
}

TEST(ScoreReport, DecimalsRoundLikePython) {
  EXPECT_EQ(format_decimal(37.99184, 1), "38.0");
  EXPECT_EQ(format_decimal(0.125, 2), "0.12");  // exact tie: half to even, as f'{0.125:.2f}'
  EXPECT_EQ(format_decimal(2.675, 2), "2.67");  // 2.675 is 2.67499999... in binary
  EXPECT_EQ(format_decimal(100.0, 0), "100");
  EXPECT_THROW(format_decimal(1.0, -1), Error);
}

// Expected JSON is sacreBLEU 2.x's Score.format(width, signature=..., is_json=True) for the
// same scores (json.dumps with indent=1), and its --short text line.
TEST(ScoreReport, JsonAndShortLineMatchSacrebleu) {
  const BleuOptions bleu_options;
  const BleuScore bleu = corpus_bleu({"the cat sat on the mat"}, {{"the cat is on the mat"}}, bleu_options);
  EXPECT_EQ(format_score_json(bleu_report(bleu, bleu_options), 1), report_with_version(
      "{\n \"name\": \"BLEU\",\n \"score\": 38.0,\n \"signature\": \"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version}\",\n \"verbose_score\": \"83.3/60.0/25.0/16.7 (BP = 1.000 ratio = 1.000 hyp_len = 6 ref_len = 6)\",\n \"nrefs\": \"1\",\n \"case\": \"mixed\",\n \"eff\": \"no\",\n \"tok\": \"13a\",\n \"smooth\": \"exp\",\n \"version\": \"{version}\"\n}"));
  EXPECT_EQ(format_decimal(bleu.score, 3), "37.992");

  ChrfOptions chrf_options;
  chrf_options.word_order = 2;
  const ChrfScore chrf = corpus_chrf({"the cat sat on the mat"}, {{"the cat is on the mat"}}, chrf_options);
  const ScoreReport report = chrf_report(chrf, chrf_options);
  EXPECT_EQ(format_score_json(report, 2), report_with_version(
      "{\n \"name\": \"chrF2++\",\n \"score\": 66.36,\n \"signature\": \"nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:{version}\",\n \"nrefs\": \"1\",\n \"case\": \"mixed\",\n \"eff\": \"yes\",\n \"nc\": \"6\",\n \"nw\": \"2\",\n \"space\": \"no\",\n \"version\": \"{version}\"\n}"));
  EXPECT_EQ(format_score_line(report, 2, true), report_with_version("chrF2++|#:1|c:mixed|e:yes|nc:6|nw:2|s:no|v:{version} = 66.36"));
}

}  // namespace
}  // namespace mixseq
