// Checks for numeric command-line options. CLI11 runs them while it parses, so a bad value stops
// the command before any work, with the flag, the value and what is allowed:
//   mixseq translate --length-penalty nan   ->  --length-penalty: nan is not a finite number
//   mixseq synth --train-size -5            ->  --train-size: -5 is out of range; it must be at least 0
// Every numeric option of every subcommand carries one. CLI11's own CLI::Range lets nan through
// (every comparison with nan is false) and prints its bounds as "1.000000".
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace mixseq::cli {

CLI::Validator finite_number();                            // any number but nan and +-inf
CLI::Validator at_least(double minimum);                   // a finite number >= minimum
CLI::Validator above(double minimum);                      // a finite number > minimum
CLI::Validator in_range(double minimum, double maximum);   // a finite number in [minimum, maximum]

// --device (auto, cpu, cuda, cuda:N) and --precision (auto, fp32, bf16, fp16, tf32), as the commands
// that run a model take them; resolve them with util/mixed_precision.h's resolve_device/_precision.
void add_device_options(CLI::App* command, std::string& device, std::string& precision);

}  // namespace mixseq::cli
