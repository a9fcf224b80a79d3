#include "mixseq/api/training.h"

#include "api/process_setup.h"
#include "mixseq/train/training_tasks.h"
#include "mixseq/util/error.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {

// cli/train_command.cpp runs the same steps.
TrainingResult train(const std::string& config_path, const std::vector<std::pair<std::string, std::string>>& overrides,
                     const TrainingOptions& options) {
  MIXSEQ_CHECK(!(options.resume && options.overwrite), "TrainingOptions: resume and overwrite exclude each other");
  api::configure_process_threads(options.threads, "TrainingOptions::threads");
  std::vector<ConfigOverride> settings;
  for (const auto& [path, value] : overrides) settings.push_back({path, value});
  const RunStart start = options.resume ? RunStart::kResume : options.overwrite ? RunStart::kOverwrite : RunStart::kNew;
  const auto config = resolve_train_config(config_path, settings, start);
  TrainSummary summary;
  {
    const StopSignalScope signals;  // the caller's SIGINT/SIGTERM handlers come back afterwards
    summary = train_model(config, start);
  }
  MIXSEQ_CHECK(summary.stop_signal != 0 || config.train.target_bleu == 0 || summary.reached_target,
               "train: validation BLEU never reached train.target_bleu ", config.train.target_bleu, " (best ",
               summary.best_score, ")");
  TrainingResult result;
  result.steps = summary.steps;
  result.epochs = summary.epochs;
  result.seconds = summary.seconds;
  result.metric = summary.metric;
  result.best_score = summary.best_score;
  result.last_valid_loss = summary.last_valid_loss;
  result.stopped_early = summary.out_of_patience;
  result.stop_signal = summary.stop_signal;
  result.run_dir = config.train.run_dir;
  result.best_checkpoint = best_checkpoint_path(config.train.run_dir);
  result.last_checkpoint = last_checkpoint_path(config.train.run_dir);
  return result;
}

}  // namespace mixseq
