// mixseq translate: raw text in, translations out, with a checkpoint alone.
//   mixseq translate -c runs/x/checkpoint_best.pt -i test.en -o test.hyp.de --beam-size 5
// It streams: each buffer of input lines is translated and written as soon as it is complete,
// so a long file shows progress and a pipe can be used interactively (fairseq-interactive).
#include <chrono>
#include <iostream>
#include <memory>

#include "commands.h"
#include "mixseq/api/translator.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"
#include "search_flags.h"

namespace mixseq::cli {

namespace {

struct TranslateArguments {
  std::vector<std::string> checkpoints;  // several: an ensemble
  std::string input = "-";
  std::string output = "-";
  std::string device = "auto";
  std::string precision = "fp32";
  int64_t buffer_size = 1000;  // input lines translated together at most
  bool show_scores = false;
  bool moses_nbest = false;
  bool print_alignment = false;
  SearchFlags search;
  TranslatorOptions options;  // device and precision are set from the strings above
};

// Fills `lines` with the next buffer: up to `size` lines, fewer when the input has no further
// line waiting (an interactive pipe) or ends. Returns false when nothing was left to read.
bool read_buffer(LineReader& reader, int64_t size, std::vector<std::string>& lines) {
  lines.clear();
  for (std::string line; static_cast<int64_t>(lines.size()) < size;) {
    if (!lines.empty() && !reader.line_waiting()) break;
    if (!reader.next(line)) break;
    lines.push_back(std::move(line));
  }
  return !lines.empty();
}

// fairseq's alignment string: "source-target" position pairs, e.g. "0-0 2-1 1-2".
std::string alignment_text(const std::vector<int64_t>& alignment) {
  std::string text;
  for (size_t t = 0; t < alignment.size(); ++t) text += (t ? " " : "") + std::to_string(alignment[t]) + "-" + std::to_string(t);
  return text;
}

}  // namespace

void add_translate_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("translate", "Translate raw text with a trained checkpoint");
  auto arguments = std::make_shared<TranslateArguments>();
  command->add_option("-c,--checkpoint", arguments->checkpoints,
                      "Checkpoint (.pt) written by mixseq train or quantize; repeat for an ensemble (log-probabilities averaged)")
      ->required()
      ->take_all();
  command->add_option("-i,--input", arguments->input, "Source text, one sentence per line (- = stdin)")
      ->capture_default_str();
  command->add_option("-o,--output", arguments->output, "Translations (- = stdout)")->capture_default_str();
  arguments->search.add_to(*command);
  command->add_option("--buffer-size", arguments->buffer_size,
                      "Input lines translated together; each buffer is written as soon as it is done, and a "
                      "buffer ends early when no further line is waiting (interactive use through a pipe)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-tokens", arguments->options.max_tokens, "Source tokens per batch")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--workers", arguments->options.workers,
                      "CPU: batches decoded side by side, each on its share of the threads (0: one per thread; "
                      "1: one batch at a time on all threads)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-source-tokens", arguments->options.max_source_tokens,
                      "Longest source in tokens; a longer line is an error (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_flag("--truncate-long-sources", arguments->options.truncate_long_sources,
                    "Cut sources longer than --max-source-tokens instead of stopping");
  add_device_options(command, arguments->device, arguments->precision);
  command->add_flag("--scores", arguments->show_scores, "Write 'index ||| translation ||| score' lines");
  command->add_flag("--moses-nbest", arguments->moses_nbest,
                    "Write n-best lines in Moses' format: 'index ||| translation ||| F0= score ||| score'");
  command->add_flag("--print-alignment", arguments->print_alignment,
                    "Add ' ||| ' and each output piece's most attended source piece as 'source-target' pairs, "
                    "0-based (fairseq's --print-alignment; the source's </s> is position n)");
  table.add(command, [=] {
    auto opened = arguments->options;
    opened.device = resolve_device(arguments->device, "--device").str();  // errors name the flag
    opened.precision = arguments->precision;
    opened.threads = -1;  // main() applied --threads
    const Translator translator(arguments->checkpoints, opened);  // float, quantized or an ensemble
    // The flags over the checkpoint's stored search, checked before the first line is read.
    TranslationOptions options;
    const auto given = arguments->search.overrides();
    options.beam_size = given.beam_size;
    options.length_penalty = given.length_penalty;
    options.coverage_penalty = given.coverage_penalty;
    options.max_len_a = given.max_len_a;
    options.max_len_b = given.max_len_b;
    options.nbest = given.nbest.value_or(1);
    options.return_alignment = arguments->print_alignment;
    options = translator.resolve(options);

    LineReader reader(arguments->input);
    OutputFile out(arguments->output);
    const bool nbest_format = arguments->show_scores || arguments->moses_nbest || options.nbest > 1;
    int64_t sentences = 0, output_tokens = 0;
    double seconds = 0;
    for (std::vector<std::string> sources; read_buffer(reader, arguments->buffer_size, sources);) {
      const auto start = std::chrono::steady_clock::now();
      options.first_line = sentences + 1;
      const auto translations = translator.translate_batch(sources, options);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (size_t i = 0; i < translations.size(); ++i, ++sentences) {
        output_tokens += translations[i].hypotheses.front().tokens;
        for (const auto& hypothesis : translations[i].hypotheses) {
          if (nbest_format) out.stream() << sentences << " ||| ";
          out.stream() << hypothesis.text;
          if (nbest_format) out.stream() << " ||| ";
          if (arguments->moses_nbest) out.stream() << "F0= " << hypothesis.score << " ||| ";
          if (nbest_format) out.stream() << hypothesis.score;
          if (arguments->print_alignment) out.stream() << " ||| " << alignment_text(hypothesis.alignment);
          out.stream() << '\n';
          if (!nbest_format) break;  // the best alone
        }
      }
      out.flush();  // a reader at the other end of a pipe gets this buffer now
    }
    out.commit();
    if (sentences == 0) {  // (the rates of nothing were "-nan sentences/s")
      log_info("translate: the input held no sentences");
      return 0;
    }
    log_info("translate: ", sentences, " sentences in ", seconds, " s of translation: ", sentences / seconds,
             " sentences/s, ", output_tokens / seconds, " output tokens/s (beam ", *options.beam_size, ", ",
             translator.quantization().empty() ? translator.precision()
                                               : translator.quantization() + " layers, " + translator.precision() +
                                                     " elsewhere",
             ", ", translator.device(), ")");
    return 0;
  });
}

}  // namespace mixseq::cli
