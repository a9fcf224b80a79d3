// mixseq: one command for training, translating and scoring sequence models.
// The table below is the only place that names every subcommand.
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <algorithm>
#include <new>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "command_table.h"
#include "commands.h"
#include "mixseq/distributed/launch_environment.h"
#include "mixseq/util/allocator.h"
#include "mixseq/util/tensor_memory.h"
#include "mixseq/util/cpu_kernels.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/nearest_name.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/threads.h"

namespace mixseq::cli {

namespace {

std::string flag_of(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return "--" + option.get_lnames().front();
  if (!option.get_snames().empty()) return "-" + option.get_snames().front();
  return option.get_single_name();  // a positional argument's name
}

// Every subcommand's -o/--output is checked against the values of all its other options before it
// runs, so that no command (a new one included) replaces a file it reads, nor does its work first.
void refuse_outputs_over_options(const CLI::App& command) {
  std::vector<NamedPath> outputs, inputs;
  for (const auto* option : command.get_options()) {
    const auto& long_names = option->get_lnames();
    const bool output = std::find(long_names.begin(), long_names.end(), "output") != long_names.end();
    for (const auto& value : option->results()) (output ? outputs : inputs).push_back({flag_of(*option), value});
    // An input left at "-" reads standard input, which may be the output's file (`-o x < x`).
    if (!output && option->results().empty() && option->get_default_str() == "-")
      inputs.push_back({flag_of(*option), "-"});
  }
  for (const auto& output : outputs) mixseq::refuse_output_over_inputs(output, inputs);
}

// An extra argument "--name" without a dot is no configuration override (--train.precision bf16):
// a mistyped option ("--resme"), which took the next word as its value and was never named.
void refuse_unknown_flags(const CLI::App& command, const std::vector<std::string>& extra_arguments) {
  for (const auto& argument : extra_arguments) {
    if (argument.rfind("--", 0) != 0) continue;
    const std::string name = argument.substr(2, argument.find('=') - 2);  // (npos - 2: to the end)
    if (name.find('.') != std::string::npos) continue;
    std::vector<std::string> flags;
    for (const auto* option : command.get_options())
      for (const auto& long_name : option->get_lnames()) flags.push_back(long_name);
    throw mixseq::Error(mixseq::str_cat("unknown option '--", name, "' for mixseq ", command.get_name(),
                                        mixseq::did_you_mean(name, flags),
                                        " (configuration overrides name a section and a key: --train.precision bf16)"));
  }
}

}  // namespace

int CommandTable::run_chosen() const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (!it->command->parsed()) continue;
    if (!it->takes_overrides && !extra_arguments_.empty())
      throw mixseq::Error(mixseq::str_cat("unexpected argument '", extra_arguments_.front(), "' for mixseq ",
                                          it->command->get_name(), "; see mixseq ", it->command->get_name(),
                                          " --help"));
    if (it->takes_overrides) refuse_unknown_flags(*it->command, extra_arguments_);
    refuse_outputs_over_options(*it->command);
    return it->run();
  }
  return 1;
}

