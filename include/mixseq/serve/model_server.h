// ModelServer: `mixseq serve`'s HTTP server (docs/serving.md). It serves a translator, a speech
// recognizer, a classifier, a speech synthesizer, or several from one process:
//   POST /translate   {"src": ["...", ...], "beam_size"?: K, "nbest"?: N, "alignment"?: true}
//                     -> {"tgt": [...], "scores": [...], "time_ms": t}; with "alignment", also per sentence
//                        its "src_pieces", the best translation's "tgt_pieces" and "alignment" (for each
//                        target piece, the source piece it attended most; the source's length = its </s>)
//   POST /transcribe  the bytes of an audio file (any format libsndfile reads: WAV, FLAC, OGG, ...)
//                     -> {"text": "...", "words": [{"word", "start", "end"}], "seconds": s, "time_ms": t}
//   POST /classify    {"text": ["...", ...]}
//                     -> {"label": [...], "probability": [...], "probabilities": [{label: p, ...}, ...], "time_ms": t}
//   POST /synthesize  {"text": "...", "format"?: "wav" | "flac"}
//                     -> the bytes of an audio file (Content-Type audio/wav or audio/flac), with headers
//                        X-Audio-Seconds, X-Frames and X-Stop-Token ("1": the stop token ended it)
//   GET  /info        -> what is served: {"translate": {"source_language", "target_language", "beam_size", ...},
//                        "transcribe": {"sample_rate", ...}, "classify": {"labels"}, "synthesize": {...}}
//   GET  /health      -> {"status": "ok"}
//   GET  /metrics     -> requests, sentences, utterances, errors, queue lengths, batches, latency percentiles
// A translation is tokenized, searched and detokenized as `mixseq translate` does it, with its
// search defaults; an audio file is decoded, resampled to the recognizer's rate and quantized to
// 16 bits as `mixseq transcribe` reads it, and a text is spoken as `mixseq synthesize` speaks it
// (with its --seed 1: a request alone in its batch gives the command's audio byte for byte), so all
// give what the commands give.
// Requests are checked before they reach a model: a body that is not JSON or not audio, a missing
// "src", an item that is not a string, malformed UTF-8, a sentence, an utterance or a body over
// its limit, an unknown key, an endpoint whose model is not served each get a 4xx answer whose
// JSON "error" names what is wrong; the server keeps running.
// Accepted requests from every connection go to one micro-batcher per model
// (serve/micro_batcher.h), whose worker thread is the only one that runs that model.
//
// Threads and ownership. The translator and the transcriber (and the models, vocabulary and
// tokenizer they refer to) must outlive the server; each is used by its batcher's worker, and the
// translator's tokenizer (which is thread-safe) by the connection threads, to count tokens. run()
// blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mixseq/data/speech_batch.h"
#include "mixseq/decode/beam_search.h"
#include "mixseq/decode/sentence_classification.h"
#include "mixseq/decode/speech_transcriber.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/serve/latency_window.h"
#include "mixseq/serve/micro_batcher.h"

namespace mixseq {

struct ServeOptions {
  std::string host = "127.0.0.1";      // address to listen on; 0.0.0.0 listens on every interface
  int port = 8080;                      // 0 = a free port chosen by the system (printed at start)
  int http_threads = 32;                // connections served at once; each mostly waits for its batch
  int64_t max_body_bytes = 1 << 20;     // a larger /translate body is refused (413)
  int64_t max_sentences = 1000;         // sentences per request; more are refused (413)
  int64_t max_source_tokens = 1024;     // longest sentence, in the model's tokens (400 beyond); 0 = no limit
  int64_t max_beam_size = 64;           // largest beam_size a request may ask for (each costs memory and time)
  MicroBatcherOptions batching;         // /translate: --max-batch-tokens (the cost: source tokens), --max-wait-ms
  int64_t max_audio_bytes = 16 << 20;   // a larger /transcribe body is refused (413)
  double max_audio_seconds = 30.0;      // longest utterance (400 beyond), after resampling; 0 = no limit
  double min_audio_seconds = 0.05;      // shortest utterance (400 below): less holds no word; 0 = no limit
  MicroBatcherOptions speech_batching{48000, 5};  // /transcribe: --max-batch-frames (the cost: feature
                                                  // frames of all utterances), --max-wait-ms
  MicroBatcherOptions synthesis_batching{8, 5};  // /synthesize: --max-batch-texts (the cost: texts), --max-wait-ms
  int64_t max_text_symbols = 400;       // longest /synthesize text, in synthesis symbols (400 beyond)
};

// The models a server answers with; at least one.
struct ServedModels {
  BatchTranslator* translator = nullptr;      // POST /translate; null: not served (the endpoint answers 404)
  std::string source_language, target_language;  // the translator's, as GET /info tells them ("" unknown)
  BeamSearchOptions search;              // the defaults of every /translate request (the checkpoint's
                                         // validation_search with the command line's flags); a request
                                         // may change its beam_size and nbest
  SpeechTranscriber* transcriber = nullptr;  // POST /transcribe; null: not served (404)
  SpeechInputConfig speech_input;        // the recognizer's input settings: its sample rate, and its
                                         // feature frames as /transcribe's batch cost
  TranscribeOptions transcribe;          // how batches of utterances are decoded (its max_frames is set
                                         // to speech_batching.max_batch_cost)
  const TrainedClassifier* classifier = nullptr;  // POST /classify; null: not served (404)
  torch::Device classifier_device = torch::kCPU;  // where the classifier's weights are
  Precision classifier_precision = Precision::kFp32;
  const TextToSpeech* synthesizer = nullptr;  // POST /synthesize; null: not served (404)
  SynthesizeOptions synthesize;          // how texts are spoken (its max_utterances is set to
                                         // synthesis_batching.max_batch_cost)
};

class ModelServer {
 public:
  ModelServer(const ServeOptions& options, const ServedModels& models);
  ~ModelServer();

  // Binds host:port (throws mixseq::Error naming them if it cannot), prints
  // "serve: listening on http://<host>:<port>" on stdout, and serves until stop_requested()
  // (util/stop_request.h: SIGINT or SIGTERM once watch_stop_signals() ran). It then stops
  // accepting, answers every request already received, and returns.
  void run();

 private:
  class Impl;  // keeps the HTTP library out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
