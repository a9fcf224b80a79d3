#include "mixseq/decode/beam_search.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "mixseq/text/vocabulary.h"
#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;
using Tokens = std::vector<int64_t>;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int64_t kA = 4, kB = 5, kC = 6;  // the words of the test vocabularies
constexpr int64_t kBeamVocab = 7;              // <pad> <unk> <s> </s> a b c

// Next-token logits [V] and attention [S] (over the unpadded source) after `prefix` (the
// output tokens so far, <s> excluded). They depend only on the source and the prefix, so a
// test can score any sequence without the search.
using LogitsFn = std::function<std::vector<double>(const Tokens& source, const Tokens& prefix)>;
using AttentionFn = std::function<std::vector<double>(const Tokens& source, const Tokens& prefix)>;

// The model's state keeps each row's own source and prefix, and moves them only as select()
// says. If the search's idea of which beam is in which row drifts from what it selected, the
// model scores different prefixes than the search reports, and the checks on log_prob fail.
class ScriptedState : public IncrementalState {
 public:
  std::vector<Tokens> sources;   // per row, without padding
  std::vector<Tokens> prefixes;  // per row: tokens fed after <s>
  int64_t width = 0;             // S of the batch
  int64_t steps = 0;             // step() calls so far

  void select(const torch::Tensor& rows) override {
    if (rows.dim() != 1 || rows.scalar_type() != at::kLong) throw Error("select: rows must be [B'] int64");
    std::vector<Tokens> s, p;
    for (int64_t i = 0; i < rows.size(0); ++i) {
      const int64_t r = rows[i].item<int64_t>();
      if (r < 0 || r >= static_cast<int64_t>(sources.size())) throw Error(str_cat("select: row ", r, " out of range"));
      s.push_back(sources[r]);
      p.push_back(prefixes[r]);
    }
    sources = std::move(s);
    prefixes = std::move(p);
  }
};

class ScriptedModelImpl : public Seq2SeqModelImpl {
 public:
  ScriptedModelImpl(LogitsFn logits, AttentionFn attention, at::ScalarType logits_dtype = at::kFloat)
      : logits_(std::move(logits)), attention_(std::move(attention)), logits_dtype_(logits_dtype) {}

  torch::Tensor forward(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&) override {
    throw Error("the scripted model only decodes");
  }

  std::unique_ptr<IncrementalState> start(const torch::Tensor& source, const torch::Tensor& source_lengths) override {
    auto state = std::make_unique<ScriptedState>();
    state->width = source.size(1);
    for (int64_t b = 0; b < source.size(0); ++b) {
      Tokens row;
      for (int64_t i = 0; i < source_lengths[b].item<int64_t>(); ++i) row.push_back(source[b][i].item<int64_t>());
      state->sources.push_back(row);
      state->prefixes.emplace_back();
    }
    return state;
  }

  DecoderStep step(IncrementalState& base, const torch::Tensor& tokens) override {
    auto& state = dynamic_cast<ScriptedState&>(base);
    const int64_t rows = static_cast<int64_t>(state.sources.size());
    if (tokens.dim() != 1 || tokens.size(0) != rows) throw Error("step: one token per state row");
    step_rows.push_back(rows);
    auto logits = at::zeros({rows, kBeamVocab}, at::kDouble);            // [B, V]
    auto attention = at::zeros({rows, state.width}, at::kDouble);    // [B, S], 0 at padding
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t token = tokens[r].item<int64_t>();
      // <s> first; never </s>: an ended hypothesis must not be fed on. (Later steps may feed
      // anything to a beam at -inf, which a tiny vocabulary cannot fill.)
      if ((state.steps == 0 && token != kBosId) || token == kEosId)
        throw Error(str_cat("step ", state.steps, ": fed token ", token));
      if (state.steps > 0) state.prefixes[r].push_back(token);
      const auto l = logits_(state.sources[r], state.prefixes[r]);
      for (int64_t v = 0; v < kBeamVocab; ++v) logits[r][v] = l[v];
      if (attention_) {
        const auto a = attention_(state.sources[r], state.prefixes[r]);
        for (size_t i = 0; i < a.size(); ++i) attention[r][static_cast<int64_t>(i)] = a[i];
      }
    }
    ++state.steps;
    return {logits.to(logits_dtype_), attention_ ? attention.to(at::kFloat) : torch::Tensor()};
  }

  int64_t vocab_size() const override { return kBeamVocab; }

  std::vector<int64_t> step_rows;  // rows fed at each step() call, in order

 private:
  LogitsFn logits_;
  AttentionFn attention_;
  at::ScalarType logits_dtype_;
};

