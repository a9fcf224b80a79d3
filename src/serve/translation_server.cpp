#include "mixseq/serve/translation_server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A request the server refuses: its HTTP status and what the client got wrong.
struct Refusal {
  int status;
  std::string message;
};

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void answer(httplib::Response& response, int status, const Json& body) {
  response.status = status;
  // Detokenized text is valid UTF-8; replace, never throw, should a model's piece not be.
  response.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

// A JSON number that is an integer in [low, high], or a Refusal naming the key.
int64_t integer_in(const Json& body, const char* key, int64_t low, int64_t high) {
  const auto& value = body.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high)
    throw Refusal{400, str_cat("\"", key, "\" must be an integer in ", low, "..", high, "; got ", value.dump())};
  return value.get<int64_t>();
}

}  // namespace

class TranslationServer::Impl {
 public:
  Impl(const ServeOptions& options, Translator& translator, const BeamSearchOptions& search)
      : options_(options),
        translator_(translator),
        search_(search),
        batcher_(options.batching, [this](const std::vector<std::string>& sources, const BeamSearchOptions& s) {
          TranslateOptions translate;
          translate.search = s;
          translate.max_tokens = options_.batching.max_batch_tokens;
          translate.max_source_tokens = 0;  // checked per request, before the batch
          return translator_.translate(sources, translate);
        }) {}

  void run();

 private:
  // The body of POST /translate as a batch request, or a Refusal.
  BatchRequest parse(const std::string& body) const;
  void translate(const httplib::Request& request, httplib::Response& response);
  Json metrics() const;

  ServeOptions options_;
  Translator& translator_;
  BeamSearchOptions search_;
  MicroBatcher batcher_;
  Clock::time_point started_ = Clock::now();
  std::atomic<int64_t> requests_{0};   // answered 200
  std::atomic<int64_t> sentences_{0};  // translated in those
  std::atomic<int64_t> refused_{0};    // answered 4xx, by the handlers or the library
  std::atomic<int64_t> failed_{0};     // answered 5xx
  std::atomic<int64_t> in_flight_{0};  // POST /translate being handled now
  LatencyWindow latency_;              // of answered requests, in ms
};

BatchRequest TranslationServer::Impl::parse(const std::string& body) const {
  if (static_cast<int64_t>(body.size()) > options_.max_body_bytes)
    throw Refusal{413, str_cat("the request body has ", body.size(), " bytes, over the limit of ",
                               options_.max_body_bytes, " (--max-body-bytes)")};
  Json json;
  try {
    json = Json::parse(body);  // rejects malformed UTF-8 and lone surrogates too (RFC 8259, §8.1)
  } catch (const Json::parse_error& e) {
    throw Refusal{400, str_cat("the body is not valid JSON: ", e.what())};
  }
  if (!json.is_object()) throw Refusal{400, "the body must be a JSON object: {\"src\": [\"a sentence\", ...]}"};
  for (const auto& item : json.items())
    if (item.key() != "src" && item.key() != "beam_size" && item.key() != "nbest")
      throw Refusal{400, str_cat("unknown key \"", item.key(), "\"; known: src, beam_size, nbest")};
  if (!json.contains("src")) throw Refusal{400, "missing \"src\": send {\"src\": [\"a sentence\", ...]}"};
  const auto& src = json.at("src");
  if (!src.is_array()) throw Refusal{400, str_cat("\"src\" must be an array of strings; got a ", src.type_name())};
  if (static_cast<int64_t>(src.size()) > options_.max_sentences)
    throw Refusal{413, str_cat("\"src\" has ", src.size(), " sentences, over the limit of ", options_.max_sentences,
                               " a request (--max-sentences)")};

  BatchRequest request;
  request.search = search_;
  if (json.contains("beam_size")) request.search.beam_size = integer_in(json, "beam_size", 1, options_.max_beam_size);
  if (json.contains("nbest")) request.search.nbest = integer_in(json, "nbest", 1, request.search.beam_size);
  if (request.search.nbest > request.search.beam_size)
    throw Refusal{400, str_cat("\"beam_size\" ", request.search.beam_size, " is below the server's nbest ",
                               request.search.nbest, "; ask for nbest <= beam_size")};
  for (size_t i = 0; i < src.size(); ++i) {
    if (!src[i].is_string()) throw Refusal{400, str_cat("src[", i, "] is a ", src[i].type_name(), ", not a string")};
    auto sentence = src[i].get<std::string>();
    const int64_t tokens = translator_.source_tokens(sentence);
    if (options_.max_source_tokens > 0 && tokens > options_.max_source_tokens)
      throw Refusal{400, str_cat("src[", i, "] has ", tokens, " tokens, over the limit of ", options_.max_source_tokens,
                                 " (--max-source-tokens)")};
    request.source_tokens += tokens + 1;  // + </s>, as the model sees it
    request.sources.push_back(std::move(sentence));
  }
  return request;
}

