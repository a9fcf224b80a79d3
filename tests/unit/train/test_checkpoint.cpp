#include "mixseq/train/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include <ATen/ATen.h>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;


CheckpointContents sample_contents() {
  CheckpointContents contents;
  contents.config_yaml = "model:\n  arch: gnmt\n";
  contents.vocabulary_text = "<pad> 0\n<unk> 0\n\xC3\xBC 3\n";
  contents.tokenizer_kind = "bpe";
  contents.tokenizer_model = std::string("#version: 0.2\na b\n\0binary", 23);
  contents.progress.step = 1234;
  contents.progress.epoch = 3;
  contents.progress.epoch_batches = 17;
  contents.progress.best_score = 27.5;
  contents.progress.loss_scale = 4096;
  contents.progress.loss_scale_clean_steps = 77;
  contents.progress.cpu_rng_state = at::detail::getDefaultCPUGenerator().get_state();
  return contents;
}

TEST(Checkpoint, RoundTripsContentsWeightsAndOptimizer) {
  test::TempDir dir;
  const auto path = dir.path("run/checkpoint_last.pt");
  torch::manual_seed(0);
  torch::nn::Linear model(3, 2);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  model->forward(torch::randn({4, 3})).sum().backward();
  optimizer.step();
  save_checkpoint(path, sample_contents(), *model, &optimizer);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  const auto contents = read_checkpoint_contents(path);
  EXPECT_EQ(contents.config_yaml, sample_contents().config_yaml);
  EXPECT_EQ(contents.vocabulary_text, sample_contents().vocabulary_text);
  EXPECT_EQ(contents.tokenizer_model, sample_contents().tokenizer_model);  // bytes survive, NUL included
  EXPECT_EQ(contents.progress.step, 1234);
  EXPECT_EQ(contents.progress.epoch_batches, 17);
  EXPECT_DOUBLE_EQ(contents.progress.best_score, 27.5);
  EXPECT_EQ(contents.progress.loss_scale_clean_steps, 77);
  EXPECT_TRUE(contents.progress.cpu_rng_state.equal(sample_contents().progress.cpu_rng_state));
  EXPECT_FALSE(contents.progress.cuda_rng_state.defined());

  torch::nn::Linear restored(3, 2);
  load_model_weights(path, *restored);
  EXPECT_TRUE(restored->weight.equal(model->weight));
  EXPECT_TRUE(restored->bias.equal(model->bias));

  // The restored optimizer continues exactly like the original.
  torch::optim::Adam restored_optimizer(restored->parameters(), torch::optim::AdamOptions(1e-3));
  load_optimizer_state(path, restored_optimizer);
  const auto input = torch::randn({4, 3});
  for (auto* pair : {&model, &restored}) {
    (*pair)->zero_grad();
    (*pair)->forward(input).sum().backward();
  }
  optimizer.step();
  restored_optimizer.step();
  EXPECT_TRUE(restored->weight.equal(model->weight));
}

TEST(Checkpoint, ReportsBadFilesByName) {
  test::TempDir dir;
  torch::nn::Linear model(3, 2);
  const auto path = dir.path("c.pt");
  save_checkpoint(path, sample_contents(), *model, nullptr);

  const std::string bytes = test::read_file(path);
  test::write_file(dir.path("truncated.pt"), bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(error_of([&] { read_checkpoint_contents(dir.path("truncated.pt")); }).find("truncated or corrupt"),
            std::string::npos);
  test::write_file(dir.path("text.pt"), "hello");
  EXPECT_NE(error_of([&] { read_checkpoint_contents(dir.path("text.pt")); }).find("text.pt"), std::string::npos);
  EXPECT_NE(error_of([&] { read_checkpoint_contents(dir.path("none.pt")); }).find("does not exist"),
            std::string::npos);
  // `translate -c runs/x` (the run folder) said "not a readable checkpoint (truncated or corrupt?)".
  EXPECT_EQ(error_of([&] { read_checkpoint_contents(dir.root().string()); }),
            "checkpoint '" + dir.root().string() + "' is a directory; name a checkpoint in it, such as " +
                dir.path("checkpoint_best.pt"));

  torch::nn::Linear wider(3, 5);
  const auto shape = error_of([&] { load_model_weights(path, *wider); });
  EXPECT_NE(shape.find("'weight' has shape [2, 3] but the model expects [5, 3]"), std::string::npos) << shape;

  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  EXPECT_NE(error_of([&] { load_optimizer_state(path, optimizer); }).find("no optimizer state"), std::string::npos);
}

}  // namespace
}  // namespace mixseq