std::shared_ptr<ScriptedModelImpl> make_model(LogitsFn logits, AttentionFn attention,
                                              at::ScalarType logits_dtype = at::kFloat) {
  auto model = std::make_shared<ScriptedModelImpl>(std::move(logits), std::move(attention), logits_dtype);
  model->eval();
  return model;
}

// --- a pseudo-random model: every (source, prefix) gets its own distribution ---------------

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t context_hash(const Tokens& source, const Tokens& prefix) {
  uint64_t h = 17;
  for (const auto t : source) h = mix(h ^ static_cast<uint64_t>(t));
  h = mix(h ^ 0xabcdefULL);
  for (const auto t : prefix) h = mix(h ^ static_cast<uint64_t>(t));
  return h;
}

// Logits k/64 with |k| <= 192: exact in bf16 (8 significant bits), so a bf16 model gives the
// same numbers.
std::vector<double> hashed_logits(const Tokens& source, const Tokens& prefix) {
  const uint64_t h = context_hash(source, prefix);
  std::vector<double> logits(kBeamVocab);
  for (int64_t v = 0; v < kBeamVocab; ++v)
    logits[v] = static_cast<double>(static_cast<int64_t>(mix(h + static_cast<uint64_t>(v)) % 385) - 192) / 64.0;
  return logits;
}

// Positive weights normalized over the real source positions.
std::vector<double> hashed_attention(const Tokens& source, const Tokens& prefix) {
  const uint64_t h = context_hash(source, prefix) ^ 0x5555ULL;
  std::vector<double> a(source.size());
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] = 1.0 + static_cast<double>(mix(h + i) % 1000) / 250.0;
  for (auto& x : a) x /= sum;
  return a;
}

// --- scoring a given sequence the way the search should ------------------------------------

std::vector<double> log_softmax(const std::vector<double>& logits) {
  double top = -kInfinity;
  for (const auto x : logits) top = std::max(top, x);
  double sum = 0;
  for (const auto x : logits) sum += std::exp(x - top);
  std::vector<double> out;
  for (const auto x : logits) out.push_back(x - top - std::log(sum));
  return out;
}

struct Scored {
  double log_prob = 0;
  double score = 0;
  int64_t length = 0;
};

// Teacher-forced: log P(tokens [</s>] | source), then lp and cp as Wu et al. 2016 §7 define them.
Scored score_sequence(const LogitsFn& logits, const AttentionFn& attention, const Tokens& source, const Tokens& tokens,
                      bool with_eos, const BeamSearchOptions& o) {
  Scored s;
  std::vector<double> coverage(source.size(), 0.0);
  Tokens prefix;
  const size_t steps = tokens.size() + (with_eos ? 1 : 0);
  for (size_t j = 0; j < steps; ++j) {
    const int64_t next = j < tokens.size() ? tokens[j] : kEosId;
    s.log_prob += log_softmax(logits(source, prefix))[next];
    if (attention) {
      const auto a = attention(source, prefix);
      for (size_t i = 0; i < a.size(); ++i) coverage[i] += a[i];
    }
    prefix.push_back(next);
  }
  s.length = static_cast<int64_t>(steps);
  double cp = 0;
  for (const auto c : coverage)
    if (c > 0) cp += std::log(std::min(c, 1.0));
  const double lp = std::pow((o.length_penalty_const + s.length) / (o.length_penalty_const + 1), o.length_penalty);
  s.score = s.log_prob / lp + o.coverage_penalty * cp;
  return s;
}

// Every output of min_len..max_len words from {<unk>, a, b, c} followed by </s>, best first.
std::vector<std::pair<Tokens, Scored>> enumerate_all(const LogitsFn& logits, const AttentionFn& attention,
                                                      const Tokens& source, int64_t max_len,
                                                      const BeamSearchOptions& o) {
  std::vector<std::pair<Tokens, Scored>> all;
  std::vector<Tokens> layer = {{}};
  for (int64_t length = 0; length <= max_len; ++length) {
    std::vector<Tokens> longer;
    for (const auto& t : layer) {
      if (length >= o.min_len) all.emplace_back(t, score_sequence(logits, attention, source, t, true, o));
      for (const int64_t w : {kUnkId, kA, kB, kC}) {
        longer.push_back(t);
        longer.back().push_back(w);
      }
    }
    layer = std::move(longer);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& x, const auto& y) { return x.second.score > y.second.score; });
  return all;
}

