// mixseq serve: a translation model, a speech recognizer, a classifier, a speech synthesizer, or
// several, behind an HTTP server (docs/serving.md).
//   mixseq --threads 4 serve -c runs/x/checkpoint_best.pt --speech-checkpoint runs/asr/checkpoint_best.pt
//   curl -s localhost:8080/translate -d '{"src": ["a sentence"]}'
//   curl -s localhost:8080/transcribe -H 'Content-Type: audio/wav' --data-binary @a.wav
//   curl -s localhost:8080/classify -d '{"text": ["a fine film"]}'    (with --classify-checkpoint)
//   curl -s localhost:8080/synthesize -d '{"text": "a dog runs"}' -o a.wav   (with --synthesis-checkpoint)
// Each model is loaded once; requests from every client are batched together for it.
#include <memory>
#include <optional>

#include "commands.h"
#include "mixseq/decode/speech_transcriber.h"
#include "mixseq/decode/text_to_speech.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/models/checkpoint.h"
#include "mixseq/models/registry.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/text/arpa_language_model.h"
#include "mixseq/quant/quantized_model.h"
#include "mixseq/serve/model_server.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"
#include "option_checks.h"
#include "search_flags.h"

namespace mixseq::cli {

namespace {

struct ServeArguments {
  std::vector<std::string> checkpoints;  // translation; several: an ensemble
  std::string speech_checkpoint;         // a speech recognizer's
  std::string classify_checkpoint;       // a sentence classifier's
  std::string synthesis_checkpoint;      // a speech synthesizer's
  std::string speech_lm;                 // an ARPA word model fused into /transcribe's beam search; "" = none
  CtcBeamSearchOptions speech_beam;      // /transcribe's decoding: beam_size 1 without speech_lm = greedy
  std::string device = "auto";
  std::string precision = "fp32";
  SearchFlags search;
  ServeOptions server;
  SynthesizeOptions synthesize;          // /synthesize: Griffin-Lim; the seed and the model's stopping as synthesize's defaults
};

// A speech recognizer's checkpoint given to -c is refused before loading with what to do instead
// (the translation loader would fail on its symbol list with a message that helps nobody).
void check_translation_checkpoint(const std::string& path) {
  const auto family = model_family(stored_model_config(read_checkpoint_contents(path), path).arch);
  MIXSEQ_CHECK(family != kSpeechRecognizerFamily, "serve: '", path,
               "' is a speech recognizer's checkpoint; serve it with --speech-checkpoint (-c takes a translation "
               "model's)");
}

}  // namespace

void add_serve_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand(
      "serve",
      "Serve trained models over HTTP: POST /translate (-c), POST /transcribe (--speech-checkpoint), POST /classify "
      "(--classify-checkpoint), POST /synthesize (--synthesis-checkpoint), GET / (a page), GET /info, GET /health, "
      "GET /metrics");
  auto arguments = std::make_shared<ServeArguments>();
  auto& server = arguments->server;
  command->add_option("-c,--checkpoint", arguments->checkpoints,
                      "Translation checkpoint (.pt) for POST /translate; repeat for an ensemble (log-probabilities averaged)")
      ->take_all();
  command->add_option("--speech-checkpoint", arguments->speech_checkpoint,
                      "Speech recognizer's checkpoint (.pt) for POST /transcribe (beside -c, or alone)");
  command->add_option("--host", server.host, "Address to listen on (0.0.0.0: every interface)")->capture_default_str();
  command->add_option("--port", server.port, "Port to listen on; 0 = any free port (the chosen one is printed)")
      ->check(in_range(0, 65535))
      ->capture_default_str();
  command->add_option("--http-threads", server.http_threads,
                      "Connections served at once (mixseq --threads sets the model's CPU threads)")
      ->check(in_range(1, 4096))
      ->capture_default_str();
  command->add_option("--max-batch-tokens", server.batching.max_batch_cost,
                      "Source tokens the model translates at once, gathered from every client's requests")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-wait-ms", server.batching.max_wait_ms,
                      "How long a request waits for others to join its batch (0: no wait); both endpoints")
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
  command->add_option("--max-batch-frames", server.speech_batching.max_batch_cost,
                      "Audio feature frames (10 ms each) transcribed at once, gathered from every client's requests")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-audio-bytes", server.max_audio_bytes, "Largest /transcribe body; larger ones get 413")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-audio-seconds", server.max_audio_seconds,
                      "Longest utterance /transcribe takes; a longer one gets 400 (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--min-audio-seconds", server.min_audio_seconds,
                      "Shortest utterance /transcribe takes; a shorter one gets 400 (0: no limit)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--speech-beam-size", arguments->speech_beam.beam_size,
                      "/transcribe: CTC prefix beam search with this many prefixes; 1 without --speech-lm = greedy")
      ->check(in_range(1, 4096))
      ->capture_default_str();
  command->add_option("--speech-lm", arguments->speech_lm,
                      "/transcribe: word n-gram model in ARPA format (.gz too) fused into the beam search");
  command->add_option("--speech-lm-weight", arguments->speech_beam.alpha,
                      "/transcribe: alpha, the weight of ln p_lm(words) in the beam search's score")
      ->capture_default_str();
  command->add_option("--speech-word-bonus", arguments->speech_beam.beta,
                      "/transcribe: beta, added to the beam search's score per word")
      ->capture_default_str();
  arguments->search.add_to(*command);
  command->add_option("--classify-checkpoint", arguments->classify_checkpoint,
                      "Sentence classifier's checkpoint (.pt) for POST /classify (beside the others, or alone)");
  command->add_option("--synthesis-checkpoint", arguments->synthesis_checkpoint,
                      "Speech synthesizer's checkpoint (.pt) for POST /synthesize (beside the others, or alone)");
  command->add_option("--max-batch-texts", server.synthesis_batching.max_batch_cost,
                      "/synthesize: texts spoken together in one batch")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-text-symbols", server.max_text_symbols,
                      "/synthesize: longest text, in synthesis symbols (400 beyond); 0 = no limit")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--griffin-lim-iters", arguments->synthesize.griffin_lim.iterations,
                      "/synthesize: Griffin-Lim phase iterations")
      ->check(at_least(0))
      ->capture_default_str();
  add_device_options(command, arguments->device, arguments->precision);
  table.add(command, [=] {
    MIXSEQ_CHECK(!arguments->checkpoints.empty() || !arguments->speech_checkpoint.empty() ||
                     !arguments->classify_checkpoint.empty() || !arguments->synthesis_checkpoint.empty(),
                 "serve: nothing to serve; give -c CHECKPOINT (translation), --speech-checkpoint CHECKPOINT, "
                 "--classify-checkpoint CHECKPOINT, --synthesis-checkpoint CHECKPOINT, or several");
    for (const char* synthesis_only : {"--max-batch-texts", "--max-text-symbols", "--griffin-lim-iters"})
      MIXSEQ_CHECK(command->count(synthesis_only) == 0 || !arguments->synthesis_checkpoint.empty(), "serve: ",
                   synthesis_only, " sets how /synthesize speaks; give --synthesis-checkpoint too");
    for (const char* speech_only : {"--speech-beam-size", "--speech-lm", "--speech-lm-weight", "--speech-word-bonus"})
      MIXSEQ_CHECK(command->count(speech_only) == 0 || !arguments->speech_checkpoint.empty(), "serve: ", speech_only,
                   " sets how /transcribe decodes; give --speech-checkpoint too");
    watch_stop_signals();  // SIGTERM and SIGINT drain the server; a second one ends it at once
    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    ServeOptions options = arguments->server;
    options.speech_batching.max_wait_ms = options.batching.max_wait_ms;  // --max-wait-ms: every endpoint
    options.synthesis_batching.max_wait_ms = options.batching.max_wait_ms;
    ServedModels models;

    std::optional<TrainedModel> trained;  // float, quantized or an ensemble
    std::optional<BatchTranslator> translator;
    const auto& checkpoints = arguments->checkpoints;
    if (!checkpoints.empty()) {
      for (const auto& path : checkpoints) check_translation_checkpoint(path);
      trained = load_translation_model(checkpoints, device);
      translator.emplace(*trained->model, trained->vocabulary, *trained->tokenizer, device, precision);
      models.translator = &*translator;
      models.source_language = trained->source_lang;
      models.target_language = trained->target_lang;
      models.search = arguments->search.resolve(trained->config_yaml, checkpoints.front());
      check_beam_search_options(models.search, trained->model->vocab_size());
      log_info("serve: /translate: ", checkpoints.front(),
               checkpoints.size() > 1 ? str_cat(" and ", checkpoints.size() - 1, " more (an ensemble)") : "", " on ",
               device.str(), " (", arguments->precision, "), beam ", models.search.beam_size,
               " unless a request asks otherwise");
    }
    std::optional<TrainedSpeechRecognizer> recognizer;
    std::optional<SpeechTranscriber> transcriber;
    if (!arguments->speech_checkpoint.empty()) {
      recognizer = load_trained_speech_recognizer(arguments->speech_checkpoint, device);
      transcriber.emplace(*recognizer, device, precision);
      models.transcriber = &*transcriber;
      models.speech_input = recognizer->input;
      models.transcribe.beam = arguments->speech_beam;
      if (!arguments->speech_lm.empty())
        models.transcribe.beam.language_model =
            std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::load(arguments->speech_lm));
      check_ctc_beam_search_options(models.transcribe.beam, recognizer->symbols);
      const auto& beam = models.transcribe.beam;
      log_info("serve: /transcribe: ", arguments->speech_checkpoint, " (", recognizer->config.arch, ", ",
               recognizer->input.sample_rate, " Hz) on ", device.str(), " (", arguments->precision, "), ",
               beam.beam_size == 1 && !beam.language_model
                   ? std::string("greedy CTC")
                   : str_cat("CTC beam ", beam.beam_size,
                             beam.language_model ? str_cat(" with ", arguments->speech_lm, " (alpha ", beam.alpha,
                                                           ", beta ", beam.beta, ")")
                                                 : std::string()));
    }
    std::optional<TrainedClassifier> classifier;
    if (!arguments->classify_checkpoint.empty()) {
      classifier = load_trained_classifier(arguments->classify_checkpoint, device);
      models.classifier = &*classifier;
      models.classifier_device = device;
      models.classifier_precision = precision;
      std::string labels;
      for (const auto& label : classifier->labels) labels += (labels.empty() ? "" : ", ") + label;
      log_info("serve: /classify: ", arguments->classify_checkpoint, " (labels ", labels, ") on ", device.str(), " (",
               arguments->precision, ")");
    }
    std::optional<TrainedSpeechSynthesizer> synthesizer;
    std::optional<TextToSpeech> speaker;
    if (!arguments->synthesis_checkpoint.empty()) {
      synthesizer = load_trained_speech_synthesizer(arguments->synthesis_checkpoint, device);
      speaker.emplace(*synthesizer, device, precision);
      models.synthesizer = &*speaker;
      models.synthesize = arguments->synthesize;
      log_info("serve: /synthesize: ", arguments->synthesis_checkpoint, " (", synthesizer->config.arch, ", ",
               synthesizer->input.sample_rate, " Hz, Griffin-Lim ", models.synthesize.griffin_lim.iterations,
               " iterations) on ", device.str(), " (", arguments->precision, ")");
    }
    ModelServer(options, models).run();
    return 0;  // a stop signal is how a server is meant to end: drained, not interrupted
  });
}

}  // namespace mixseq::cli
