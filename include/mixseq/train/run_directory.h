// The run folder of `mixseq train` (train.run_dir): what a run leaves there, and the rules that
// keep a new run from destroying a previous run's results.
//
// A previous run's results are checkpoint_last.pt, checkpoint_best.pt, the numbered
// checkpoint_<update>.pt and metrics.jsonl. A new run refuses a folder that holds any of them;
// a resumed run needs checkpoint_last.pt among them (a new or empty folder starts fresh); only
// RunStart::kOverwrite deletes them. Other files (config.yaml, which every start rewrites, or
// the user's own, such as an averaged checkpoint) are left alone.
//
// One process trains in a folder at a time: it holds <run_dir>/train.lock (util/file_lock.h)
// from before it looks at the folder until it ends; a second one is refused, with the holder's
// pid. plan_run_directory only looks; apply_run_directory_plan changes the folder. In a
// data-parallel job rank 0 locks and applies, and every rank plans (so all refuse alike).
#pragma once

#include <string>
#include <vector>

#include "mixseq/util/file_lock.h"

namespace mixseq {

// How a training run treats a folder that already holds a run (`mixseq train` flags in brackets).
enum class RunStart {
  kNew,        // start fresh; refuse a folder that holds a previous run's results (the default)
  kResume,     // continue checkpoint_last.pt; a folder without results starts fresh (--resume)
  kOverwrite,  // delete a previous run's results, then start fresh (--overwrite)
};

// "<run_dir>/checkpoint_last.pt", "<run_dir>/checkpoint_best.pt", "<run_dir>/metrics.jsonl".
std::string last_checkpoint_path(const std::string& run_dir);
std::string best_checkpoint_path(const std::string& run_dir);
std::string metrics_path(const std::string& run_dir);

// Creates run_dir and locks it for this process until the lock is destroyed or the process
// ends; throws mixseq::Error naming the holder's pid when another process trains there.
FileLock lock_run_directory(const std::string& run_dir);

// The previous run's results in run_dir, as paths, sorted; empty for a new or empty folder.
std::vector<std::string> previous_run_results(const std::string& run_dir);

struct RunDirectoryPlan {
  bool resume = false;                       // continue from checkpoint_last.pt
  std::vector<std::string> files_to_delete;  // kOverwrite: the previous run's results
};

// Decides, without changing anything, what starting a run in run_dir means. Throws
// mixseq::Error naming the folder, the files found and the choices when `start` would
// overwrite a previous run's results (kNew) or cannot continue them (kResume without
// checkpoint_last.pt).
RunDirectoryPlan plan_run_directory(const std::string& run_dir, RunStart start);

// Creates run_dir and deletes plan.files_to_delete and the "*.tmp" files that saves
// interrupted by a crash or SIGKILL left behind (only the lock holder may), logging each.
void apply_run_directory_plan(const std::string& run_dir, const RunDirectoryPlan& plan);

}  // namespace mixseq