// [B, S] right-padded sources and their lengths.
std::pair<torch::Tensor, torch::Tensor> make_batch(const std::vector<Tokens>& sources) {
  int64_t width = 0;
  for (const auto& s : sources) width = std::max<int64_t>(width, static_cast<int64_t>(s.size()));
  auto source = at::full({static_cast<int64_t>(sources.size()), width}, kPadId, at::kLong);
  auto lengths = at::zeros({static_cast<int64_t>(sources.size())}, at::kLong);
  for (size_t b = 0; b < sources.size(); ++b) {
    lengths[b] = static_cast<int64_t>(sources[b].size());
    for (size_t i = 0; i < sources[b].size(); ++i) source[b][i] = sources[b][i];
  }
  return {source, lengths};
}

std::vector<std::vector<Hypothesis>> search(ScriptedModelImpl& model, const std::vector<Tokens>& sources,
                                            const BeamSearchOptions& o) {
  const auto [source, lengths] = make_batch(sources);
  return beam_search(model, source, lengths, o);
}

const std::vector<Tokens> kSources = {{kA, kEosId}, {kC, kB, kA, kA, kEosId}, {kB, kC, kEosId},
                                      {kA, kA, kC, kB, kC, kB, kA, kEosId}, {kB, kEosId}};

// Each hypothesis's numbers are what the model gives its tokens when fed them one by one.
void expect_consistent(const LogitsFn& logits, const AttentionFn& attention, const Tokens& source,
                       const std::vector<Hypothesis>& hypotheses, const BeamSearchOptions& o) {
  for (const auto& h : hypotheses) {
    const bool with_eos = h.length == static_cast<int64_t>(h.tokens.size()) + 1;
    EXPECT_TRUE(with_eos || h.length == static_cast<int64_t>(h.tokens.size()));
    const auto expected = score_sequence(logits, attention, source, h.tokens, with_eos, o);
    EXPECT_NEAR(h.log_prob, expected.log_prob, 1e-4);
    EXPECT_NEAR(h.score, expected.score, 1e-4);
    EXPECT_EQ(h.length, expected.length);
    EXPECT_EQ(std::count(h.tokens.begin(), h.tokens.end(), kEosId), 0);
  }
}

// --- exhaustive best ------------------------------------------------------------------------

struct PenaltyCase {
  double length_penalty;
  double coverage_penalty;
};

class ExhaustiveSearch : public ::testing::TestWithParam<PenaltyCase> {};

// With K larger than every output of up to 3 words (1 + 4 + 16 + 64 = 85), beam search keeps
// every prefix alive and so must return exactly the enumerated outputs, ranked the same.
TEST_P(ExhaustiveSearch, LargeBeamReturnsEveryOutputRankedAsEnumerated) {
  BeamSearchOptions o;
  o.beam_size = 128;
  o.nbest = 128;
  o.max_len_b = 3;
  o.min_len = 0;
  o.length_penalty = GetParam().length_penalty;
  o.coverage_penalty = GetParam().coverage_penalty;
  auto model = make_model(hashed_logits, hashed_attention);
  const std::vector<Tokens> sources = {kSources[0], kSources[1], kSources[2]};
  const auto results = search(*model, sources, o);
  ASSERT_EQ(results.size(), sources.size());
  for (size_t b = 0; b < sources.size(); ++b) {
    const auto all = enumerate_all(hashed_logits, hashed_attention, sources[b], 3, o);
    ASSERT_EQ(all.size(), 85u);
    ASSERT_EQ(results[b].size(), all.size()) << "sentence " << b;
    ASSERT_GT(all[0].second.score - all[1].second.score, 1e-3) << "the test needs a unique best";
    EXPECT_EQ(results[b][0].tokens, all[0].first) << "sentence " << b;
    std::map<Tokens, double> expected;
    for (const auto& [tokens, scored] : all) expected[tokens] = scored.score;
    for (size_t i = 0; i < results[b].size(); ++i) {
      const auto& h = results[b][i];
      ASSERT_EQ(expected.count(h.tokens), 1u);
      EXPECT_NEAR(h.score, expected[h.tokens], 1e-4);
      expected.erase(h.tokens);  // each output once
      if (i > 0) {
        EXPECT_GE(results[b][i - 1].score, h.score);
      }
    }
    expect_consistent(hashed_logits, hashed_attention, sources[b], results[b], o);
  }
}

