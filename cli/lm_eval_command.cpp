// mixseq lm-eval: the perplexity of a text under a trained language model, with the long memory
// of Transformer-XL's evaluation (its eval.py defaults: segments of 64, memory 640, clamp_len
// 400, same_length), plus throughput and per-segment latency.
//   mixseq lm-eval -c runs/wt2/checkpoint_best.pt -i valid.txt
//   mixseq lm-eval -c ... -i valid.txt --target-perplexity 200 --json   (exit 1 when missed)
//   mixseq lm-eval -c ... -i valid.txt --cache-window 2000 --cache-theta 0.03 --cache-lambda 0.25
//     (the continuous cache of decode/continuous_cache.h mixed in; the settings chosen for
//     WikiText-2's Transformer-XL in docs/benchmarks.md)
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "mixseq/data/lm_text.h"
#include "mixseq/decode/lm_evaluation.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/text/score_report.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct LmEvalArguments {
  std::string checkpoint;
  std::string input;
  std::string device = "auto";
  std::string precision = "fp32";
  LmEvaluationOptions evaluation;
  LmContext context{640, 400, true};
  double target_perplexity = 0;
  double target_throughput = 0;
  bool json = false;
};

// The q-quantile (0..1) of `values` by the nearest rank, as NVIDIA's Transformer-XL benchmark reports them.
double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::min(values.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

void add_lm_eval_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("lm-eval", "Perplexity of a text under a trained language model");
  auto arguments = std::make_shared<LmEvalArguments>();
  auto& evaluation = arguments->evaluation;
  auto& context = arguments->context;
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Language-model checkpoint (.pt)")->required();
  command->add_option("-i,--input", arguments->input, "Text, tokenized as the training text (- = stdin)")->required();
  command->add_option("--batch-size", evaluation.batch_size, "Parallel streams")
      ->check(in_range(1, 1 << 20))
      ->capture_default_str();
  command->add_option("--tgt-len", evaluation.tgt_len, "Tokens per segment")
      ->check(in_range(1, 1 << 20))
      ->capture_default_str();
  command->add_option("--mem-len", context.mem_len, "Memory length (earlier tokens attended to)")
      ->check(in_range(0, 1 << 20))
      ->capture_default_str();
  command->add_option("--clamp-len", context.clamp_len, "Largest relative distance encoded; -1 = no clamp")
      ->check(in_range(-1, 1 << 20))
      ->capture_default_str();
  command->add_option("--same-length", context.same_length, "Every position attends to as many tokens (true/false)")
      ->capture_default_str();
  command->add_option("--max-segments", evaluation.max_segments, "Score only the first N segments; 0 = all")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--cache-window", evaluation.cache.window,
                      "Continuous cache (Grave et al. 2017): earlier positions of each stream whose next word "
                      "may be copied; 0 = no cache")
      ->check(in_range(0, 1 << 20))
      ->capture_default_str();
  command->add_option("--cache-theta", evaluation.cache.theta, "How sharply the cache prefers similar states (> 0)")
      ->check(above(0))
      ->capture_default_str();
  command->add_option("--cache-lambda", evaluation.cache.lambda, "The cache's weight in the mixture (0..1)")
      ->check(in_range(0, 1))
      ->capture_default_str();
  command->add_option("--target-perplexity", arguments->target_perplexity,
                      "Exit 1 when the perplexity is above this; 0 = no target")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--target-throughput", arguments->target_throughput,
                      "Exit 1 when fewer tokens/s are scored; 0 = no target")
      ->check(at_least(0))
      ->capture_default_str();
  add_device_options(command, arguments->device, arguments->precision);
  command->add_flag("--json", arguments->json, "Print the results as one JSON line");
  table.add(command, [=] {
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    auto trained = load_trained_language_model(arguments->checkpoint, device);
    trained.model->set_context(arguments->context);
    const auto text = read_lm_text(arguments->input, *trained.tokenizer, trained.vocabulary);
    if (text.unknown_tokens > 0)
      log_info("lm-eval: ", text.unknown_tokens, " of ", text.tokens.size(), " tokens of ", arguments->input,
               " are not in the model's vocabulary and are read as <unk>");
    // Each of the --batch-size streams needs 2 tokens at least (an input and its next word).
    const auto tokens = static_cast<int64_t>(text.tokens.size());
    MIXSEQ_CHECK(tokens >= 2, "'", arguments->input, "' has ", tokens == 0 ? "no text" : "a single token",
                 " to evaluate: a perplexity needs 2 tokens at least");
    MIXSEQ_CHECK(tokens / arguments->evaluation.batch_size >= 2, "'", arguments->input, "' has ", tokens,
                 " tokens, too few for --batch-size ", arguments->evaluation.batch_size,
                 " (streams of 2 tokens at least): give --batch-size ", tokens / 2, " or less");
    LmEvaluation result;
    try {
      result = evaluate_language_model(*trained.model, text.tokens, arguments->evaluation, device, precision);
    } catch (const Error& e) {
      throw Error(str_cat("'", arguments->input, "' (", text.tokens.size(), " tokens): ", e.what()));
    }

    const double tokens_per_second = static_cast<double>(result.tokens) / std::max(result.seconds, 1e-9);
    const auto& latencies = result.segment_milliseconds;
    double mean_ms = 0;
    for (const double ms : latencies) mean_ms += ms / static_cast<double>(latencies.size());
    nlohmann::json record = {{"loss", result.loss()},
                             {"ppl", result.perplexity()},
                             {"tokens", result.tokens},
                             {"tok_per_s", tokens_per_second},
                             {"segments", latencies.size()},
                             {"latency_ms_mean", mean_ms},
                             {"latency_ms_p90", percentile(latencies, 0.90)},
                             {"latency_ms_p95", percentile(latencies, 0.95)},
                             {"latency_ms_p99", percentile(latencies, 0.99)},
                             {"batch_size", arguments->evaluation.batch_size},
                             {"tgt_len", arguments->evaluation.tgt_len},
                             {"mem_len", arguments->context.mem_len},
                             {"clamp_len", arguments->context.clamp_len},
                             {"cache_window", arguments->evaluation.cache.window},
                             {"precision", precision_name(precision)},
                             {"device", device.str()}};
    std::string line = str_cat("lm-eval | ", arguments->input, " | ", result.tokens, " tokens | loss ",
                               format_decimal(result.loss(), 4), " | ppl ", format_decimal(result.perplexity(), 2));
    if (arguments->evaluation.cache.window > 0) {
      record["cache_theta"] = arguments->evaluation.cache.theta;
      record["cache_lambda"] = arguments->evaluation.cache.lambda;
      line += str_cat(" | cache ", arguments->evaluation.cache.window, " theta ",
                      format_decimal(arguments->evaluation.cache.theta, 3), " lambda ",
                      format_decimal(arguments->evaluation.cache.lambda, 3));
    }
    if (is_character_level(trained.vocabulary)) {
      const double bits_per_character = result.loss() / std::log(2.0);
      record["bpc"] = bits_per_character;
      line += str_cat(" | bpc ", format_decimal(bits_per_character, 4));
    }
    line += str_cat(" | ", format_decimal(tokens_per_second, 0), " tok/s | latency ms mean ",
                    format_decimal(mean_ms, 1), " p90 ", format_decimal(percentile(latencies, 0.90), 1), " p95 ",
                    format_decimal(percentile(latencies, 0.95), 1), " p99 ",
                    format_decimal(percentile(latencies, 0.99), 1));
    std::cout << (arguments->json ? record.dump() : line) << std::endl;
    MIXSEQ_CHECK(std::cout.good(), "lm-eval: cannot write the results to standard output");

    // As the reference's benchmark mode: a missed target is a failure.
    int status = 0;
    if (arguments->target_perplexity > 0 && !(result.perplexity() <= arguments->target_perplexity)) {
      log_info("lm-eval: perplexity ", format_decimal(result.perplexity(), 2), " is above --target-perplexity ",
               arguments->target_perplexity);
      status = 1;
    }
    if (arguments->target_throughput > 0 && tokens_per_second < arguments->target_throughput) {
      log_info("lm-eval: ", format_decimal(tokens_per_second, 0), " tok/s is below --target-throughput ",
               arguments->target_throughput);
      status = 1;
    }
    return status;
  });
}

}  // namespace mixseq::cli
