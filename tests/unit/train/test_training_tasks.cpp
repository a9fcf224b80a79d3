#include "mixseq/train/training_tasks.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

TEST(TrainingTasks, EachFamilyHasItsTask) {
  EXPECT_EQ(training_task_name("gnmt"), "translation");
  EXPECT_EQ(training_task_name("transformer"), "translation");
  EXPECT_EQ(training_task_name("transformer_xl"), "language_model");
  for (const char* arch : {"jasper", "wave2letter_plus", "deepspeech2"})
    EXPECT_EQ(training_task_name(arch), "speech_recognition") << arch;
  EXPECT_EQ(error_of([] { training_task_name("wav2letter"); }),
            "unknown model.arch 'wav2letter'; known: deepspeech2, fconv, gnmt, jasper, lm_classifier, lstm_lm, tacotron2, transformer, transformer_xl, wave2letter_plus");
}

// A key only another task reads is an error naming the key, where it was set, that task and
// this run's; the keys every task reads, and the task's own, pass.
TEST(TrainingTasks, RefusesSettingsOfAnotherTask) {
  EXPECT_EQ(error_of([] { check_task_settings("transformer_xl", {{"criterion.smoothing", "xl.yaml:7"}}); }),
            "xl.yaml:7: criterion.smoothing is a setting of the translation task, but model.arch 'transformer_xl' "
            "trains with the language_model task, which does not read it; remove it");
  EXPECT_EQ(error_of([] { check_task_settings("gnmt", {{"lm.tgt_len", "--lm.tgt_len"}}); }),
            "--lm.tgt_len: lm.tgt_len is a setting of the language_model task, but model.arch 'gnmt' trains with "
            "the translation task, which does not read it; remove it");
  for (const char* key : {"validation_search.beam_size", "data.max_tokens", "train.validate_bleu", "train.target_bleu"})
    EXPECT_NE(error_of([&] { check_task_settings("transformer_xl", {{key, "x"}}); }), "") << key;
  EXPECT_EQ(error_of([] { check_task_settings("jasper", {{"data.max_tokens", "asr.yaml:3"}}); }),
            "asr.yaml:3: data.max_tokens is a setting of the translation task, but model.arch 'jasper' trains with "
            "the speech_recognition task, which does not read it; remove it");
  EXPECT_EQ(error_of([] { check_task_settings("gnmt", {{"speech.n_mels", "--speech.n_mels"}}); }),
            "--speech.n_mels: speech.n_mels is a setting of the speech_recognition task, but model.arch 'gnmt' "
            "trains with the translation task, which does not read it; remove it");
  EXPECT_EQ(error_of([] { check_task_settings("deepspeech2", {{"speech.n_fft", "a"}, {"data.dir", "b"}}); }), "");
  EXPECT_EQ(error_of([] {
              check_task_settings("transformer_xl", {{"data.dir", "a"}, {"lm.batch_size", "b"}, {"train.seed", "c"},
                                                     {"optim.lr", "d"}, {"model.transformer_xl.n_layer", "e"}});
            }),
            "");
  EXPECT_EQ(error_of([] {
              check_task_settings("transformer", {{"data.max_tokens", "a"}, {"criterion.smoothing", "b"},
                                                  {"validation_search.beam_size", "c"}, {"train.target_bleu", "d"}});
            }),
            "");
}

// The stored config has the run's own task's sections only, and reads back as the same config.
TEST(TrainingTasks, StoresOnlyTheRunsOwnTaskSettings) {
  TrainConfig config;
  config.model.arch = "transformer_xl";
  config.lm.tgt_len = 33;
  const auto yaml = task_config_yaml(config);
  EXPECT_EQ(yaml.find("criterion"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("validation_search"), std::string::npos);
  EXPECT_EQ(yaml.find("max_tokens"), std::string::npos);
  EXPECT_EQ(yaml.find("validate_bleu"), std::string::npos);
  EXPECT_NE(yaml.find("tgt_len: 33"), std::string::npos);
  EXPECT_NE(yaml.find("dir:"), std::string::npos);
  TrainConfig back;
  read_config_yaml(yaml, "stored", back.fields());
  EXPECT_EQ(back.lm.tgt_len, 33);
  EXPECT_EQ(back.model.arch, "transformer_xl");

  config.model.arch = "gnmt";
  const auto translation = task_config_yaml(config);
  EXPECT_EQ(translation.find("\nlm:"), std::string::npos) << translation;  // the section, not model.lstm_lm
  EXPECT_NE(translation.find("validation_search"), std::string::npos);
  EXPECT_NE(translation.find("max_tokens"), std::string::npos);
}

}  // namespace
}  // namespace mixseq
