// mixseq serve: a checkpoint behind an HTTP server (docs/serving.md).
//   mixseq --threads 4 serve -c runs/x/checkpoint_best.pt --port 8080
//   curl -s localhost:8080/translate -d '{"src": ["a sentence"]}'
// The model is loaded once; requests from every client are batched together for it.
#include <memory>

#include "commands.h"
#include "mixseq/decode/translator.h"
#include "mixseq/quant/quantized_model.h"
#include "mixseq/serve/translation_server.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"
#include "option_checks.h"
#include "search_flags.h"

namespace mixseq::cli {

namespace {

struct ServeArguments {
  std::vector<std::string> checkpoints;  // several: an ensemble
  std::string device = "auto";
  std::string precision = "fp32";
  SearchFlags search;
  ServeOptions server;
};

}  // namespace

void add_serve_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand(
      "serve", "Serve a trained checkpoint over HTTP: POST /translate, GET /health, GET /metrics");
  auto arguments = std::make_shared<ServeArguments>();
  auto& server = arguments->server;
  command->add_option("-c,--checkpoint", arguments->checkpoints,
                      "Checkpoint (.pt) written by mixseq train; repeat for an ensemble (log-probabilities averaged)")
      ->required()
      ->take_all();
  command->add_option("--host", server.host, "Address to listen on (0.0.0.0: every interface)")->capture_default_str();
  command->add_option("--port", server.port, "Port to listen on; 0 = any free port (the chosen one is printed)")
      ->check(in_range(0, 65535))
      ->capture_default_str();
  command->add_option("--http-threads", server.http_threads,
                      "Connections served at once (mixseq --threads sets the model's CPU threads)")
      ->check(in_range(1, 4096))
      ->capture_default_str();
  command->add_option("--max-batch-tokens", server.batching.max_batch_tokens,
                      "Source tokens the model translates at once, gathered from every client's requests")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-wait-ms", server.batching.max_wait_ms,
                      "How long a request waits for others to join its batch (0: no wait)")
      ->check(in_range(0, 60000))
      ->capture_default_str();
  command->add_option("--max-body-bytes", server.max_body_bytes, "Largest request body; larger ones get 413")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-sentences", server.max_sentences, "Most sentences in one request; more get 413")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-source-tokens", server.max_source_tokens,
                      "Longest sentence in tokens; a longer one gets 400 (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--max-beam-size", server.max_beam_size, "Largest beam_size a request may ask for")
      ->check(in_range(1, kMaxBeamSize))
      ->capture_default_str();
  arguments->search.add_to(*command);
  command->add_option("--device", arguments->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--precision", arguments->precision,
                      "auto (bf16 where native, else fp32), fp32, bf16, fp16 (GPU) or tf32 (GPU)")
      ->capture_default_str();
  table.add(command, [=] {
    watch_stop_signals();  // SIGTERM and SIGINT drain the server; a second one ends it at once
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    auto trained = load_translation_model(arguments->checkpoints, device);  // float, quantized or an ensemble
    Translator translator(*trained.model, trained.vocabulary, *trained.tokenizer, device, precision);
    const auto search = arguments->search.resolve(trained.config_yaml, arguments->checkpoints.front());
    check_beam_search_options(search, trained.model->vocab_size());
    const auto& checkpoints = arguments->checkpoints;
    log_info("serve: ", checkpoints.front(),
             checkpoints.size() > 1 ? str_cat(" and ", checkpoints.size() - 1, " more (an ensemble)") : "", " on ",
             device.str(), " (", arguments->precision, "), beam ", search.beam_size, " unless a request asks otherwise");
    TranslationServer(arguments->server, translator, search).run();
    return 0;  // a stop signal is how a server is meant to end: drained, not interrupted
  });
}

}  // namespace mixseq::cli
