#include "mixseq/train/run_directory.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "mixseq/util/error.h"
#include "test_support.h"

namespace mixseq {
namespace {

using test::error_of;

TEST(RunDirectory, NewOrEmptyFolderStartsFreshWhateverTheStart) {
  test::TempDir dir;
  for (const auto start : {RunStart::kNew, RunStart::kResume, RunStart::kOverwrite}) {
    const auto plan = plan_run_directory(dir.path("absent"), start);
    EXPECT_FALSE(plan.resume);
    EXPECT_TRUE(plan.files_to_delete.empty());
  }
  dir.write("empty/config.yaml", "train: {}\n");  // not a result: every start rewrites it
  EXPECT_FALSE(plan_run_directory(dir.path("empty"), RunStart::kResume).resume);
  EXPECT_EQ(error_of([&] { plan_run_directory(dir.path("empty"), RunStart::kNew); }), "");
  // What a run refused at its loss (label smoothing -0.5) left: config.yaml and an empty
  // metrics.jsonl. The corrected command was refused as "a previous run".
  dir.write("empty/metrics.jsonl", "");
  EXPECT_EQ(error_of([&] { plan_run_directory(dir.path("empty"), RunStart::kNew); }), "");
  dir.write("empty/metrics.jsonl", "{\"kind\":\"train\"}\n");
  EXPECT_NE(error_of([&] { plan_run_directory(dir.path("empty"), RunStart::kNew); }).find("holds a previous run"),
            std::string::npos);
}

// A folder named as a run's own file: --resume read it as a damaged checkpoint, and --overwrite
// could not delete it ("Directory not empty"); every start names it before anything is done.
TEST(RunDirectory, AFolderWhereARunKeepsAFileIsNamed) {
  test::TempDir dir;
  for (const char* name : {"checkpoint_last.pt", "checkpoint_best.pt", "metrics.jsonl"}) {
    const std::string run = dir.path(std::string("run_") + name);
    dir.write(std::string("run_") + name + "/" + name + "/inside.txt", "x");
    for (const auto start : {RunStart::kNew, RunStart::kResume, RunStart::kOverwrite})
      EXPECT_EQ(error_of([&] { plan_run_directory(run, start); }),
                "'" + run + "/" + name + "' is a folder, where a training run keeps a file of its own: move it away, "
                "or train into another --train.run_dir");
  }
  dir.write("plain_file", "x");  // a run_dir that is a file: no result here (lock_run_directory names it)
  EXPECT_EQ(error_of([&] { plan_run_directory(dir.path("plain_file"), RunStart::kResume); }), "");
}

TEST(RunDirectory, NewRunRefusesAPreviousRunAndNamesTheChoices) {
  test::TempDir dir;
  dir.write("run/checkpoint_last.pt", "x");
  dir.write("run/metrics.jsonl", "{}\n");
  const auto message = error_of([&] { plan_run_directory(dir.path("run"), RunStart::kNew); });
  EXPECT_NE(message.find("holds a previous run (checkpoint_last.pt, metrics.jsonl)"), std::string::npos) << message;
  for (const char* choice : {"--resume", "--train.run_dir", "--overwrite"})
    EXPECT_NE(message.find(choice), std::string::npos) << message;
  EXPECT_TRUE(plan_run_directory(dir.path("run"), RunStart::kResume).resume);
}

TEST(RunDirectory, ResumeWithoutLastCheckpointIsAnErrorWhenResultsRemain) {
  test::TempDir dir;
  dir.write("run/checkpoint_best.pt", "x");
  dir.write("run/checkpoint_40.pt", "x");
  const auto message = error_of([&] { plan_run_directory(dir.path("run"), RunStart::kResume); });
  EXPECT_NE(message.find("no checkpoint_last.pt"), std::string::npos) << message;
  EXPECT_NE(message.find("checkpoint_40.pt, checkpoint_best.pt"), std::string::npos) << message;
}

TEST(RunDirectory, OverwriteDeletesOnlyTheResults) {
  test::TempDir dir;
  for (const char* name : {"checkpoint_last.pt", "checkpoint_best.pt", "checkpoint_8.pt", "metrics.jsonl",
                           "checkpoint_avg5.pt", "config.yaml", "notes.txt"})
    dir.write(std::string("run/") + name, "x");
  const auto plan = plan_run_directory(dir.path("run"), RunStart::kOverwrite);
  EXPECT_FALSE(plan.resume);
  EXPECT_EQ(plan.files_to_delete.size(), 4u);
  apply_run_directory_plan(dir.path("run"), plan);
  EXPECT_TRUE(previous_run_results(dir.path("run")).empty());
  for (const char* kept : {"checkpoint_avg5.pt", "config.yaml", "notes.txt"})
    EXPECT_TRUE(std::filesystem::exists(dir.path(std::string("run/") + kept))) << kept;
}

TEST(RunDirectory, ApplyDeletesWhatInterruptedSavesLeft) {
  test::TempDir dir;
  dir.write("run/checkpoint_last.pt", "x");
  dir.write("run/checkpoint_40.pt.tmp", "half");
  dir.write("run/config.yaml.tmp", "half");
  const auto plan = plan_run_directory(dir.path("run"), RunStart::kResume);
  apply_run_directory_plan(dir.path("run"), plan);
  EXPECT_FALSE(std::filesystem::exists(dir.path("run/checkpoint_40.pt.tmp")));
  EXPECT_FALSE(std::filesystem::exists(dir.path("run/config.yaml.tmp")));
  EXPECT_TRUE(std::filesystem::exists(dir.path("run/checkpoint_last.pt")));
}

TEST(RunDirectory, OneProcessAtATime) {
  test::TempDir dir;
  const auto held = lock_run_directory(dir.path("run"));
  const auto message = error_of([&] { lock_run_directory(dir.path("run")); });
  EXPECT_NE(message.find("in use by another training process (pid " + std::to_string(::getpid())),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace mixseq
