// Checkpoints written by an earlier mixseq must keep loading and computing the same numbers.
// tests/data/checkpoints/ holds a tiny GNMT and a tiny Transformer training checkpoint (format
// version 2, with optimizer state) written at commit 30fa5b5, before issue 12 moved the
// checkpoint code out of train/, with the logits and the beam-search translations they gave
// then. The DISABLED_ test below wrote them; it is kept to show how, not to be run again (a
// fixture rewritten by newer code would no longer prove anything about the older format):
//   build/bin/test_models --gtest_also_run_disabled_tests --gtest_filter='GoldenCheckpoint.DISABLED_*'
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/serialize.h>

#include <sstream>
#include <string>
#include <vector>

#include "mixseq/data/prepared_data.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/train/train_config.h"
#include "test_support.h"

namespace mixseq {
namespace {

const std::string kDir = std::string(MIXSEQ_TEST_DATA_DIR) + "/checkpoints/";
const std::vector<std::string> kSources = {"a b c", "d e f g h", "h", "c a b h"};

TrainConfig tiny_config(const std::string& arch) {
  TrainConfig config;
  config.model.arch = arch;
  config.model.gnmt.hidden_size = 8;
  config.model.gnmt.num_layers = 2;
  config.model.transformer.embed_dim = 8;
  config.model.transformer.ffn_dim = 16;
  config.model.transformer.heads = 2;
  config.model.transformer.encoder_layers = 1;
  config.model.transformer.decoder_layers = 1;
  return config;
}

// A fixed batch: source [2, 4] ending in </s>, target input [2, 3] starting with <s>.
struct FixedBatch {
  torch::Tensor source = torch::tensor(std::vector<int64_t>{4, 5, 6, kEosId, 7, 8, kEosId, kPadId}).view({2, 4});
  torch::Tensor source_lengths = torch::tensor(std::vector<int64_t>{4, 3});
  torch::Tensor target_input = torch::tensor(std::vector<int64_t>{kBosId, 9, 10, kBosId, 11, 4}).view({2, 3});
};

torch::Tensor logits_of(Seq2SeqModelImpl& model) {
  const FixedBatch batch;
  torch::NoGradGuard no_grad;
  return model.forward(batch.source, batch.source_lengths, batch.target_input);  // [2, 3, V]
}

// "<index> ||| <text> ||| <score>" for the beam search's best hypotheses.
std::string translations_of(const TrainedModel& trained) {
  BatchTranslator translator(*trained.model, trained.vocabulary, *trained.tokenizer, torch::kCPU, Precision::kFp32);
  TranslateOptions options;
  options.search.beam_size = 3;
  options.search.max_len_b = 8;
  const auto translations = translator.translate(kSources, options);
  std::ostringstream out;
  out.precision(6);
  for (size_t i = 0; i < translations.size(); ++i)
    out << i << " ||| " << translations[i].front().text << " ||| " << translations[i].front().score << '\n';
  return out.str();
}

TEST(GoldenCheckpoint, DISABLED_WriteFixtures) {
  test::TempDir scratch;
  for (const std::string arch : {"gnmt", "transformer"}) {
    const auto config = tiny_config(arch);
    CheckpointContents contents;
    TrainConfig resolved = config;
    contents.config_yaml = config_to_yaml(resolved.fields());
    contents.vocabulary_text = "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\n";
    for (const char letter : std::string("abcdefgh")) contents.vocabulary_text += std::string(1, letter) + " 1\n";
    contents.vocabulary_fingerprint = vocabulary_fingerprint(Vocabulary::load(scratch.write("vocab.txt",
                                                                                              contents.vocabulary_text)));
    contents.tokenizer_kind = "none";
    contents.progress = {/*step=*/7, /*epoch=*/2, /*epoch_batches=*/3, /*best_score=*/12.5, /*best_loss=*/2.25,
                         /*validations_without_improvement=*/0, /*loss_scale=*/0, /*loss_scale_clean_steps=*/0, /*train_seconds=*/42, /*cpu_rng_state=*/{},
                         /*cuda_rng_state=*/{}, /*carried_state=*/{}, /*schedule_pace=*/{}, /*log_interval_sums=*/{}};
    torch::manual_seed(1);
    auto model = build_seq2seq_model(config.model, 12);
    auto optimizer = build_optimizer(config.optim, model->parameters());
    {  // one step, so that there is optimizer state to save
      const FixedBatch batch;
      model->forward(batch.source, batch.source_lengths, batch.target_input).pow(2).mean().backward();
      optimizer->step();
    }
    model->eval();
    save_checkpoint(kDir + arch + ".pt", contents, *model, optimizer.get());
    torch::save(logits_of(*model), kDir + arch + ".logits.pt");
    test::write_file(kDir + arch + ".translations.txt", translations_of(load_trained_model(kDir + arch + ".pt",
                                                                                         torch::kCPU)));
  }
}

class GoldenCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCheckpoint, LoadsAndComputesAsWhenItWasWritten) {
  const std::string path = kDir + GetParam() + ".pt";
  const auto contents = read_checkpoint_contents(path);
  EXPECT_EQ(contents.progress.step, 7);
  EXPECT_EQ(contents.progress.epoch, 2);
  EXPECT_EQ(contents.progress.epoch_batches, 3);
  EXPECT_DOUBLE_EQ(contents.progress.best_score, 12.5);
  EXPECT_DOUBLE_EQ(contents.progress.best_loss, 2.25);
  EXPECT_DOUBLE_EQ(contents.progress.train_seconds, 42);
  EXPECT_EQ(contents.tokenizer_kind, "none");

  const auto trained = load_trained_model(path, torch::kCPU);
  torch::Tensor expected;
  torch::load(expected, kDir + GetParam() + ".logits.pt");
  EXPECT_TRUE(torch::allclose(logits_of(*trained.model), expected, /*rtol=*/1e-5, /*atol=*/1e-6));
  EXPECT_EQ(translations_of(trained), test::read_file(kDir + GetParam() + ".translations.txt"));

  // What --resume reads besides the weights.
  ASSERT_TRUE(has_optimizer_state(path));
  auto optimizer = build_optimizer(OptimizerOptions{}, trained.model->parameters());
  EXPECT_NO_THROW(load_optimizer_state(path, *optimizer));
}

INSTANTIATE_TEST_SUITE_P(Architectures, GoldenCheckpoint, ::testing::Values("gnmt", "transformer"));

}  // namespace
}  // namespace mixseq