INSTANTIATE_TEST_SUITE_P(Penalties, ExhaustiveSearch,
                         ::testing::Values(PenaltyCase{0.0, 0.0}, PenaltyCase{0.6, 0.0}, PenaltyCase{0.6, 0.1},
                                           PenaltyCase{1.5, 0.3}));

// --- greedy ---------------------------------------------------------------------------------

TEST(GreedySearch, FollowsTheArgmaxPath) {
  BeamSearchOptions o;
  o.beam_size = 1;
  o.max_len_b = 6;
  auto model = make_model(hashed_logits, hashed_attention);
  const auto results = search(*model, kSources, o);
  for (size_t b = 0; b < kSources.size(); ++b) {
    Tokens path;
    for (int64_t step = 0;; ++step) {
      auto lp = log_softmax(hashed_logits(kSources[b], path));
      lp[kPadId] = lp[kBosId] = -kInfinity;
      if (step < o.min_len) lp[kEosId] = -kInfinity;
      const int64_t best = std::max_element(lp.begin(), lp.end()) - lp.begin();
      if (best == kEosId || step == o.max_len_b) break;
      path.push_back(best);
    }
    ASSERT_EQ(results[b].size(), 1u);
    EXPECT_EQ(results[b][0].tokens, path) << "sentence " << b;
    expect_consistent(hashed_logits, hashed_attention, kSources[b], results[b], o);
  }
}

// A Markov table on the last token (probabilities; -inf = never):
//   after <s>: a 0.5   b 0.4   </s> 0.1
//   after a:   a 0.35  b 0.25  </s> 0.4
//   after b:   a 0.05  b 0.05  </s> 0.9
// Greedy takes a (0.5), then </s> (0.4): P = 0.2. Beam 2 keeps a and b; its step-1
// candidates are b </s> 0.36, a </s> 0.2, a a 0.175, ...: the two best end, so it stops with
// b </s> (0.36) best.
std::vector<double> table_logits(const Tokens&, const Tokens& prefix) {
  std::vector<double> p(kBeamVocab, 0.0);
  const int64_t last = prefix.empty() ? kBosId : prefix.back();
  if (last == kBosId) p[kA] = 0.5, p[kB] = 0.4, p[kEosId] = 0.1;
  if (last == kA) p[kA] = 0.35, p[kB] = 0.25, p[kEosId] = 0.4;
  if (last == kB) p[kA] = 0.05, p[kB] = 0.05, p[kEosId] = 0.9;
  std::vector<double> logits;
  for (const auto x : p) logits.push_back(std::log(x));
  return logits;
}

// Attention by step and source length (the batch below pads the 2-token source to 3):
//   S = 2: step 0 [0.7 0.3], step 1 [0.6 0.4]
//   S = 3: step 0 [0.5 0.3 0.2], step 1 [0.5 0.3 0.2]
std::vector<double> table_attention(const Tokens& source, const Tokens& prefix) {
  if (source.size() == 2) return prefix.empty() ? std::vector<double>{0.7, 0.3} : std::vector<double>{0.6, 0.4};
  return {0.5, 0.3, 0.2};
}

TEST(BeamSearch, FindsWhatGreedyMisses) {
  BeamSearchOptions o;
  o.length_penalty = 0;
  o.coverage_penalty = 0;
  auto model = make_model(table_logits, table_attention);
  o.beam_size = 1;
  const auto greedy = search(*model, {{kA, kEosId}}, o);
  EXPECT_EQ(greedy[0][0].tokens, Tokens({kA}));
  EXPECT_NEAR(greedy[0][0].log_prob, std::log(0.2), 1e-6);
  o.beam_size = 2;
  const auto beam = search(*model, {{kA, kEosId}}, o);
  EXPECT_EQ(beam[0][0].tokens, Tokens({kB}));
  EXPECT_NEAR(beam[0][0].log_prob, std::log(0.36), 1e-6);
}

