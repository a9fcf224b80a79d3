#include "mixseq/train/checkpoint_average.h"

#include <gtest/gtest.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/text/ctc_symbols.h"
#include "mixseq/train/train_config.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

constexpr int64_t kVocabSize = 12;

TrainConfig tiny_gnmt(int64_t hidden_size) {
  TrainConfig config;
  config.model.arch = "gnmt";
  config.model.gnmt.hidden_size = hidden_size;
  config.model.gnmt.num_layers = 2;
  return config;
}

// A loadable checkpoint description: the 4 special symbols and 8 letters, no tokenizer.
CheckpointContents contents_of(TrainConfig config, int64_t step, char first_letter = 'a') {
  CheckpointContents contents;
  contents.config_yaml = config_to_yaml(config.fields());
  contents.vocabulary_text = "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\n";
  for (int64_t i = 0; i < kVocabSize - 4; ++i)
    contents.vocabulary_text += std::string(1, static_cast<char>(first_letter + i)) + " 1\n";
  contents.tokenizer_kind = "none";
  contents.progress.step = step;
  return contents;
}

std::vector<std::string> file_names(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const auto& path : paths) names.push_back(std::filesystem::path(path).filename().string());
  return names;
}

TEST(CheckpointAverage, AveragesEveryTensorToTheHandComputedMean) {
  test::TempDir dir;
  const auto config = tiny_gnmt(8);
  auto model = build_seq2seq_model(config.model, kVocabSize);
  const std::string special = model->named_parameters().begin()->key();
  // Every parameter is a constant per file, except the first 4 values of `special`.
  const std::vector<double> constants = {1, 2, 6};                  // mean 3
  const std::vector<std::vector<float>> special_values = {{0.5F, -1.0F, 3.0F, 0.1F},
                                                          {1.5F, 2.0F, -3.0F, 0.7F},
                                                          {-0.5F, 2.0F, 6.0F, 0.35F}};
  std::vector<std::string> paths;
  for (size_t i = 0; i < constants.size(); ++i) {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->named_parameters()) parameter.value().fill_(constants[i]);
    model->named_parameters()[special].view({-1}).slice(0, 0, 4).copy_(torch::tensor(special_values[i]));
    paths.push_back(dir.path("checkpoint_" + std::to_string(10 * (i + 1)) + ".pt"));
    save_checkpoint(paths.back(), contents_of(config, 10 * static_cast<int64_t>(i + 1)), *model, nullptr);
  }
  const auto output = dir.path("averaged.pt");
  average_checkpoints(paths, output);

  // By hand: (0.5+1.5-0.5)/3, (-1+2+2)/3, (3-3+6)/3, and the fp32 values of 0.1, 0.7, 0.35
  // summed in fp64 then rounded once to fp32.
  const float last = static_cast<float>((static_cast<double>(0.1F) + static_cast<double>(0.7F) +
                                         static_cast<double>(0.35F)) / 3.0);
  const auto special_mean = torch::tensor(std::vector<float>{0.5F, 1.0F, 2.0F, last});
  auto averaged = build_seq2seq_model(config.model, kVocabSize);
  load_model_weights(output, *averaged);
  for (const auto& parameter : averaged->named_parameters()) {
    auto expected = torch::full_like(parameter.value(), 3.0);
    if (parameter.key() == special) expected.view({-1}).slice(0, 0, 4).copy_(special_mean);
    EXPECT_TRUE(parameter.value().equal(expected)) << parameter.key();
  }

  const auto contents = read_checkpoint_contents(output);
  EXPECT_EQ(contents.progress.step, 30);  // the last checkpoint's progress
  EXPECT_EQ(contents.config_yaml, contents_of(config, 30).config_yaml);
  torch::optim::SGD optimizer(averaged->parameters(), torch::optim::SGDOptions(0.1));
  EXPECT_NE(error_of([&] { load_optimizer_state(output, optimizer); }).find("no optimizer state"), std::string::npos);
  EXPECT_NO_THROW(load_trained_model(output, torch::kCPU));  // what mixseq translate opens
}

