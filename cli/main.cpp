// mixseq: one command for training, translating and scoring sequence models.
// The table below is the only place that names every subcommand.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "command_table.h"
#include "commands.h"
#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"

namespace mixseq::cli {

int CommandTable::run_chosen() const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->first->parsed()) return it->second();
  return 1;
}

namespace {

const std::vector<void (*)(CLI::App&, CommandTable&)> kCommands = {
    add_synth_command,
    add_bpe_command,
};

// sacreBLEU spells its lowercase flag "-lc", which no option parser reads as one short flag.
std::vector<std::string> spell_out_sacrebleu_flags(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto& arg : args)
    if (arg == "-lc") arg = "--lowercase";
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  return args;
}

}  // namespace
}  // namespace mixseq::cli

int main(int argc, char** argv) {
  using namespace mixseq::cli;
  CLI::App app{"mixseq: train, translate and score sequence models with mixed precision"};
  app.require_subcommand(1);
  app.fallthrough();
  int threads = 0;
  app.add_option("--threads", threads, "CPU threads for LibTorch and OpenBLAS (0: one per core)");
  CommandTable table;
  for (auto add : kCommands) add(app, table);

  auto args = spell_out_sacrebleu_flags(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    mixseq::configure_threads(threads);
    return table.run_chosen();
  } catch (const std::exception& e) {
    std::cerr << "mixseq: error: " << e.what() << '\n';
    return 1;
  }
}
