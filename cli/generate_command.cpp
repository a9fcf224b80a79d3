// mixseq generate: continues a prompt with a trained language model, greedily or by sampling.
//   mixseq generate -c runs/wt2/checkpoint_best.pt --prompt "The game began" --max-tokens 50
//   mixseq generate -c ... --prompt "..." --temperature 0.8 --top-p 0.9 --seed 3
// The prompt is read as a line of the training text would be, after the end of a previous line;
// the continuation is written to stdout as it is generated (word by word), an end-of-sentence
// token as a line break. SIGINT or SIGTERM stop it after the current token, exit 130 or 143.
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/data/lm_text.h"
#include "mixseq/decode/lm_generation.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct GenerateArguments {
  std::string checkpoint;
  std::string prompt;
  std::string device = "auto";
  std::string precision = "fp32";
  int64_t mem_len = -1;
  GenerationOptions options;
};

// Writes generated ids as text while they come (issue 29: a million-token generation wrote nothing
// until its end, and a stop lost it all). A line's pieces decode together (a subword joins the
// rest of its word), so a piece is written once the next one shows where its word ends: when the
// pending pieces decode to the text of all but the newest, a space, then the newest alone. The
// text written is what decoding each whole line gives; </s> ends a line.
class StreamingDetokenizer {
 public:
  StreamingDetokenizer(const TrainedLanguageModel& trained, std::ostream& out) : trained_(trained), out_(out) {}

  void add(int64_t id) {
    if (id == kEosId) {
      out_ << decode(pending_) << '\n' << std::flush;
      pending_.clear();
      return;
    }
    pending_.push_back(id);
    if (pending_.size() < 2) return;
    const std::vector<int64_t> head(pending_.begin(), pending_.end() - 1);
    const auto written = decode(head);
    if (decode(pending_) != written + " " + decode({id})) return;  // the newest piece continues a word
    out_ << written << ' ' << std::flush;
    pending_ = {id};
  }
  // Writes what is pending and ends the last line.
  void finish() { out_ << decode(pending_) << std::endl; }

 private:
  std::string decode(const std::vector<int64_t>& ids) const {
    return trained_.tokenizer->decode(trained_.vocabulary.decode(ids));
  }

  const TrainedLanguageModel& trained_;
  std::ostream& out_;
  std::vector<int64_t> pending_;  // pieces of the current line not written yet
};

}  // namespace

void add_generate_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("generate", "Continue a prompt with a trained language model");
  auto arguments = std::make_shared<GenerateArguments>();
  auto& options = arguments->options;
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Language-model checkpoint (.pt)")->required();
  command->add_option("--prompt", arguments->prompt, "Text to continue, tokenized as the training text")->required();
  command->add_option("--max-tokens", options.max_tokens, "Tokens to generate")
      ->check(in_range(1, 1 << 20))
      ->capture_default_str();
  command->add_flag("--greedy", options.greedy, "The likeliest token each time instead of sampling");
  command->add_option("--temperature", options.temperature, "Sampling temperature")
      ->check(above(0))
      ->capture_default_str();
  command->add_option("--top-k", options.top_k, "Sample among the k likeliest tokens; 0 = all")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--top-p", options.top_p, "Sample within the smallest set of probability >= p; 1 = all")
      ->check(in_range(1e-9, 1))
      ->capture_default_str();
  command->add_option("--seed", options.seed, "Seed of the sampling")->capture_default_str();
  command->add_flag("--stop-at-eos", options.stop_at_eos, "Stop at the end of the line");
  command->add_option("--mem-len", arguments->mem_len, "Memory length; -1 = the model's")
      ->check(in_range(-1, 1 << 20))
      ->capture_default_str();
  add_device_options(command, arguments->device, arguments->precision);
  table.add(command, [=] {
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    auto trained = load_trained_language_model(arguments->checkpoint, device);
    if (arguments->mem_len >= 0) {
      auto context = trained.model->context();
      context.mem_len = arguments->mem_len;
      trained.model->set_context(context);
    }
    const auto prompt = encode_prompt(arguments->prompt, *trained.tokenizer, trained.vocabulary, "--prompt");
    watch_stop_signals();  // SIGINT or SIGTERM: stop after the current token, with every token written
    StreamingDetokenizer text(trained, std::cout);
    const auto generated =
        generate_tokens(*trained.model, prompt, arguments->options, device, precision, [&](int64_t id) {
          text.add(id);
          MIXSEQ_CHECK(std::cout.good(), "generate: cannot write to standard output");
          return !stop_requested();
        });
    text.finish();
    MIXSEQ_CHECK(std::cout.good(), "generate: cannot write to standard output");
    if (stop_requested()) {
      log_info("generate: stopped by a signal after ", generated.size(), " of ", arguments->options.max_tokens,
               " tokens; every one was written");
      return 128 + stop_signal();
    }
    return 0;
  });
}

}  // namespace mixseq::cli
