// One add_<name>_command per subcommand, each defined in cli/<name>_command.cpp.
#pragma once

#include "command_table.h"

namespace mixseq::cli {

void add_synth_command(CLI::App& app, CommandTable& table);
void add_bpe_command(CLI::App& app, CommandTable& table);

}  // namespace mixseq::cli