namespace {

const std::vector<void (*)(CLI::App&, CommandTable&)> kCommands = {
    add_demo_command,     add_synth_command,    add_bpe_command,     add_spm_command,
    add_vocab_command,    add_prepare_command,  add_train_command,   add_average_checkpoints_command,
    add_translate_command, add_transcribe_command, add_synthesize_command, add_classify_command, add_serve_command,  add_score_command,   add_quantize_command,
    add_lm_eval_command,  add_generate_command, add_bleu_command,   add_chrf_command,
    add_wer_command,      add_bench_command,    add_plot_command,
};

// sacreBLEU spells some flags with one dash and several letters ("-lc", "-tok"), which no option
// parser reads as one short flag ("-sl" would even parse as "-s l"): they become their long names.
const std::map<std::string, std::string> kSacrebleuFlags = {
    {"-lc", "--lowercase"},     {"-tok", "--tokenize"},        {"-sl", "--sentence-level"},
    {"-sv", "--smooth-value"},  {"-sh", "--short"},            {"-cc", "--chrf-char-order"},
    {"-cw", "--chrf-word-order"},
};

std::vector<std::string> spell_out_sacrebleu_flags(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto& arg : args) {
    const auto it = kSacrebleuFlags.find(arg);
    if (it != kSacrebleuFlags.end()) arg = it->second;
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  return args;
}

// "mixseq trian" left CLI11 saying only "A subcommand is required": name the word it did not know
// and the nearest command ("unknown spm command 'trian'; did you mean 'train'?"), or list the
// commands when none was given. "" when the failure is not a missing subcommand.
std::string missing_command_message(const CLI::App& app) {
  const CLI::App* parent = &app;
  std::string scope;  // "" for mixseq's own commands, "spm " for those of mixseq spm
  for (auto chosen = parent->get_subcommands(); !chosen.empty(); chosen = parent->get_subcommands()) {
    parent = chosen.front();
    scope += parent->get_name() + " ";
  }
  std::vector<std::string> known;
  for (const auto* subcommand : parent->get_subcommands({})) known.push_back(subcommand->get_name());
  if (known.empty()) return "";
  for (const auto& word : app.remaining())
    if (!word.empty() && word.front() != '-')
      return mixseq::str_cat("unknown ", scope, "command '", word, "'", mixseq::did_you_mean(word, known));
  std::string list;
  for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
  return mixseq::str_cat("mixseq ", scope, "needs a command: ", list, "; see mixseq ", scope, "--help");
}

// Standard output is buffered: a failed write (a full disk, a closed pipe) shows only when it is
// flushed. `mixseq bleu ref -i hyp > /dev/full` must fail rather than lose the score with exit 0.
int exit_after_flushing_stdout(int status) {
  errno = 0;
  std::cout.flush();
  // stdio's flush even when std::cout is already bad: it tries again what a failed write left, and
  // so says why (the failed write came earlier, inside an operator<<, and its errno is gone).
  const bool flushed = std::fflush(stdout) == 0;
  if (std::cout.good() && flushed) return status;
  std::cerr << "mixseq: error: cannot write to standard output: " << mixseq::standard_output_error() << '\n';
  return status != 0 ? status : 1;
}

// "mixseq 0.1.0 (LibTorch 1.13.0, CPU)": which LibTorch matters for speed and for the GPU path.
std::string version_text() {
#ifdef MIXSEQ_WITH_CUDA
  const char* devices = "CPU and CUDA";
#else
  const char* devices = "CPU";
#endif
  return std::string("mixseq ") + MIXSEQ_VERSION + " (LibTorch " + TORCH_VERSION + ", " + devices + "; " +
         describe_cpu_kernels(choose_cpu_kernels()) + "; tensor memory: " + describe_tensor_memory() + ")";
}

// The commands whose speed the CPU's kernels decide: they name them in their first log line.
bool runs_models(const CLI::App& app) {
  static const std::vector<std::string> names = {"train", "translate", "bench", "demo", "serve", "lm-eval",
                                                 "generate", "score", "quantize", "average-checkpoints"};
  for (const auto* command : app.get_subcommands())
    if (std::find(names.begin(), names.end(), command->get_name()) != names.end()) return true;
  return false;
}

}  // namespace
}  // namespace mixseq::cli

int main(int argc, char** argv) {
  using namespace mixseq::cli;
  mixseq::keep_standard_output_errors();  // before anything is printed
  // Before any product: OpenBLAS's kernels where it picked weaker ones than this CPU runs.
  mixseq::choose_cpu_kernels();
  mixseq::keep_freed_memory_for_reuse();
  mixseq::use_huge_pages_for_tensors();
  CLI::App app{"mixseq: train, translate and score sequence models with mixed precision", "mixseq"};
  app.set_version_flag("--version", version_text(), "print mixseq's version and the LibTorch it was built with");
  app.require_subcommand(1);
  // Option errors begin as every other error does (CLI11 wrote "--train-size: -5 is out of range").
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("mixseq: error: ") + e.what() + "\nRun with --help for more information.\n";
  });
  app.fallthrough();
  app.allow_extras();  // subcommands that take config overrides read them; the others reject extras below
  int threads = 0;
  app.add_option("--threads", threads,
                 "CPU threads for LibTorch and OpenBLAS (0: every usable core, shared out among a node's ranks, "
                 "fewer while other processes keep cores busy; docs/threads.md)");
  CommandTable table;
  for (auto add : kCommands) add(app, table);

  auto args = spell_out_sacrebleu_flags(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::RequiredError& e) {
    const std::string missing = missing_command_message(app);
    if (missing.empty()) return app.exit(e);
    std::cerr << "mixseq: error: " << missing << '\n';
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return exit_after_flushing_stdout(app.exit(e));  // --help prints to stdout
  }
  try {
    table.set_extra_arguments(app.remaining());
    // Ranks of a data-parallel job on one node share its cores (docs/distributed.md).
    const auto launch = mixseq::detect_launch_environment();
    mixseq::configure_threads(threads, static_cast<int>(launch.local_world_size));
    mixseq::release_initial_thread_binding();  // before any thread is started: they inherit its CPUs
    if (runs_models(app))
      mixseq::log_info("mixseq: CPU kernels: ", mixseq::describe_cpu_kernels(mixseq::choose_cpu_kernels()),
                       "; tensor memory: ", mixseq::describe_tensor_memory());
    return exit_after_flushing_stdout(table.run_chosen());
  } catch (const c10::Error& e) {
    // LibTorch's what() carries a page of C++ stack frames; the message alone says what went wrong.
    std::cerr << "mixseq: error: " << e.what_without_backtrace() << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "mixseq: error: out of memory (std::bad_alloc): the input or an option asks for more than this "
                 "machine can give; check sizes, lengths and counts given to the command\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "mixseq: error: " << e.what() << '\n';
    return 1;
  }
}
