// The only place that lists the training tasks (style R3): one row per model family.
#include "mixseq/train/training_tasks.h"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/train/classification_task.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/train/language_model_task.h"
#include "mixseq/train/run_schedule.h"
#include "mixseq/train/speech_recognition_task.h"
#include "mixseq/train/speech_synthesis_task.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/translation_task.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/config_keys.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"

namespace mixseq {
namespace {

using TaskFactory = std::function<std::unique_ptr<TrainingTask>(const TrainConfig&, const TrainingSession&)>;

struct TaskRow {
  std::string name;                   // the task's name in messages and docs
  std::vector<std::string> settings;  // config paths (a key or a whole section) that only this task reads
  TaskFactory make;
};

// Model family (models/registry.h) -> the task that trains it.
const std::map<std::string, TaskRow> kTasks = {
    {kSeq2SeqFamily,
     {"translation",
      {"criterion", "validation_search", "data.max_tokens", "data.max_sentences", "data.max_length",
       "data.sentence_multiple", "data.valid_max_tokens", "train.validate_bleu", "train.target_bleu"},
      make_translation_task}},
    {kLanguageModelFamily, {"language_model", {"lm"}, make_language_model_task}},
    {kSpeechRecognizerFamily, {"speech_recognition", {"speech"}, make_speech_recognition_task}},
    {kSentenceClassifierFamily, {"classification", {"classify"}, make_classification_task}},
    {kSpeechSynthesizerFamily, {"speech_synthesis", {"synthesis"}, make_speech_synthesis_task}},
};

const TaskRow& task_of(const std::string& arch) {
  const std::string family = model_family(arch);
  const auto it = kTasks.find(family);
  MIXSEQ_CHECK(it != kTasks.end(), "no training task trains model.arch '", arch, "' (a ",
               model_family_description(family), ")");
  return it->second;
}

// The settings of every task but `own`.
std::vector<std::string> settings_of_other_tasks(const TaskRow& own) {
  std::vector<std::string> paths;
  for (const auto& [family, row] : kTasks)
    if (row.name != own.name)
      for (const auto& path : row.settings)
        if (!within_any(path, own.settings)) paths.push_back(path);
  return paths;
}

}  // namespace

std::string training_task_name(const std::string& arch) { return task_of(arch).name; }

void check_task_settings(const std::string& arch, const std::vector<ConfigKeyPlace>& keys) {
  const TaskRow& own = task_of(arch);
  for (const auto& key : keys)
    for (const auto& [family, row] : kTasks)
      if (row.name != own.name && within_any(key.path, row.settings) && !within_any(key.path, own.settings))
        throw Error(str_cat(key.where, ": ", key.path, " is a setting of the ", row.name, " task, but model.arch '",
                            arch, "' trains with the ", own.name, " task, which does not read it; remove it"));
}

std::string task_config_yaml(const TrainConfig& config) {
  TrainConfig copy = config;
  return config_to_yaml_excluding(copy.fields(), settings_of_other_tasks(task_of(config.model.arch)));
}

namespace {

// The keys set in the config file and the overrides: none may be one that only another task than
// model.arch's reads.
void check_set_keys(const TrainConfig& config, const std::string& config_path,
                    const std::vector<ConfigOverride>& overrides) {
  std::vector<ConfigKeyPlace> keys;
  if (!config_path.empty()) keys = config_keys_in_file(config_path);
  for (const auto& entry : overrides) keys.push_back({entry.path, "--" + entry.path});
  check_task_settings(config.model.arch, keys);
}

}  // namespace

TrainConfig resolve_train_config(const std::string& config_path, const std::vector<ConfigOverride>& overrides,
                                 RunStart start) {
  TrainConfig config;
  if (!config_path.empty()) read_config_file(config_path, config.fields());
  apply_config_overrides(overrides, config.fields());
  const auto last = last_checkpoint_path(config.train.run_dir);
  if (start != RunStart::kResume || !std::filesystem::exists(last)) {
    check_set_keys(config, config_path, overrides);
    return config;
  }
  TrainConfig stored;
  read_config_yaml(read_checkpoint_contents(last).config_yaml, last + " (stored config)", stored.fields());
  apply_config_overrides(overrides, stored.fields());
  check_set_keys(stored, "", overrides);
  return stored;
}

TrainSummary train_model(const TrainConfig& config, RunStart start) {
  const TaskRow& row = task_of(config.model.arch);
  MIXSEQ_CHECK(!config.data.dir.empty(), "data.dir is empty: give the folder written by `mixseq prepare`");
  TrainingSession session(config.train, config.distributed, start);
  const auto task = row.make(config, session);
  const TaskMetric metric = task->metric();
  const std::string& best_metric = config.train.best_metric;
  MIXSEQ_CHECK(best_metric == "auto" || best_metric == "loss" || best_metric == metric.name, "train.best_metric '",
               best_metric, "' is not measured by the ", row.name, " task here; choose auto, loss",
               metric.name == "loss" ? "" : " or " + metric.name);
  MIXSEQ_CHECK(config.train.target_bleu == 0 || metric.name == "bleu", "train.target_bleu (", config.train.target_bleu,
               ") needs validation BLEU, which the ", row.name, " task does not measure");

  torch::nn::Module& model = task->model();
  auto optimizer = build_optimizer(config.optim, task->parameter_groups());
  UpdateStep update_step(model, *optimizer, config.clipping, config.loss_scaler, session.precision(), session.device());
  TrainConfig stored = config;
  task->complete_model_config(stored.model);
  const std::string config_yaml = task_config_yaml(stored);
  session.begin(config_yaml, config.data.dir, task->describe_data(), model, *optimizer, update_step);
  task->restore_state(session.progress());
  log_info("train: configuration\n", config_yaml);
  log_info("train: ", row.name, " task, ", task->description(), ", device ", session.device().str(), ", precision ",
           config.train.precision);
  RunSchedule schedule(session, config.schedule, config.optim.lr, task->updates_per_epoch());
  // Everything is checked: only now does the run folder change (--overwrite deletes the old run).
  session.open_run_directory(config_yaml);
  return run_training(session, schedule, *task, *optimizer, update_step);
}

}  // namespace mixseq
