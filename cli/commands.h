// One add_<name>_command per subcommand, each defined in cli/<name>_command.cpp.
#pragma once

#include "command_table.h"

namespace mixseq::cli {

void add_demo_command(CLI::App& app, CommandTable& table);
void add_synth_command(CLI::App& app, CommandTable& table);
void add_prepare_command(CLI::App& app, CommandTable& table);
void add_spm_command(CLI::App& app, CommandTable& table);
void add_vocab_command(CLI::App& app, CommandTable& table);
void add_bleu_command(CLI::App& app, CommandTable& table);
void add_chrf_command(CLI::App& app, CommandTable& table);
void add_wer_command(CLI::App& app, CommandTable& table);
void add_train_command(CLI::App& app, CommandTable& table);
void add_translate_command(CLI::App& app, CommandTable& table);
void add_transcribe_command(CLI::App& app, CommandTable& table);
void add_synthesize_command(CLI::App& app, CommandTable& table);
void add_serve_command(CLI::App& app, CommandTable& table);
void add_score_command(CLI::App& app, CommandTable& table);
void add_quantize_command(CLI::App& app, CommandTable& table);
void add_lm_eval_command(CLI::App& app, CommandTable& table);
void add_generate_command(CLI::App& app, CommandTable& table);
void add_average_checkpoints_command(CLI::App& app, CommandTable& table);
void add_bench_command(CLI::App& app, CommandTable& table);
void add_bpe_command(CLI::App& app, CommandTable& table);
void add_plot_command(CLI::App& app, CommandTable& table);
void add_classify_command(CLI::App& app, CommandTable& table);

}  // namespace mixseq::cli
