// mixseq train: trains a translation or language model (as model.arch says) from a YAML config
// and command-line overrides.
//   mixseq train --config configs/gnmt_tiny.yaml --data.dir data --train.precision bf16
//   mixseq train --config ... --resume      (continues <run_dir>/checkpoint_last.pt)
//   mixseq train --config ... --overwrite   (deletes a previous run's checkpoints and metrics first)
#include <iostream>
#include <memory>

#include "commands.h"
#include "config_arguments.h"
#include "mixseq/train/training_tasks.h"
#include "mixseq/util/log.h"

namespace mixseq::cli {

namespace {

struct TrainArguments {
  std::string config_path;
  bool resume = false;
  bool overwrite = false;
  bool print_config = false;

  RunStart start() const { return resume ? RunStart::kResume : overwrite ? RunStart::kOverwrite : RunStart::kNew; }
};

}  // namespace

void add_train_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand(
      "train", "Train a translation or language model; any --<section>.<key> VALUE overrides the config (see --print-config)");
  auto arguments = std::make_shared<TrainArguments>();
  command->add_option("-c,--config", arguments->config_path, "YAML config (configs/*.yaml)");
  auto* resume = command->add_flag("--resume", arguments->resume,
                                    "Continue <run_dir>/checkpoint_last.pt (a new or empty run_dir starts fresh)");
  command->add_flag("--overwrite", arguments->overwrite,
                    "Delete the checkpoints and metrics of a previous run in run_dir, then start fresh")
      ->excludes(resume);
  command->add_flag("--print-config", arguments->print_config, "Print the resolved config and exit");
  table.add_with_overrides(command, [=, &table] {
    const auto config = resolve_train_config(arguments->config_path, parse_config_overrides(table.extra_arguments()),
                                             arguments->start());
    if (arguments->print_config) {
      std::cout << task_config_yaml(config);
      return 0;
    }
    const auto summary = train_model(config, arguments->start());
    if (summary.stop_signal != 0) {
      // Not 0: a script or scheduler must see that the run did not finish.
      log_info("train: stopped by signal ", summary.stop_signal, " at update ", summary.steps, "; ",
               last_checkpoint_path(config.train.run_dir), " is saved: continue with --resume");
      return 128 + summary.stop_signal;
    }
    const std::string early = summary.out_of_patience ? " (stopped early: train.patience)" : "";
    // A finished run resumed validates nothing: its best loss is the one the earlier runs kept.
    std::string best;
    if (summary.metric != "loss")
      best = str_cat("best validation ", summary.metric == "bleu" ? "BLEU" : summary.metric, " ", summary.best_score);
    else if (summary.validations > 0)
      best = str_cat("last validation loss ", summary.last_valid_loss);
    else if (summary.best_loss >= 0)
      best = str_cat("best validation loss ", summary.best_loss, " (no validation in this run)");
    else
      best = "no validation";
    log_info("train: done", early, ": ", summary.steps, " updates, ", summary.epochs, " epochs, ", best, ", ",
             summary.seconds, " s");
    // As NVIDIA's benchmark mode: a run that set a target and missed it has failed.
    MIXSEQ_CHECK(config.train.target_bleu == 0 || summary.reached_target, "train: validation BLEU never reached ",
                 "train.target_bleu ", config.train.target_bleu, " (best ", summary.best_score, ")");
    return 0;
  });
}

}  // namespace mixseq::cli
