// TransformerXlModel against the paper's code: tests/data/transformer_xl/golden.pt holds tiny
// models of kimiyoung/transformer-xl (MemTransformerLM, attention type 0) with their weights under
// mixseq's names, two consecutive segments of ids with the per-token losses and memories the
// reference computed, and the gradients of the first segment's summed loss. Loaded into mixseq's
// model, the same weights must give the same numbers. make_golden.py beside the fixture wrote it.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>

#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "mixseq/models/transformer_xl.h"

namespace mixseq {
namespace {

const std::string kFixture = std::string(MIXSEQ_TEST_DATA_DIR) + "/transformer_xl/golden.pt";

// The cases of make_golden.py, as TransformerXlConfig and vocabulary size.
struct GoldenCase {
  std::string name;
  int64_t vocab_size;
  TransformerXlConfig config;
};

void PrintTo(const GoldenCase& golden, std::ostream* out) { *out << golden.name; }

std::vector<GoldenCase> golden_cases() {
  TransformerXlConfig a;
  a.n_layer = 2, a.n_head = 2, a.d_model = 12, a.d_head = 5, a.d_inner = 20, a.d_embed = 16, a.div_val = 2;
  a.cutoffs = {20, 40}, a.tie_weight = true, a.tie_projs = true, a.pre_lnorm = false, a.same_length = false;
  a.clamp_len = -1, a.mem_len = 5;
  TransformerXlConfig b;
  b.n_layer = 2, b.n_head = 3, b.d_model = 10, b.d_head = 4, b.d_inner = 16, b.d_embed = 14, b.div_val = 1;
  b.cutoffs = {30}, b.tie_weight = false, b.tie_projs = true, b.pre_lnorm = true, b.same_length = true;
  b.clamp_len = 3, b.mem_len = 6;
  TransformerXlConfig c;
  c.n_layer = 3, c.n_head = 2, c.d_model = 8, c.d_head = 4, c.d_inner = 12, c.d_embed = 8, c.div_val = 1;
  c.cutoffs = {}, c.tie_weight = true, c.tie_projs = false, c.pre_lnorm = false, c.same_length = false;
  c.clamp_len = -1, c.mem_len = 4;
  for (auto* config : {&a, &b, &c}) config->dropout = config->dropatt = 0.0;
  return {{"adaptive_div2", 60, a}, {"projected_div1", 60, b}, {"full_softmax", 50, c}};
}

std::map<std::string, torch::Tensor> load_fixture() {
  std::ifstream in(kFixture, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : torch::pickle_load(bytes).toGenericDict())
    tensors[item.key().toStringRef()] = item.value().toTensor();
  return tensors;
}

class TransformerXlGolden : public ::testing::TestWithParam<GoldenCase> {
 protected:
  static void SetUpTestSuite() { fixture_ = new std::map<std::string, torch::Tensor>(load_fixture()); }
  static void TearDownTestSuite() { delete fixture_; }
  static const torch::Tensor& at(const std::string& key) {
    const auto it = fixture_->find(key);
    if (it == fixture_->end()) throw std::runtime_error("golden.pt has no tensor " + key);
    return it->second;
  }

  // The case's model with the reference's weights: every parameter of ours has one in the fixture.
  TransformerXlModel model_with_reference_weights() const {
    const auto& golden = GetParam();
    TransformerXlModel model(golden.config, golden.vocab_size);
    torch::NoGradGuard no_grad;
    size_t copied = 0;
    for (auto& p : model->named_parameters()) {
      p.value().copy_(at(golden.name + ".param." + p.key()));
      ++copied;
    }
    size_t in_fixture = 0;
    for (const auto& item : *fixture_) in_fixture += item.first.rfind(golden.name + ".param.", 0) == 0;
    EXPECT_EQ(copied, in_fixture) << "the reference has parameters that mixseq's model lacks";
    return model;
  }

  static std::map<std::string, torch::Tensor>* fixture_;
};
std::map<std::string, torch::Tensor>* TransformerXlGolden::fixture_ = nullptr;

TEST_P(TransformerXlGolden, SegmentsGiveTheReferencesLossesAndMemories) {
  const auto& name = GetParam().name;
  auto model = model_with_reference_weights();
  model->eval();
  torch::NoGradGuard no_grad;
  LmMemory memory;
  for (int k = 0; k < 2; ++k) {
    const std::string segment = name + ".seg" + std::to_string(k) + ".";
    auto out = model(at(segment + "tokens"), at(segment + "targets"), memory);
    EXPECT_TRUE(at::allclose(out.nll, at(segment + "nll"), /*rtol=*/0, /*atol=*/1e-5))
        << segment << " largest difference " << (out.nll - at(segment + "nll")).abs().max().item<double>();
    ASSERT_EQ(out.memory.layers.size(), static_cast<size_t>(model->n_layer()));
    for (size_t i = 0; i < out.memory.layers.size(); ++i)
      EXPECT_TRUE(at::allclose(out.memory.layers[i], at(segment + "memory" + std::to_string(i)), 0, 1e-5))
          << segment << " layer " << i;
    memory = std::move(out.memory);
  }
}

TEST_P(TransformerXlGolden, FirstSegmentGivesTheReferencesGradients) {
  const auto& name = GetParam().name;
  auto model = model_with_reference_weights();
  model->train();  // dropout 0: the same function as in eval
  model(at(name + ".seg0.tokens"), at(name + ".seg0.targets"), LmMemory{}).nll.sum().backward();
  for (const auto& p : model->named_parameters()) {
    const auto& expected = at(name + ".grad." + p.key());
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    const double scale = std::max(1.0, expected.abs().max().item<double>());
    EXPECT_TRUE(at::allclose(p.value().grad(), expected, /*rtol=*/0, /*atol=*/1e-5 * scale))
        << p.key() << " largest difference " << (p.value().grad() - expected).abs().max().item<double>();
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, TransformerXlGolden, ::testing::ValuesIn(golden_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace mixseq