// fairseq ends only hypotheses whose </s> is among the K best candidates. With K = 2 and
// min_len 0, step 0's candidates are a 0.5, b 0.4, </s> 0.1: the empty output is third, so it
// does not end; step 1 then ends b </s> (0.36) and a </s> (0.2). Ending the empty output too
// would have filled the two places with b </s> and </s> (0.1) instead.
TEST(BeamSearch, OnlyTheFirstKCandidatesEnd) {
  BeamSearchOptions o;
  o.beam_size = 2;
  o.nbest = 2;
  o.min_len = 0;
  auto model = make_model(table_logits, table_attention);
  const auto results = search(*model, {{kA, kEosId}}, o);
  ASSERT_EQ(results[0].size(), 2u);
  EXPECT_EQ(results[0][0].tokens, Tokens({kB}));
  EXPECT_EQ(results[0][1].tokens, Tokens({kA}));
}

// --- penalties against hand-computed values -------------------------------------------------

// alpha 0.6, c 5, beta 0.1. Both outputs "b </s>" and "a </s>" have |Y| = 2 (</s> counts):
//   lp = ((5 + 2) / 6)^0.6 = 1.0969026
// Source 0 has 2 tokens, padded to 3: attention sums [0.7 + 0.6, 0.3 + 0.4, 0] = [1.3, 0.7, 0]
//   cp0 = 0.1 · (log min(1.3, 1) + log 0.7 + 0 [padding]) = 0.1 · (0 - 0.3566749) = -0.0356675
// Source 1 has 3 tokens: sums [1.0, 0.6, 0.4]
//   cp1 = 0.1 · (log 1 + log 0.6 + log 0.4) = 0.1 · (0 - 0.5108256 - 0.9162907) = -0.1427116
// score = log P / lp + cp:
//   source 0: b </s>  log 0.36 = -1.0216512 -> -1.0216512 / 1.0969026 - 0.0356675 = -0.9670640
//             a </s>  log 0.2  = -1.6094379 -> -1.6094379 / 1.0969026 - 0.0356675 = -1.5029244
//   source 1: b </s>  -> -0.9313906 - 0.1427116 = -1.0741081
//             a </s>  -> -1.4672569 - 0.1427116 = -1.6099685
TEST(BeamSearch, LengthAndCoveragePenaltiesMatchHandValues) {
  BeamSearchOptions o;
  o.beam_size = 2;
  o.nbest = 2;
  o.length_penalty = 0.6;
  o.coverage_penalty = 0.1;
  auto model = make_model(table_logits, table_attention);
  const auto results = search(*model, {{kA, kEosId}, {kA, kB, kEosId}}, o);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(results[0].size(), 2u);
  ASSERT_EQ(results[1].size(), 2u);
  EXPECT_EQ(results[0][0].tokens, Tokens({kB}));
  EXPECT_EQ(results[0][0].length, 2);
  EXPECT_NEAR(results[0][0].log_prob, -1.0216512, 1e-6);
  EXPECT_NEAR(results[0][0].score, -0.9670640, 1e-6);
  EXPECT_EQ(results[0][1].tokens, Tokens({kA}));
  EXPECT_NEAR(results[0][1].score, -1.5029244, 1e-6);
  EXPECT_NEAR(results[1][0].score, -1.0741081, 1e-6);
  EXPECT_NEAR(results[1][1].score, -1.6099685, 1e-6);
}

// c = 1, alpha 0.6, no coverage: lp = ((1 + 2) / 2)^0.6 = 1.2754245; b </s> scores
// -1.0216512 / 1.2754245 = -0.8010282.
TEST(BeamSearch, LengthPenaltyConstant) {
  BeamSearchOptions o;
  o.beam_size = 2;
  o.length_penalty = 0.6;
  o.length_penalty_const = 1.0;
  o.coverage_penalty = 0;
  auto model = make_model(table_logits, table_attention);
  const auto results = search(*model, {{kA, kEosId}}, o);
  EXPECT_NEAR(results[0][0].score, -0.8010282, 1e-6);
}

