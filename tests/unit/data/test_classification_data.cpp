// prepare --task classify's datasets (data/classification_data.h): labels and ids round trip,
// the header, the vocabulary of a pretrained model, and every malformed line named by file and line.
#include <gtest/gtest.h>

#include <filesystem>

#include "mixseq/data/classification_data.h"
#include "mixseq/data/prepared_data.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;
using test::TempDir;

ClassificationPrepareOptions options_for(const TempDir& dir, const std::string& train, const std::string& valid = "") {
  ClassificationPrepareOptions options;
  options.files["train"] = dir.write("train.tsv", train);
  if (!valid.empty()) options.files["valid"] = dir.write("valid.tsv", valid);
  options.out_dir = dir.path("data");
  options.vocabulary_options.pad_to_multiple = 1;
  return options;
}

TEST(ClassificationData, LabelsAndIdsRoundTripWithTheHeaderSkipped) {
  const TempDir dir;
  const auto options = options_for(dir, "sentence\tlabel\nthe film is good \t1\na bad film\t0\ngood\t1\n",
                                   "a good film\t1\nawful\t0\n");
  const auto reports = prepare_classification_data(options);
  EXPECT_EQ(reports.at("train").examples, 3);
  EXPECT_EQ(reports.at("valid").unknown_tokens, 1);  // "awful"
  EXPECT_EQ(reports.at("train").label_counts.at("1"), 2);
  const ClassificationData data(options.out_dir);
  ASSERT_EQ(data.labels(), (std::vector<std::string>{"0", "1"}));
  const auto& train = data.split("train");
  ASSERT_EQ(train.size(), 3u);
  const auto words = [&](const LabelledExample& example) {
    std::string text;
    for (const int64_t id : example.ids) text += (text.empty() ? "" : " ") + data.vocabulary().token(id);
    return text;
  };
  EXPECT_EQ(words(train[0]), "the film is good");
  EXPECT_EQ(data.labels()[static_cast<size_t>(train[0].label)], "1");
  EXPECT_EQ(words(train[1]), "a bad film");
  EXPECT_EQ(data.labels()[static_cast<size_t>(train[1].label)], "0");
  const auto& valid = data.split("valid");
  EXPECT_EQ(words(valid[1]), "<unk>");
  EXPECT_EQ(valid[1].label, 0);
}

TEST(ClassificationData, BatchesAreEosTextEosThenPadding) {
  std::vector<LabelledExample> examples = {{{7, 8, 9}, 1}, {{5}, 0}};
  const auto batch = make_classification_batch(examples, {1, 0});
  ASSERT_EQ(batch.tokens.sizes(), (std::vector<int64_t>{2, 5}));
  const std::vector<int64_t> expected = {kEosId, 5, kEosId, kPadId, kPadId, kEosId, 7, 8, 9, kEosId};
  EXPECT_TRUE(batch.tokens.flatten().equal(torch::tensor(expected)));
  EXPECT_TRUE(batch.lengths.equal(torch::tensor(std::vector<int64_t>{3, 5})));
  EXPECT_TRUE(batch.labels.equal(torch::tensor(std::vector<int64_t>{0, 1})));
  EXPECT_EQ(batch.tokens_read, 8);
}

TEST(ClassificationData, APretrainedModelsVocabularyIsTakenAsItIs) {
  const TempDir dir;
  Vocabulary::build({{"good", 5}, {"film", 3}}, {0, 1, 1}).save(dir.path("lm_vocab.txt"));
  const PretrainedText pretrained{test::read_file(dir.path("lm_vocab.txt")), "none", ""};
  auto options = options_for(dir, "good film\tpos\nbad film\tneg\n");
  options.pretrained = &pretrained;
  const auto reports = prepare_classification_data(options);
  EXPECT_EQ(reports.at("train").unknown_tokens, 1);  // "bad"
  const ClassificationData data(options.out_dir);
  EXPECT_EQ(test::read_file(options.out_dir + "/vocab.txt"), pretrained.vocabulary_text);
  EXPECT_EQ(data.vocabulary().token(data.split("train")[0].ids[0]), "good");
}

TEST(ClassificationData, MalformedLinesAreNamedByFileAndLine) {
  const auto message = [](const std::string& train, const std::string& valid = "") {
    const TempDir dir;
    return error_of([&] { prepare_classification_data(options_for(dir, train, valid)); });
  };
  EXPECT_NE(message("good\t1\n\nbad\t0\n").find("train.tsv:2: empty line"), std::string::npos);
  EXPECT_NE(message("good\t1\nno tab here\n").find("train.tsv:2: no tab"), std::string::npos);
  EXPECT_NE(message("good\t1\nbad\t \n").find("train.tsv:2: empty label"), std::string::npos);
  EXPECT_NE(message("good\t1\n \t0\n").find("train.tsv:2: empty text"), std::string::npos);
  EXPECT_NE(message("good\t1\nbad\t0\n", "fine\t1\nodd\tmaybe\n").find("label 'maybe' of example 2"),
            std::string::npos);
  EXPECT_NE(message("good\t1\nfine\t1\n").find("has only one label"), std::string::npos);
  EXPECT_NE(message("good\t1\nb\xff" "ad\t0\n").find("train.tsv:2: malformed UTF-8"), std::string::npos);
}

TEST(ClassificationData, AnEditedSplitFileFailsItsChecksum) {
  const TempDir dir;
  const auto options = options_for(dir, "good\t1\nbad\t0\n");
  prepare_classification_data(options);
  auto bytes = test::read_file(options.out_dir + "/train.tsv");
  bytes[0] = bytes[0] == '0' ? '1' : '0';
  test::write_file(options.out_dir + "/train.tsv", bytes);
  EXPECT_NE(error_of([&] { ClassificationData data(options.out_dir); }).find("does not have the checksum"),
            std::string::npos);
}

TEST(ClassificationData, LabelsParseBackAndDuplicatesAreErrors) {
  EXPECT_EQ(parse_labels(labels_text({"neg", "pos", "neutral"}), "x"),
            (std::vector<std::string>{"neg", "pos", "neutral"}));
  EXPECT_NE(error_of([] { parse_labels("a\nb\na\n", "labels.txt"); }).find("labels.txt:3: label 'a' listed twice"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_labels("a\n", "labels.txt"); }).find("at least 2 labels"), std::string::npos);
}

// -o onto the folder of the training file would have replaced train.tsv with the prepared one.
TEST(ClassificationData, AnOutputOverAnInputIsRefusedAndAFailedRunLeavesNoFolder) {
  const TempDir dir;
  auto options = options_for(dir, "a good film\t1\nbad\t0\n", "a good film\t1\nawful\t2\n");
  options.out_dir = dir.path("");
  const auto refused = error_of([&] { prepare_classification_data(options); });
  EXPECT_NE(refused.find("train.tsv' is the same file as --train"), std::string::npos) << refused;
  EXPECT_EQ(test::read_file(dir.path("train.tsv")), "a good film\t1\nbad\t0\n");
  options.out_dir = dir.path("data");
  const auto label = error_of([&] { prepare_classification_data(options); });  // label 2 is not in train
  EXPECT_NE(label.find("label '2'"), std::string::npos) << label;
  EXPECT_FALSE(std::filesystem::exists(dir.path("data")));
}

}  // namespace
}  // namespace mixseq
