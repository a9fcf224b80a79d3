// mixseq average-checkpoints: one model from the mean weights of several checkpoints, as
// fairseq's scripts/average_checkpoints.py.
//   mixseq average-checkpoints --run-dir runs/x --num 5 -o runs/x/checkpoint_avg5.pt
//   mixseq average-checkpoints --inputs a.pt b.pt c.pt -o avg.pt
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/train/checkpoint_average.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct AverageArguments {
  std::vector<std::string> inputs;
  std::string run_dir;
  int64_t num = 0;
  std::string output;
};

}  // namespace

void add_average_checkpoints_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("average-checkpoints", "Average the weights of several checkpoints into one");
  auto arguments = std::make_shared<AverageArguments>();
  auto* inputs = command->add_option("--inputs", arguments->inputs, "Checkpoints (.pt) to average");
  auto* run_dir = command->add_option("--run-dir", arguments->run_dir,
                                      "Average the newest numbered checkpoints (checkpoint_<update>.pt) of this run");
  auto* num = command->add_option("--num", arguments->num, "How many numbered checkpoints --run-dir averages")
                  ->check(at_least(1));
  command->add_option("-o,--output", arguments->output, "The averaged checkpoint (.pt)")->required();
  inputs->excludes(run_dir)->excludes(num);
  run_dir->needs(num);
  num->needs(run_dir);
  table.add(command, [=] {
    MIXSEQ_CHECK(!arguments->inputs.empty() || !arguments->run_dir.empty(),
                 "give the checkpoints to average: --inputs A.pt B.pt ... or --run-dir DIR --num N");
    const auto paths = arguments->inputs.empty() ? last_numbered_checkpoints(arguments->run_dir, arguments->num)
                                                 : arguments->inputs;
    std::vector<NamedPath> named;  // --run-dir's checkpoints are no option's values: main() cannot see them
    const std::string flag = arguments->inputs.empty() ? "a checkpoint of --run-dir" : "--inputs";
    for (const auto& path : paths) named.push_back({flag, path});
    refuse_output_over_inputs({"--output", arguments->output}, named);
    for (const auto& path : paths) log_info("average-checkpoints: ", path);
    average_checkpoints(paths, arguments->output);
    log_info("average-checkpoints: wrote the mean of ", paths.size(), " checkpoints to ", arguments->output);
    return 0;
  });
}

}  // namespace mixseq::cli
