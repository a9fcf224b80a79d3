#include "mixseq/train/run_directory.h"

#include <algorithm>
#include <filesystem>

#include "mixseq/train/checkpoint_average.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"

namespace mixseq {
namespace {

std::string file_names(const std::vector<std::string>& paths) {
  std::string names;
  for (const auto& path : paths) names += (names.empty() ? "" : ", ") + std::filesystem::path(path).filename().string();
  return names;
}

}  // namespace

std::string last_checkpoint_path(const std::string& run_dir) { return run_dir + "/checkpoint_last.pt"; }
std::string best_checkpoint_path(const std::string& run_dir) { return run_dir + "/checkpoint_best.pt"; }
std::string metrics_path(const std::string& run_dir) { return run_dir + "/metrics.jsonl"; }

FileLock lock_run_directory(const std::string& run_dir) {
  create_folder(run_dir);
  FileLock lock(run_dir + "/train.lock");
  if (lock.held()) return lock;
  const std::string holder = lock.holder_pid() > 0 ? str_cat("pid ", lock.holder_pid()) : "pid not yet written";
  throw Error(str_cat("'", run_dir, "' is in use by another training process (", holder, ", holding ", lock.path(),
                      "); wait for it to end or stop it, or train into another --train.run_dir"));
}

std::vector<std::string> previous_run_results(const std::string& run_dir) {
  std::vector<std::string> found = numbered_checkpoints(run_dir);
  const std::string metrics = metrics_path(run_dir);
  for (const auto& path : {last_checkpoint_path(run_dir), best_checkpoint_path(run_dir), metrics}) {
    std::error_code unreadable;  // (a run_dir that is no folder: create_folder names it when the run starts)
    const auto status = std::filesystem::status(path, unreadable);
    if (!std::filesystem::exists(status)) continue;
    // A folder (or a device) where a run keeps a file of its own: --resume read it as a damaged
    // checkpoint and --overwrite could not delete it; say so before anything is done.
    MIXSEQ_CHECK(std::filesystem::is_regular_file(status), "'", path, "' is ",
                 std::filesystem::is_directory(status) ? "a folder" : "not a regular file",
                 ", where a training run keeps a file of its own: move it away, or train into another "
                 "--train.run_dir");
    // An empty metrics.jsonl is a run that stopped before its first record (a config value refused
    // when the loss was built): nothing to keep, and no reason to refuse the corrected command.
    if (path == metrics && std::filesystem::file_size(path, unreadable) == 0) continue;
    found.push_back(path);
  }
  std::sort(found.begin(), found.end());
  return found;
}

RunDirectoryPlan plan_run_directory(const std::string& run_dir, RunStart start) {
  RunDirectoryPlan plan;
  const auto results = previous_run_results(run_dir);
  if (results.empty()) return plan;
  switch (start) {
    case RunStart::kNew:
      throw Error(str_cat("'", run_dir, "' holds a previous run (", file_names(results),
                          "); continue it with --resume, train into another --train.run_dir, or pass --overwrite "
                          "to delete these files and start over"));
    case RunStart::kResume:
      MIXSEQ_CHECK(std::filesystem::exists(last_checkpoint_path(run_dir)), "--resume: '", run_dir,
                   "' has no checkpoint_last.pt to continue but holds a previous run (", file_names(results),
                   "); pass --overwrite instead of --resume to delete these files and start over, or train into "
                   "another --train.run_dir");
      plan.resume = true;
      return plan;
    case RunStart::kOverwrite:
      plan.files_to_delete = results;
      return plan;
  }
  return plan;
}

void apply_run_directory_plan(const std::string& run_dir, const RunDirectoryPlan& plan) {
  create_folder(run_dir);
  for (const auto& path : plan.files_to_delete) {
    std::filesystem::remove(path);
    log_info("train: starting over: deleted ", path);
  }
  // A save writes <file>.tmp and renames it (checkpoint.h, output_file.h): one still there was
  // never finished, and its process is gone, since we hold the lock.
  std::vector<std::filesystem::path> unfinished;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir))
    if (entry.is_regular_file() && entry.path().extension() == ".tmp") unfinished.push_back(entry.path());
  for (const auto& path : unfinished) {
    std::filesystem::remove(path);
    log_info("train: deleted ", path.string(), ", left by an interrupted save");
  }
}

}  // namespace mixseq
