// mixseq classify: labels text with a trained sentence classifier (decode/sentence_classification.h).
//   mixseq classify -c runs/sst2/transfer/checkpoint_best.pt -i dev.txt -o labels.tsv
//   mixseq classify -c ... -i dev.tsv --labelled --json      (text<TAB>label input: accuracy on stderr)
// One output line per input line, in order: the label as the training data wrote it, a tab, its
// probability; with --json, one JSON object per line with every label's probability. Lines are
// answered as they arrive (a pipe gets each buffer at once). An empty line is an error naming it.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/decode/sentence_classification.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/text/score_report.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/utf8.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

struct ClassifyArguments {
  std::string checkpoint;
  std::string input = "-";
  std::string output = "-";
  bool json = false;
  bool labelled = false;
  int64_t buffer_size = 256;
  std::string device = "auto";
  std::string precision = "fp32";
  ClassificationOptions options;
};

}  // namespace

void add_classify_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("classify", "Label text with a trained sentence classifier");
  auto arguments = std::make_shared<ClassifyArguments>();
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Classifier checkpoint (.pt)")->required();
  command->add_option("-i,--input", arguments->input, "Text, one per line (- = stdin)")->capture_default_str();
  command->add_option("-o,--output", arguments->output, "Labels, one line per input line (- = stdout)")
      ->capture_default_str();
  command->add_flag("--json", arguments->json,
                    "One JSON object per line: label, probability, every label's probability, unknown words");
  command->add_flag("--labelled", arguments->labelled,
                    "Input lines are text<TAB>label (as prepare --task classify reads them): the label is set "
                    "aside and the accuracy printed at the end");
  command->add_option("--buffer-size", arguments->buffer_size, "Lines read before answering (fewer from a pipe)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-tokens", arguments->options.max_tokens, "Tokens per batch (texts x longest)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-source-tokens", arguments->options.max_text_tokens,
                      "Longest text, in the model's tokens: a longer line is an error naming it (0 = no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  add_device_options(command, arguments->device, arguments->precision);
  table.add(command, [=] {
    refuse_output_over_inputs({"--output", arguments->output}, {{"--input", arguments->input},
                                                                 {"--checkpoint", arguments->checkpoint}});
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    const auto classifier = load_trained_classifier(arguments->checkpoint, device);
    LineReader reader(arguments->input);
    OutputFile out(arguments->output);
    int64_t lines = 0, correct = 0, unknown = 0;
    double seconds = 0;
    std::vector<std::string> texts, references;
    std::string line;
    const auto answer = [&] {
      const auto start = std::chrono::steady_clock::now();
      std::vector<ClassPrediction> predictions;
      try {
        predictions = classify_texts(classifier, texts, arguments->options, precision, device);
      } catch (const ClassificationTextError& e) {  // name the line of the input
        const int64_t line = reader.line_number() - static_cast<int64_t>(texts.size()) + e.index();
        if (e.problem() == ClassificationTextError::Problem::kEmpty)
          throw input_error(reader.path(), line, "no words the tokenizer keeps: every line needs words to classify");
        throw input_error(reader.path(), line, e.tokens(), " tokens, over the limit of ",
                          arguments->options.max_text_tokens, "; raise --max-source-tokens (0 = no limit)");
      }
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (size_t i = 0; i < predictions.size(); ++i) {
        const ClassPrediction& p = predictions[i];
        const std::string& label = classifier.labels[static_cast<size_t>(p.label)];
        unknown += p.unknown_tokens;
        if (arguments->labelled && label == references[i]) ++correct;
        if (arguments->json) {
          nlohmann::json record = {{"label", label}, {"probability", p.probability}, {"unknown_words", p.unknown_tokens}};
          nlohmann::json all = nlohmann::json::object();
          for (size_t c = 0; c < classifier.labels.size(); ++c) all[classifier.labels[c]] = p.probabilities[c];
          record["probabilities"] = all;
          if (arguments->labelled) record["reference"] = references[i];
          out.stream() << record.dump() << '\n';
        } else {
          out.stream() << label << '\t' << format_decimal(p.probability, 6) << '\n';
        }
      }
      lines += static_cast<int64_t>(texts.size());
      texts.clear();
      references.clear();
      out.flush();
    };
    for (bool ended = false; !ended;) {
      while (static_cast<int64_t>(texts.size()) < arguments->buffer_size) {
        if (!texts.empty() && !reader.line_waiting()) break;  // answer what a pipe gave so far
        if (!reader.next(line)) {
          ended = true;
          break;
        }
        std::string text = line;
        if (arguments->labelled) {
          const size_t tab = line.rfind('\t');
          if (tab == std::string::npos) reader.fail("no tab: with --labelled every line is `text<TAB>label`");
          const std::string reference(strip_whitespace(std::string_view(line).substr(tab + 1)));
          if (reader.line_number() == 1 && reference == "label") continue;  // a header
          if (reference.empty()) reader.fail("empty label after the text");
          if (std::find(classifier.labels.begin(), classifier.labels.end(), reference) == classifier.labels.end()) {
            std::string known;
            for (const auto& label : classifier.labels) known += (known.empty() ? "" : ", ") + label;
            reader.fail("label '", reference, "' is not one of the model's (", known, "): a typo would count as a miss");
          }
          text = line.substr(0, tab);
          references.push_back(reference);
        }
        if (strip_whitespace(text).empty()) reader.fail("empty text: every line needs words to classify");
        texts.push_back(std::move(text));
      }
      if (!texts.empty()) answer();
    }
    out.commit();
    std::ostringstream summary;
    summary << "classify: " << lines << " lines in " << format_decimal(seconds, 2) << " s ("
            << format_decimal(seconds > 0 ? lines / seconds : 0.0, 1) << " lines/s), " << unknown
            << " words outside the vocabulary";
    if (arguments->labelled && lines > 0)
      summary << "; accuracy " << format_decimal(100.0 * correct / lines, 2) << " (" << correct << " of " << lines << ")";
    log_info(summary.str());
    return 0;
  });
}

}  // namespace mixseq::cli
