// TranslationServer: `mixseq serve`'s HTTP server (docs/serving.md). It answers
//   POST /translate  {"src": ["...", ...], "beam_size"?: K, "nbest"?: N}
//                    -> {"tgt": [...], "scores": [...], "time_ms": t}
//   GET  /health     -> {"status": "ok"}
//   GET  /metrics    -> requests, sentences, errors, queue length, batches, latency percentiles
// with the model's own tokenizer, detokenizer and search defaults (those of `mixseq translate`).
// Requests are checked before they reach the model: a body that is not JSON, a missing "src", an
// item that is not a string, malformed UTF-8, a sentence or a body over its limit, an unknown key
// each get a 4xx answer whose JSON "error" names what is wrong; the server keeps running.
// Accepted requests from every connection go to one MicroBatcher (serve/micro_batcher.h), whose
// worker thread is the only one that runs the model.
//
// Threads and ownership. The translator (and the model, vocabulary and tokenizer it refers to)
// must outlive the server; it is used by the batcher's worker, and its tokenizer (which is
// thread-safe) by the connection threads, to count tokens. run() blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mixseq/decode/beam_search.h"
#include "mixseq/decode/translator.h"
#include "mixseq/serve/latency_window.h"
#include "mixseq/serve/micro_batcher.h"

namespace mixseq {

struct ServeOptions {
  std::string host = "127.0.0.1";      // address to listen on; 0.0.0.0 listens on every interface
  int port = 8080;                      // 0 = a free port chosen by the system (printed at start)
  int http_threads = 32;                // connections served at once; each mostly waits for its batch
  int64_t max_body_bytes = 1 << 20;     // a larger request body is refused (413)
  int64_t max_sentences = 1000;         // sentences per request; more are refused (413)
  int64_t max_source_tokens = 1024;     // longest sentence, in the model's tokens (400 beyond); 0 = no limit
  int64_t max_beam_size = 64;           // largest beam_size a request may ask for (each costs memory and time)
  MicroBatcherOptions batching;         // --max-batch-tokens, --max-wait-ms
};

class TranslationServer {
 public:
  // `search`: the defaults of every request (the checkpoint's validation_search, with the
  // command line's flags); a request may change its beam_size and nbest.
  TranslationServer(const ServeOptions& options, Translator& translator, const BeamSearchOptions& search);
  ~TranslationServer();

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