// Not only translation models: a speech recognizer's checkpoint (CTC symbols for a vocabulary,
// batch-norm buffers) averages the same way, and opens where `mixseq transcribe` opens it.
TEST(CheckpointAverage, AveragesASpeechRecognizer) {
  test::TempDir dir;
  TrainConfig config;
  config.model.arch = "deepspeech2";
  auto& ds2 = config.model.deepspeech2;
  ds2.in_feats = 81;
  ds2.conv_channels = 2;
  ds2.hidden = 4;
  ds2.layers = 1;
  const auto symbols = CtcSymbols::english_characters();
  auto model = build_speech_recognizer(config.model, symbols.size());
  CheckpointContents contents;
  contents.config_yaml = config_to_yaml(config.fields());
  contents.vocabulary_text = symbols.to_text();
  contents.tokenizer_kind = "none";
  std::vector<std::string> paths;
  for (const double value : {1.0, 4.0}) {  // mean 2.5
    torch::NoGradGuard no_grad;
    for (auto& tensor : model->named_parameters()) tensor.value().fill_(value);
    for (auto& buffer : model->named_buffers())
      buffer.value().fill_(buffer.value().is_floating_point() ? value : static_cast<double>(value * 10));
    paths.push_back(dir.path("checkpoint_" + std::to_string(static_cast<int>(value)) + ".pt"));
    save_checkpoint(paths.back(), contents, *model, nullptr);
  }
  const auto output = dir.path("averaged.pt");
  average_checkpoints(paths, output);
  const auto trained = load_trained_speech_recognizer(output, torch::kCPU);  // what mixseq transcribe opens
  EXPECT_EQ(trained.symbols.size(), symbols.size());
  for (const auto& tensor : trained.model->named_parameters())
    EXPECT_TRUE(tensor.value().equal(torch::full_like(tensor.value(), 2.5))) << tensor.key();
  int64_t counts = 0;
  for (const auto& buffer : trained.model->named_buffers()) {
    const double expected = buffer.value().is_floating_point() ? 2.5 : 40.0;  // counts: the last checkpoint's
    counts += !buffer.value().is_floating_point();
    EXPECT_TRUE(buffer.value().equal(torch::full_like(buffer.value(), expected))) << buffer.key();
  }
  EXPECT_GT(counts, 0);  // batch norm's num_batches_tracked
}

TEST(CheckpointAverage, NamesTheCheckpointThatDiffers) {
  test::TempDir dir;
  const auto narrow = tiny_gnmt(8), wide = tiny_gnmt(16);
  save_checkpoint(dir.path("narrow.pt"), contents_of(narrow, 1), *build_seq2seq_model(narrow.model, kVocabSize), nullptr);
  save_checkpoint(dir.path("wide.pt"), contents_of(wide, 2), *build_seq2seq_model(wide.model, kVocabSize), nullptr);
  save_checkpoint(dir.path("other_vocab.pt"), contents_of(narrow, 3, 'k'), *build_seq2seq_model(narrow.model, kVocabSize),
                  nullptr);

  const auto shape = error_of([&] { average_checkpoints({dir.path("narrow.pt"), dir.path("wide.pt")}, dir.path("o.pt")); });
  EXPECT_NE(shape.find("wide.pt' has another model config"), std::string::npos) << shape;
  const auto vocabulary =
      error_of([&] { average_checkpoints({dir.path("narrow.pt"), dir.path("other_vocab.pt")}, dir.path("o.pt")); });
  EXPECT_NE(vocabulary.find("other_vocab.pt' has another vocabulary"), std::string::npos) << vocabulary;
  EXPECT_FALSE(std::filesystem::exists(dir.path("o.pt")));
}

TEST(CheckpointAverage, RefusesToReplaceATrainingCheckpoint) {
  test::TempDir dir;
  const auto config = tiny_gnmt(8);
  auto model = build_seq2seq_model(config.model, kVocabSize);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  const auto last = dir.path("checkpoint_last.pt");
  save_checkpoint(last, contents_of(config, 20), *model, &optimizer);
  save_checkpoint(dir.path("checkpoint_10.pt"), contents_of(config, 10), *model, nullptr);
  const auto before = test::read_file(last);

  const auto message = error_of([&] { average_checkpoints({dir.path("checkpoint_10.pt"), last}, last); });
  EXPECT_NE(message.find("checkpoint_last.pt' is a training checkpoint"), std::string::npos) << message;
  EXPECT_NE(message.find("-o " + dir.path("checkpoint_avg2.pt")), std::string::npos) << message;
  EXPECT_EQ(test::read_file(last), before);
  EXPECT_TRUE(has_optimizer_state(last));

  // An earlier average (no optimizer state) may be replaced.
  const auto average = dir.path("checkpoint_avg2.pt");
  average_checkpoints({dir.path("checkpoint_10.pt"), last}, average);
  EXPECT_FALSE(has_optimizer_state(average));
  EXPECT_NO_THROW(average_checkpoints({dir.path("checkpoint_10.pt"), last}, average));
}

TEST(CheckpointAverage, FindsTheNewestNumberedCheckpointsInNumericOrder) {
  test::TempDir dir;
  for (const char* name : {"checkpoint_10.pt", "checkpoint_9.pt", "checkpoint_100.pt", "checkpoint_8.pt",
                           "checkpoint_last.pt", "checkpoint_best.pt", "checkpoint_7.pt.tmp", "checkpoint_x1.pt"})
    dir.write(name, "x");
  const auto run_dir = dir.root().string();
  EXPECT_EQ(file_names(last_numbered_checkpoints(run_dir, 3)),
            (std::vector<std::string>{"checkpoint_9.pt", "checkpoint_10.pt", "checkpoint_100.pt"}));
  EXPECT_EQ(file_names(numbered_checkpoints(run_dir)),
            (std::vector<std::string>{"checkpoint_8.pt", "checkpoint_9.pt", "checkpoint_10.pt", "checkpoint_100.pt"}));
  EXPECT_EQ(numbered_checkpoint_path(run_dir, 42), run_dir + "/checkpoint_42.pt");
  const auto too_few = error_of([&] { last_numbered_checkpoints(run_dir, 5); });
  EXPECT_NE(too_few.find("holds 4 numbered checkpoints"), std::string::npos) << too_few;
}

}  // namespace
}  // namespace mixseq
