// mixseq translate: raw text in, translations out, with a checkpoint alone.
//   mixseq translate -c runs/x/checkpoint_best.pt -i test.en -o test.hyp.de --beam-size 5
#include <chrono>
#include <iostream>
#include <memory>

#include "commands.h"
#include "mixseq/decode/translator.h"
#include "mixseq/quant/quantized_model.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct TranslateArguments {
  std::string checkpoint;
  std::string input = "-";
  std::string output = "-";
  std::string device = "auto";
  std::string precision = "fp32";
  bool show_scores = false;
  TranslateOptions options;
};

}  // namespace

void add_translate_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("translate", "Translate raw text with a trained checkpoint");
  auto arguments = std::make_shared<TranslateArguments>();
  auto& search = arguments->options.search;
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Checkpoint (.pt) written by mixseq train or quantize")->required();
  command->add_option("-i,--input", arguments->input, "Source text, one sentence per line (- = stdin)")
      ->capture_default_str();
  command->add_option("-o,--output", arguments->output, "Translations (- = stdout)")->capture_default_str();
  command->add_option("--beam-size", search.beam_size, "Hypotheses kept per sentence; 1 = greedy")
      ->check(in_range(1, kMaxBeamSize))
      ->capture_default_str();
  command->add_option("--length-penalty", search.length_penalty, "GNMT alpha; 0 disables")
      ->check(finite_number())
      ->capture_default_str();
  command->add_option("--coverage-penalty", search.coverage_penalty, "GNMT beta; 0 disables")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-len-a", search.max_len_a, "Max output tokens = a * source length + b")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-len-b", search.max_len_b, "Max output tokens = a * source length + b")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--nbest", search.nbest, "Translations per sentence (n-best list output), at most --beam-size")
      ->check(in_range(1, kMaxBeamSize))
      ->capture_default_str();
  command->add_option("--max-tokens", arguments->options.max_tokens, "Source tokens per batch")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-source-tokens", arguments->options.max_source_tokens,
                      "Longest source in tokens; a longer line is an error (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_flag("--truncate-long-sources", arguments->options.truncate_long_sources,
                    "Cut sources longer than --max-source-tokens instead of stopping");
  command->add_option("--device", arguments->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--precision", arguments->precision, "auto (bf16 where native, else fp32), fp32, bf16, fp16 (GPU) or tf32 (GPU)")->capture_default_str();
  command->add_flag("--scores", arguments->show_scores, "Write 'index ||| translation ||| score' lines");
  table.add(command, [=] {
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    auto trained = load_translation_model(arguments->checkpoint, device);  // float or quantized
    Translator translator(*trained.model, trained.vocabulary, *trained.tokenizer, device, precision);
    const auto sources = read_lines(arguments->input);

    const auto start = std::chrono::steady_clock::now();
    const auto translations = translator.translate(sources, arguments->options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    OutputFile out(arguments->output);
    int64_t output_tokens = 0;
    const bool nbest_format = arguments->show_scores || arguments->options.search.nbest > 1;
    for (size_t i = 0; i < translations.size(); ++i) {
      output_tokens += translations[i].front().tokens;
      if (!nbest_format) {
        out.stream() << translations[i].front().text << '\n';
        continue;
      }
      for (const auto& hypothesis : translations[i])
        out.stream() << i << " ||| " << hypothesis.text << " ||| " << hypothesis.score << '\n';
    }
    out.commit();
    log_info("translate: ", sources.size(), " sentences in ", seconds, " s: ", sources.size() / seconds,
             " sentences/s, ", output_tokens / seconds, " output tokens/s (beam ",
             arguments->options.search.beam_size, ", ", arguments->precision, ", ", device.str(), ")");
    return 0;
  });
}

}  // namespace mixseq::cli
