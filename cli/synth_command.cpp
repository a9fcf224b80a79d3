// mixseq synth: writes the built-in number-words task as plain parallel text.
#include <memory>

#include "commands.h"
#include "mixseq/data/synthetic_numbers.h"
#include "mixseq/util/log.h"
#include "option_checks.h"

namespace mixseq::cli {

void add_synth_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("synth", "Write the built-in English->German number-words task");
  auto options = std::make_shared<NumberTaskOptions>();
  auto out_dir = std::make_shared<std::string>();
  command->add_option("-o,--output-dir", *out_dir, "Folder for {train,valid,test}.{en,de}")->required();
  command->add_option("--seed", options->seed, "Seed that fixes every split")->check(at_least(0))->capture_default_str();
  command->add_option("--train-size", options->train_size, "Training pairs")->check(at_least(0))->capture_default_str();
  command->add_option("--valid-size", options->valid_size, "Validation pairs")->check(at_least(0))->capture_default_str();
  command->add_option("--test-size", options->test_size, "Test pairs")->check(at_least(0))->capture_default_str();
  command->add_option("--max-numbers", options->max_numbers_per_sentence, "Numbers per sentence, at most")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-value", options->max_value, "Largest number")
      ->check(in_range(1, kMaxNumberValue))
      ->capture_default_str();
  table.add(command, [=] {
    write_number_task(make_number_task(*options), *out_dir);
    log_info("synth: wrote ", options->train_size, "/", options->valid_size, "/", options->test_size,
             " train/valid/test pairs to ", *out_dir);
    return 0;
  });
}

}  // namespace mixseq::cli
