// The training tasks, one per model family (models/registry.h), and `train_model`, which runs
// the one that model.arch calls for. src/train/training_tasks.cpp is the only place that lists
// them: a new task is its own file (a TrainingTask, train/training_task.h) and one row there
// (the family it trains, its name, the settings only it reads, its factory).
//
// Each task's settings are its own: a config file or command-line override that sets a key only
// another task reads (criterion.* for a language model, lm.* for translation) is an error naming
// the key, the task that reads it and the task this run is, instead of a setting silently
// ignored. The configuration stored in the run folder and the checkpoints has the sections of
// the run's own task only.
#pragma once

#include <string>
#include <vector>

#include "mixseq/train/run_directory.h"
#include "mixseq/train/run_training.h"
#include "mixseq/train/train_config.h"
#include "mixseq/util/config_keys.h"

namespace mixseq {

// The name of the task that trains model.arch `arch` ("translation", "language_model").
// Throws mixseq::Error for an unknown architecture, listing the known ones.
std::string training_task_name(const std::string& arch);

// Throws mixseq::Error for the first key of `keys` that only another task than arch's reads.
void check_task_settings(const std::string& arch, const std::vector<ConfigKeyPlace>& keys);

// `config` as YAML with the sections and keys of arch's task only (for config.yaml and checkpoints).
std::string task_config_yaml(const TrainConfig& config);

// The configuration a run trains with (`mixseq train -c CONFIG --a.b VALUE ...`, the library's
// train()): the file's (none when `config_path` is empty) with the overrides applied, every key
// set checked against model.arch's task. A resumed run (RunStart::kResume with a last checkpoint
// in run_dir) continues with the configuration it was started with; only the overrides (e.g. a
// larger train.max_epochs) change it.
TrainConfig resolve_train_config(const std::string& config_path, const std::vector<ConfigOverride>& overrides,
                                 RunStart start);

// Trains from scratch or continues <run_dir>/checkpoint_last.pt, as `start` and the folder's
// contents say (train/run_directory.h: a previous run is never overwritten without
// RunStart::kOverwrite), with the task model.arch calls for, through run_training
// (train/run_training.h, which says what a stop signal leaves).
TrainSummary train_model(const TrainConfig& config, RunStart start);

}  // namespace mixseq