// With suppress_eos and max_len 2 greedy makes a a (0.5 · 0.35; </s> is masked after the
// softmax, so its mass still counts), with no </s>: |Y| = 2.
//   log P = log 0.5 + log 0.35 = -1.7429693; lp = (7/6)^0.6 = 1.0969026; cp0 = -0.0356675
//   score = -1.7429693 / 1.0969026 - 0.0356675 = -1.6246593
TEST(GreedySearch, PenaltiesOfAnOutputWithoutEos) {
  BeamSearchOptions o;
  o.beam_size = 1;
  o.suppress_eos = true;
  o.max_len_b = 2;
  auto model = make_model(table_logits, table_attention);
  const auto results = search(*model, {{kA, kEosId}, {kA, kB, kEosId}}, o);
  EXPECT_EQ(results[0][0].tokens, Tokens({kA, kA}));
  EXPECT_EQ(results[0][0].length, 2);
  EXPECT_NEAR(results[0][0].log_prob, -1.7429693, 1e-6);
  EXPECT_NEAR(results[0][0].score, -1.6246593, 1e-6);
}

// --- batching -------------------------------------------------------------------------------

class Batching : public ::testing::TestWithParam<int64_t> {};

TEST_P(Batching, BatchedEqualsOneByOneInInputOrder) {
  BeamSearchOptions o;
  o.beam_size = GetParam();
  o.nbest = GetParam();
  o.max_len_a = 1.5;
  o.max_len_b = 2;
  auto model = make_model(hashed_logits, hashed_attention);
  const auto batched = search(*model, kSources, o);
  const auto rows = model->step_rows;
  ASSERT_EQ(batched.size(), kSources.size());
  for (size_t b = 0; b < kSources.size(); ++b) {
    const auto alone = search(*model, {kSources[b]}, o);
    ASSERT_EQ(batched[b].size(), alone[0].size()) << "sentence " << b;
    for (size_t i = 0; i < alone[0].size(); ++i) {
      EXPECT_EQ(batched[b][i].tokens, alone[0][i].tokens) << "sentence " << b << " hypothesis " << i;
      EXPECT_NEAR(batched[b][i].score, alone[0][i].score, 1e-5);
      EXPECT_EQ(batched[b][i].length, alone[0][i].length);
    }
    expect_consistent(hashed_logits, hashed_attention, kSources[b], batched[b], o);
  }
  // Step 0 feeds one row per sentence (every beam would extend the same <s>); then K rows a
  // sentence, and finished sentences leave the batch: the rows shrink by whole sentences.
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[0], static_cast<int64_t>(kSources.size()));
  EXPECT_EQ(rows[1], static_cast<int64_t>(kSources.size()) * GetParam());
  EXPECT_LT(rows.back(), rows[1]);
  for (size_t i = 2; i < rows.size(); ++i) {
    EXPECT_LE(rows[i], rows[i - 1]);
    EXPECT_EQ(rows[i] % GetParam(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(BeamSizes, Batching, ::testing::Values(1, 2, 4));

// suppress_eos with max_len = 1 · source_length + 1: sources of 2, 4 and 3 tokens run 3, 5
// and 4 steps, so K rows leave after step 3 and K more after step 4 (step 0 feeds one row a
// sentence).
TEST_P(Batching, SuppressEosRunsEachSentenceExactlyMaxLenSteps) {
  const int64_t K = GetParam();
  BeamSearchOptions o;
  o.beam_size = K;
  o.nbest = K;
  o.suppress_eos = true;
  o.max_len_a = 1;
  o.max_len_b = 1;
  auto model = make_model(hashed_logits, hashed_attention);
  const std::vector<Tokens> sources = {{kA, kEosId}, {kB, kC, kA, kEosId}, {kC, kB, kEosId}};
  const auto results = search(*model, sources, o);
  EXPECT_EQ(model->step_rows, (std::vector<int64_t>{3, 3 * K, 3 * K, 2 * K, K}));
  for (size_t b = 0; b < sources.size(); ++b) {
    ASSERT_EQ(results[b].size(), static_cast<size_t>(K));
    for (const auto& h : results[b]) {
      EXPECT_EQ(h.tokens.size(), sources[b].size() + 1);
      EXPECT_EQ(h.length, static_cast<int64_t>(sources[b].size()) + 1);
    }
    expect_consistent(hashed_logits, hashed_attention, sources[b], results[b], o);
  }
}

// --- n-best and lengths ---------------------------------------------------------------------

TEST(BeamSearch, NbestIsBestFirstAndDistinct) {
  BeamSearchOptions o;
  o.beam_size = 5;
  o.nbest = 5;
  auto model = make_model(hashed_logits, hashed_attention);
  const auto results = search(*model, kSources, o);
  o.nbest = 1;
  const auto best = search(*model, kSources, o);
  for (size_t b = 0; b < kSources.size(); ++b) {
    ASSERT_EQ(results[b].size(), 5u);
    EXPECT_EQ(best[b].size(), 1u);
    EXPECT_EQ(results[b][0].tokens, best[b][0].tokens);
    for (size_t i = 1; i < results[b].size(); ++i) EXPECT_GE(results[b][i - 1].score, results[b][i].score);
    for (size_t i = 0; i < results[b].size(); ++i)
      for (size_t j = i + 1; j < results[b].size(); ++j) EXPECT_NE(results[b][i].tokens, results[b][j].tokens);
  }
}

// A model that never wants </s> gets it forced after max_len = floor(0.5 · S + 1) tokens:
// S = 2, 5, 6 give 2, 3, 4 tokens, hence 5 steps for the longest (4 tokens, then </s>).
TEST(BeamSearch, MaxLenForcesEosAfterMaxLenTokens) {
  const LogitsFn no_eos = [](const Tokens& s, const Tokens& p) {
    auto l = hashed_logits(s, p);
    l[kEosId] = -20;
    return l;
  };
  const std::vector<Tokens> sources = {{kA, kEosId}, {kA, kB, kC, kA, kEosId}, {kC, kC, kB, kA, kA, kEosId}};
  for (const int64_t K : {1, 3}) {
    BeamSearchOptions o;
    o.beam_size = K;
    o.nbest = K;
    o.max_len_a = 0.5;
    o.max_len_b = 1;
    auto model = make_model(no_eos, hashed_attention);
    const auto results = search(*model, sources, o);
    EXPECT_EQ(model->step_rows.size(), 5u);
    const size_t expected[] = {2, 3, 4};
    for (size_t b = 0; b < sources.size(); ++b) {
      ASSERT_EQ(results[b].size(), static_cast<size_t>(K));
      for (const auto& h : results[b]) {
        EXPECT_EQ(h.tokens.size(), expected[b]) << "K " << K << " sentence " << b;
        EXPECT_EQ(h.length, static_cast<int64_t>(expected[b]) + 1);
      }
      expect_consistent(no_eos, hashed_attention, sources[b], results[b], o);
    }
  }
}

TEST(BeamSearch, MinLenDelaysEos) {
  const LogitsFn eager_eos = [](const Tokens& s, const Tokens& p) {
    auto l = hashed_logits(s, p);
    l[kEosId] = 20;
    return l;
  };
  auto model = make_model(eager_eos, hashed_attention);
  for (const int64_t K : {1, 3}) {
    BeamSearchOptions o;
    o.beam_size = K;
    o.min_len = 0;
    EXPECT_TRUE(search(*model, {kSources[1]}, o)[0][0].tokens.empty());
    o.min_len = 2;
    EXPECT_EQ(search(*model, {kSources[1]}, o)[0][0].tokens.size(), 2u);
  }
}

// --- dtypes and errors ----------------------------------------------------------------------

// Under autocast a model's logits come in bf16; the search takes log_softmax in fp32. The
// hashed logits are exact in bf16, so the results must not change.
TEST(BeamSearch, Bf16LogitsGiveTheSameResults) {
  BeamSearchOptions o;
  o.beam_size = 4;
  o.nbest = 4;
  auto fp32 = make_model(hashed_logits, hashed_attention);
  auto bf16 = make_model(hashed_logits, hashed_attention, at::kBFloat16);
  const auto expected = search(*fp32, kSources, o);
  const auto actual = search(*bf16, kSources, o);
  for (size_t b = 0; b < kSources.size(); ++b) {
    ASSERT_EQ(actual[b].size(), expected[b].size());
    for (size_t i = 0; i < actual[b].size(); ++i) {
      EXPECT_EQ(actual[b][i].tokens, expected[b][i].tokens);
      EXPECT_DOUBLE_EQ(actual[b][i].score, expected[b][i].score);
    }
  }
}

TEST(BeamSearch, RejectsBadOptionsAndInputs) {
  auto model = make_model(hashed_logits, hashed_attention);
  BeamSearchOptions o;
  o.nbest = o.beam_size + 1;
  EXPECT_THROW(search(*model, kSources, o), Error);
  o = {};
  o.min_len = 5;
  o.max_len_b = 4;
  EXPECT_THROW(search(*model, kSources, o), Error);
  o = {};
  model->train();
  EXPECT_THROW(search(*model, kSources, o), Error);
  auto no_attention = make_model(hashed_logits, nullptr);
  EXPECT_THROW(search(*no_attention, kSources, o), Error);
  o.coverage_penalty = 0;
  EXPECT_NO_THROW(search(*no_attention, kSources, o));
  EXPECT_TRUE(beam_search(*no_attention, at::zeros({0, 3}, at::kLong), at::zeros({0}, at::kLong), o).empty());
}

// What a trainer checks before its first update, without a model or a search.
TEST(BeamSearch, OptionsAndMaxLengthAreCheckedWithoutSearching) {
  BeamSearchOptions o;
  EXPECT_NO_THROW(check_beam_search_options(o, 10));
  o.beam_size = 0;
  EXPECT_NE(error_of([&] { check_beam_search_options(o, 10); }).find("beam_size must be in 1..1000"),
            std::string::npos);
  o = {};
  o.max_len_a = 1.5;
  o.max_len_b = 2;
  EXPECT_EQ(max_output_length(o, 3), 6);  // floor(1.5 * 3 + 2)
  o.max_len_a = 0;
  o.max_len_b = 0;
  const auto message = error_of([&] { max_output_length(o, 3); });
  EXPECT_NE(message.find("a source of 3 tokens gets max_len = floor(max_len_a 0 * 3 + max_len_b 0) = 0, "
                         "below min_len (1)"),
            std::string::npos)
      << message;
}

// `translate --length-penalty nan` printed nan scores with exit 0 (issue 11).
TEST(BeamSearch, RejectsNonFiniteAndOutOfRangeOptions) {
  auto model = make_model(hashed_logits, hashed_attention);
  const auto error = [&](const BeamSearchOptions& o) { return test::error_of([&] { search(*model, kSources, o); }); };
  BeamSearchOptions o;
  o.length_penalty = std::nan("");
  EXPECT_EQ(error(o), "length_penalty must be a finite number; got nan");
  o = {};
  o.max_len_a = kInfinity;
  EXPECT_EQ(error(o), "max_len_a must be a finite number; got inf");
  o = {};
  o.max_len_b = -1;
  EXPECT_EQ(error(o), "max_len_a and max_len_b must be >= 0; got 0 and -1");
  o = {};
  o.beam_size = kMaxBeamSize + 1;
  EXPECT_EQ(error(o), "beam_size must be in 1..1000 (1 = greedy search); got 1001");
}

// Each output token's alignment is the argmax of the attention of the step that chose it: the
// model's attention after the tokens before it. Greedy and beam, with and without coverage (which
// also reads the attention), with suppress_eos (whose last token ends the hypothesis).
TEST(BeamSearch, AlignmentIsEachStepsMostAttendedSourcePosition) {
  auto model = make_model(hashed_logits, hashed_attention);
  for (const int64_t beam : {1, 3}) {
    for (const double coverage : {0.0, 0.2}) {
      for (const bool suppress_eos : {false, true}) {
        BeamSearchOptions o;
        o.beam_size = beam;
        o.nbest = beam;
        o.coverage_penalty = coverage;
        o.suppress_eos = suppress_eos;
        o.max_len_b = 6;
        o.return_alignment = true;
        const auto results = search(*model, kSources, o);
        int64_t checked = 0;
        for (size_t b = 0; b < kSources.size(); ++b) {
          for (const auto& h : results[b]) {
            ASSERT_EQ(h.alignment.size(), h.tokens.size()) << "beam " << beam << ", sentence " << b;
            for (size_t t = 0; t < h.tokens.size(); ++t, ++checked) {
              const auto a = hashed_attention(kSources[b], Tokens(h.tokens.begin(), h.tokens.begin() + t));
              EXPECT_EQ(h.alignment[t], std::max_element(a.begin(), a.end()) - a.begin())
                  << "beam " << beam << ", sentence " << b << ", token " << t;
            }
          }
        }
        EXPECT_GT(checked, 20);
        o.return_alignment = false;
        for (const auto& hypotheses : search(*model, kSources, o))
          for (const auto& h : hypotheses) EXPECT_TRUE(h.alignment.empty());
      }
    }
  }
}

}  // namespace
}  // namespace mixseq