void TranslationServer::Impl::translate(const httplib::Request& http_request, httplib::Response& response) {
  const auto start = Clock::now();
  ++in_flight_;
  try {
    auto request = parse(http_request.body);
    const bool nested = request.search.nbest > 1;  // each "tgt" item a list of nbest translations
    const auto count = static_cast<int64_t>(request.sources.size());
    const auto results = request.sources.empty() ? BatchResults{} : batcher_.submit(std::move(request)).get();
    Json tgt = Json::array(), scores = Json::array();
    for (const auto& hypotheses : results) {
      if (!nested) {
        tgt.push_back(hypotheses.front().text);
        scores.push_back(hypotheses.front().score);
        continue;
      }
      Json texts = Json::array(), values = Json::array();
      for (const auto& hypothesis : hypotheses) {
        texts.push_back(hypothesis.text);
        values.push_back(hypothesis.score);
      }
      tgt.push_back(std::move(texts));
      scores.push_back(std::move(values));
    }
    const double elapsed = milliseconds_since(start);
    answer(response, 200, {{"tgt", std::move(tgt)}, {"scores", std::move(scores)}, {"time_ms", elapsed}});
    latency_.add(elapsed);
    ++requests_;
    sentences_ += count;
  } catch (const Refusal& refusal) {
    ++refused_;
    answer(response, refusal.status, {{"error", refusal.message}});
  } catch (const std::exception& e) {
    ++failed_;
    log_info("serve: a request failed: ", e.what());
    answer(response, 500, {{"error", str_cat("translation failed: ", e.what())}});
  }
  --in_flight_;
}

Json TranslationServer::Impl::metrics() const {
  return {{"requests", requests_.load()},
          {"sentences", sentences_.load()},
          {"refused", refused_.load()},
          {"failed", failed_.load()},
          {"in_flight", in_flight_.load()},
          {"queue_length", batcher_.queued_requests()},
          {"batches", batcher_.batches_run()},
          {"latency_ms", {{"p50", latency_.percentile(50)}, {"p90", latency_.percentile(90)},
                          {"p99", latency_.percentile(99)}}},
          {"uptime_s", milliseconds_since(started_) / 1000}};
}

void TranslationServer::Impl::run() {
  httplib::Server http;
  const int threads = options_.http_threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // Bodies up to 16x the limit are read and refused with a JSON answer; beyond that the library
  // refuses them itself, without reading what a client may keep sending.
  http.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes) * 16);
  http.set_keep_alive_timeout(2);  // an idle connection holds a thread, and holds up a shutdown this long
  http.Post("/translate", [this](const httplib::Request& request, httplib::Response& response) {
    translate(request, response);
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& response) {
    answer(response, 200, {{"status", "ok"}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    answer(response, 200, metrics());
  });
  // The library's own refusals (an unknown path, a malformed request, a body far over the
  // limit) get a JSON error too, and count as refused.
  http.set_error_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;  // answered by a handler above
    if (response.status < 500) ++refused_;
    const std::string what =
        response.status == 404   ? str_cat("no endpoint ", request.method, " ", request.path,
                                           "; there are POST /translate, GET /health and GET /metrics")
        : response.status == 413 ? std::string("the request body is far over the limit (--max-body-bytes)")
                                 : str_cat("the HTTP request was refused (status ", response.status, ")");
    answer(response, response.status, {{"error", what}});
  });

  int port = options_.port;
  const bool bound = port == 0 ? (port = http.bind_to_any_port(options_.host)) > 0 : http.bind_to_port(options_.host, port);
  MIXSEQ_CHECK(bound, "cannot listen on ", options_.host, ":", options_.port,
               " (the port is taken, or the host is not an address of this machine); choose another --port, "
               "or --port 0 for any free one");
  std::cout << "serve: listening on http://" << options_.host << ":" << port << std::endl;
  log_info("serve: listening on http://", options_.host, ":", port, " (", threads, " connection threads, batches of ",
           options_.batching.max_batch_tokens, " tokens, waiting ", options_.batching.max_wait_ms, " ms)");

  // stop() closes the listening socket; listen_after_bind() then returns once the connection
  // threads have answered every request they accepted. stop() does nothing before listening starts.
  std::atomic<bool> listening_ended{false};
  std::thread watcher([&] {
    while (!listening_ended && !(stop_requested() && http.is_running()))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    http.stop();
  });
  http.listen_after_bind();
  listening_ended = true;
  watcher.join();
  batcher_.shutdown();
  log_info("serve: stopped after ", requests_.load(), " requests (", sentences_.load(), " sentences), ",
           refused_.load(), " refused, ", failed_.load(), " failed");
}

TranslationServer::TranslationServer(const ServeOptions& options, Translator& translator,
                                     const BeamSearchOptions& search)
    : impl_(std::make_unique<Impl>(options, translator, search)) {}

TranslationServer::~TranslationServer() = default;

void TranslationServer::run() { impl_->run(); }

}  // namespace mixseq
