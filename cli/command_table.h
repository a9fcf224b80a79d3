// The subcommand table. Each cli/<name>_command.cpp adds its subcommand (and its options) to
// the parser and says what to run when the user chose it; main() parses, then runs the choice.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <utility>
#include <vector>

namespace mixseq::cli {

using CommandRun = std::function<int()>;  // returns the process exit code

class CommandTable {
 public:
  void add(CLI::App* command, CommandRun run) { entries_.emplace_back(command, std::move(run)); }
  // Runs the innermost chosen subcommand, e.g. "bpe learn" rather than "bpe".
  int run_chosen() const;

 private:
  std::vector<std::pair<CLI::App*, CommandRun>> entries_;
};

}  // namespace mixseq::cli
