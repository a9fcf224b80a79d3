// mixseq::train: `mixseq train` as a function call, for programs and the Python module.
//
//   #include <mixseq/mixseq.h>
//   auto result = mixseq::train("configs/transformer_tiny.yaml",
//                               {{"data.dir", "runs/demo/data"}, {"train.max_time", "120"}});
//   std::cout << result.best_checkpoint << " BLEU " << result.best_score << '\n';
//
// Contract. The same run as `mixseq train -c CONFIG --path VALUE ...` with `TrainingOptions`'
// flags: the config file (none when the path is empty) with the overrides applied in order
// (dotted paths, values as text, e.g. {"train.precision", "bf16"}); every check, log line,
// metrics.jsonl record, checkpoint and exit condition of the command. The call returns when the
// run ends: its budget used, its patience out, or a SIGINT/SIGTERM received (stop_signal says so;
// the last checkpoint is saved and `resume` continues it). It logs to standard error as the
// command does.
//
// Errors. A bad config key or value, a run folder holding another run (without resume or
// overwrite), unreadable data, a missed train.target_bleu: std::runtime_error (mixseq::Error) with
// the command's message.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mixseq {

struct TrainingOptions {
  bool resume = false;     // continue <run_dir>/checkpoint_last.pt (`mixseq train --resume`)
  bool overwrite = false;  // delete a previous run's checkpoints and metrics first (`--overwrite`)
  int threads = 0;         // CPU threads, as `mixseq --threads` (process-wide, the first facade decides; -1 = leave)
};

struct TrainingResult {
  int64_t steps = 0;              // updates done in total (across resumes)
  int64_t epochs = 0;             // epochs completed
  double seconds = 0;             // wall time of this call's training
  std::string metric;             // the task's validation metric ("bleu", "accuracy", "wer", "loss", ...)
  double best_score = -1;         // its best validation value; -1 when never measured
  double last_valid_loss = 0;     // at the last validation
  bool stopped_early = false;     // train.patience ended the run
  int stop_signal = 0;            // SIGINT or SIGTERM when a signal stopped it; 0 otherwise
  std::string run_dir;            // train.run_dir
  std::string best_checkpoint;    // <run_dir>/checkpoint_best.pt
  std::string last_checkpoint;    // <run_dir>/checkpoint_last.pt
};

TrainingResult train(const std::string& config_path, const std::vector<std::pair<std::string, std::string>>& overrides = {},
                     const TrainingOptions& options = {});

}  // namespace mixseq
