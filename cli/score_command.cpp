// mixseq score: log P(target | source) of given translations under a checkpoint (forced
// decoding), one line per pair, as marian-scorer and fairseq-generate --score-reference do.
//   mixseq score -c runs/x/checkpoint_best.pt -s test.en -t test.hyp.de > test.scores
#include <memory>

#include "commands.h"
#include "mixseq/decode/reference_scorer.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct ScoreArguments {
  std::vector<std::string> checkpoints;  // several: an ensemble
  std::string source;
  std::string target;
  std::string output = "-";
  std::string device = "auto";
  std::string precision = "fp32";
  ReferenceScoreOptions options;  // --max-tokens, --max-source-tokens, --max-target-tokens
  bool normalize = false;     // divide by the target's tokens (its </s> included)
};

}  // namespace

void add_score_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("score", "Log-probability of given translations under a checkpoint (forced decoding)");
  auto arguments = std::make_shared<ScoreArguments>();
  command->add_option("-c,--checkpoint", arguments->checkpoints,
                      "Checkpoint (.pt) written by mixseq train; repeat for an ensemble (log-probabilities averaged)")
      ->required()
      ->take_all();
  command->add_option("-s,--source", arguments->source, "Source text, one sentence per line (- = stdin)")->required();
  command->add_option("-t,--target", arguments->target, "Translations to score, line by line with the source")
      ->required();
  command->add_option("-o,--output", arguments->output, "Scores, one a line (- = stdout)")->capture_default_str();
  command->add_flag("--normalize", arguments->normalize,
                    "Divide each log-probability by its target's tokens, </s> included (marian-scorer's --normalize)");
  command->add_option("--max-tokens", arguments->options.max_tokens,
                      "Tokens per batch: pairs x (longest source + longest target)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-source-tokens", arguments->options.max_source_tokens,
                      "Longest source sentence in tokens; a longer one is an error naming its line (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-target-tokens", arguments->options.max_target_tokens,
                      "Longest target sentence in tokens; a longer one is an error naming its line (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  add_device_options(command, arguments->device, arguments->precision);
  table.add(command, [=] {
    const auto name = [](const std::string& path) { return path == "-" ? std::string("<stdin>") : path; };
    MIXSEQ_CHECK(arguments->source != "-" || arguments->target != "-",
                 "-s and -t both read standard input ('-'), which holds one text: give at most one of them as '-'");
    const auto sources = read_lines(arguments->source);
    const auto targets = read_lines(arguments->target);
    MIXSEQ_CHECK(sources.size() == targets.size(), "-s '", name(arguments->source), "' has ", sources.size(),
                 " lines but -t '", name(arguments->target), "' has ", targets.size(),
                 "; score needs one translation per source line");
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    auto trained = load_trained_models(arguments->checkpoints, device);
    ReferenceScorer scorer(*trained.model, trained.vocabulary, *trained.tokenizer, device, precision);
    auto options = arguments->options;
    options.source_name = name(arguments->source);
    options.target_name = name(arguments->target);
    const auto scores = scorer.score(sources, targets, options);
    OutputFile out(arguments->output);
    for (const auto& score : scores)
      out.stream() << (arguments->normalize ? score.log_prob / static_cast<double>(score.tokens) : score.log_prob)
                   << '\n';
    out.commit();
    log_info("score: ", scores.size(), " pairs scored");
    return 0;
  });
}

}  // namespace mixseq::cli
