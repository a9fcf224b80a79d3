// The subcommand table. Each cli/<name>_command.cpp adds its subcommand (and its options) to
// the parser and says what to run when the user chose it; main() parses, then runs the choice.
// Arguments no option took are collected: subcommands that read configuration overrides
// ("--train.precision bf16") take them, the others reject them.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mixseq::cli {

using CommandRun = std::function<int()>;  // returns the process exit code

class CommandTable {
 public:
  void add(CLI::App* command, CommandRun run) { entries_.push_back({command, std::move(run), false}); }
  void add_with_overrides(CLI::App* command, CommandRun run) { entries_.push_back({command, std::move(run), true}); }

  // Runs the innermost chosen subcommand, e.g. "bpe learn" rather than "bpe".
  int run_chosen() const;

  void set_extra_arguments(std::vector<std::string> arguments) { extra_arguments_ = std::move(arguments); }
  const std::vector<std::string>& extra_arguments() const { return extra_arguments_; }

 private:
  struct Entry {
    CLI::App* command;
    CommandRun run;
    bool takes_overrides;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> extra_arguments_;
};

}  // namespace mixseq::cli
