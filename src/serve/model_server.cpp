#include "mixseq/serve/model_server.h"

#include <arpa/inet.h>
#include <c10/util/Exception.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sndfile.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "mixseq/audio/audio_file.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/text/score_report.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/serve/web_page.h"
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
// A POST body as a JSON object whose keys are among `known`, the first of them required, or a
// Refusal whose message shows `example`, what the endpoint takes. Json::parse rejects malformed
// UTF-8 and lone surrogates too (RFC 8259, §8.1).
Json parse_body_object(const std::string& body, const std::vector<std::string>& known, const std::string& example) {
  Json json;
  try {
    json = Json::parse(body);
  } catch (const Json::parse_error& e) {
    throw Refusal{400, str_cat("the body is not valid JSON: ", e.what())};
  }
  if (!json.is_object()) throw Refusal{400, "the body must be a JSON object: " + example};
  for (const auto& item : json.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      std::string list;
      for (const auto& key : known) list += (list.empty() ? "" : ", ") + key;
      throw Refusal{400, str_cat("unknown key \"", item.key(), "\"; known: ", list)};
    }
  if (!json.contains(known.front())) throw Refusal{400, str_cat("missing \"", known.front(), "\": send ", example)};
  return json;
}

int64_t integer_in(const Json& body, const char* key, int64_t low, int64_t high) {
  const auto& value = body.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high)
    throw Refusal{400, str_cat("\"", key, "\" must be an integer in ", low, "..", high, "; got ", value.dump())};
  return value.get<int64_t>();
}


// ---------------------------------------------------------------------------------------------
// Connections. cpp-httplib 0.11 (Debian 12's) serves each request of a connection with a new
// SocketStream, whose 4 KB read-ahead dies with it, and its SocketStream refuses to write to a
// socket whose peer has shut down its sending side (is_socket_alive() peeks and sees the end of
// input). So (issue 29) the second and third of pipelined requests, read ahead with the first,
// were lost unanswered, and a client that sent its request and then half-closed got no answer
// although the server had translated it. HttpServer below keeps one ConnectionStream for the
// whole connection, writes whenever the socket takes data, and answers every request it reads,
// in order. It replaces the library's per-connection loop (process_and_close_socket, a virtual
// member) and calls the library's own process_request() for each request.

// Set by a handler that answers before reading the whole request body (a body over the limit, a
// Content-Length that is no byte count): the rest of the connection cannot be parsed, so it is
// closed after the answer. Each connection is served by one thread from start to end.
thread_local bool t_close_after_answer = false;

class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(int sock, int read_timeout_ms, int write_timeout_ms)
      : sock_(sock), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms), buffer_(1 << 16) {}

  bool has_buffered_input() const { return offset_ < size_; }
  bool is_readable() const override { return has_buffered_input() || wait(POLLIN, read_timeout_ms_); }
  // Whether the socket takes data now: a peer that only closed its sending side still reads.
  bool is_writable() const override { return wait(POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (!has_buffered_input()) {
      if (!wait(POLLIN, read_timeout_ms_)) return -1;
      ssize_t n;
      do n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) return n;  // 0: the client sent everything it will send
      offset_ = 0;
      size_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, size_ - offset_);
    std::memcpy(ptr, buffer_.data() + offset_, n);
    offset_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  bool wait(short events, int timeout_ms) const {
    pollfd fd{sock_, events, 0};
    int ready;
    do ready = ::poll(&fd, 1, timeout_ms);
    while (ready < 0 && errno == EINTR);
    return ready > 0;
  }
  void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage storage{};
    socklen_t length = sizeof storage;
    ip.clear();
    port = 0;
    if (get(sock_, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return;
    char text[INET6_ADDRSTRLEN] = "";
    if (storage.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&storage);
      ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
      port = ntohs(a->sin_port);
    } else if (storage.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
      ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
      port = ntohs(a->sin6_port);
    }
    ip = text;
  }

  int sock_;
  int read_timeout_ms_;
  int write_timeout_ms_;
  std::vector<char> buffer_;  // read ahead: may hold the start of the next pipelined request
  size_t offset_ = 0;         // the next unread byte of buffer_
  size_t size_ = 0;           // bytes in buffer_
};

class HttpServer : public httplib::Server {
 private:
  static int milliseconds(time_t seconds, time_t microseconds) {
    return static_cast<int>(seconds * 1000 + microseconds / 1000);
  }

  // Waits for the next request of a keep-alive connection: true once bytes (or the end of input)
  // are there, false after the keep-alive timeout or when the server stops.
  bool wait_for_request(const ConnectionStream& stream, int sock) const {
    if (stream.has_buffered_input()) return true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(keep_alive_timeout_sec_);
    while (svr_sock_ != INVALID_SOCKET && std::chrono::steady_clock::now() < deadline) {
      pollfd fd{sock, POLLIN, 0};
      const int ready = ::poll(&fd, 1, 50);
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return false;
    }
    return false;
  }

  bool process_and_close_socket(socket_t sock) override {
    ConnectionStream stream(sock, milliseconds(read_timeout_sec_, read_timeout_usec_),
                            milliseconds(write_timeout_sec_, write_timeout_usec_));
    bool ok = false, unread_input = false;
    for (size_t count = keep_alive_max_count_; count > 0 && svr_sock_ != INVALID_SOCKET; --count) {
      if (!wait_for_request(stream, sock)) break;
      bool connection_closed = false;
      t_close_after_answer = false;
      ok = process_request(stream, /*close_connection=*/count == 1, connection_closed, nullptr);
      unread_input = t_close_after_answer;
      if (!ok || connection_closed || t_close_after_answer) break;
    }
    // The last answer must reach the client before the socket closes: closing a socket with unread
    // input (the rest of a refused body, requests after the last one answered) resets the
    // connection, and the client's kernel may then drop the answer. So the sending side is shut
    // first, and what the client still sends is read and discarded until it stops, for at most
    // 2 s (a lingering close, as Apache's). An idle connection that timed out closes at once.
    pollfd pending{sock, POLLIN, 0};
    if (unread_input || stream.has_buffered_input() || ::poll(&pending, 1, 0) > 0) {
      ::shutdown(sock, SHUT_WR);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      std::vector<char> discard(1 << 16);
      for (auto now = std::chrono::steady_clock::now(); now < deadline; now = std::chrono::steady_clock::now()) {
        pollfd fd{sock, POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        if (::poll(&fd, 1, static_cast<int>(left) + 1) <= 0) break;
        if (::recv(sock, discard.data(), discard.size(), 0) <= 0) break;
      }
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }
};

// A Content-Length that is a byte count, or -1 for any other value ("-5", "12abc", "", a number
// over 2^62, two headers that disagree).
int64_t content_length_of(const httplib::Request& request) {
  int64_t length = -1;
  for (size_t i = 0; i < request.get_header_value_count("Content-Length"); ++i) {
    const auto text = request.get_header_value("Content-Length", i);
    if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), [](char c) {
          return c >= '0' && c <= '9';
        }))
      return -1;
    const int64_t value = std::stoll(text);
    if (i > 0 && value != length) return -1;
    length = value;
  }
  return length;
}

// The duration the header of an audio file held in `bytes` announces, in seconds; -1 when it is no
// audio file libsndfile opens or announces no length (decode_audio then says what is wrong, or
// checks the length once decoded). decode_audio checks --max-audio-seconds only after decoding
// all of it, and a few megabytes of FLAC or Ogg can hold hours of silence (gigabytes of samples):
// so the server asks the header first and refuses such a body before decoding it.
double announced_seconds(const std::string& bytes) {
  struct Memory {
    const std::string* bytes;
    sf_count_t position;
  } memory{&bytes, 0};
  SF_VIRTUAL_IO io{};
  io.get_filelen = [](void* user) { return static_cast<sf_count_t>(static_cast<Memory*>(user)->bytes->size()); };
  io.seek = [](sf_count_t offset, int whence, void* user) {
    auto& m = *static_cast<Memory*>(user);
    const auto size = static_cast<sf_count_t>(m.bytes->size());
    const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m.position : size;
    m.position = std::clamp<sf_count_t>(base + offset, 0, size);
    return m.position;
  };
  io.read = [](void* out, sf_count_t count, void* user) {
    auto& m = *static_cast<Memory*>(user);
    const sf_count_t n = std::clamp<sf_count_t>(static_cast<sf_count_t>(m.bytes->size()) - m.position, 0, count);
    std::memcpy(out, m.bytes->data() + m.position, static_cast<size_t>(n));
    m.position += n;
    return n;
  };
  io.write = [](const void*, sf_count_t, void*) -> sf_count_t { return 0; };
  io.tell = [](void* user) { return static_cast<Memory*>(user)->position; };
  SF_INFO info{};
  SNDFILE* file = sf_open_virtual(&io, SFM_READ, &info, &memory);
  if (file == nullptr) return -1;
  sf_close(file);
  if (info.samplerate <= 0 || info.frames <= 0 || info.frames == SF_COUNT_MAX) return -1;
  return static_cast<double>(info.frames) / info.samplerate;
}

}  // namespace

// What /metrics tells of one endpoint.
struct EndpointCounts {
  std::atomic<int64_t> requests{0};  // answered 200
  std::atomic<int64_t> items{0};     // sentences translated, utterances transcribed in those
  LatencyWindow latency;             // of answered requests, in ms
};

class ModelServer::Impl {
 public:
  Impl(const ServeOptions& options, const ServedModels& models);

  void run();

 private:
  // Runs one POST request's handler(start) -> the items it answered (it writes the 200 answer),
  // counting it in `counts` and the server's latency; a Refusal it throws is answered with its
  // 4xx, any other exception with a 500 naming `what` ("translation").
  template <typename Handle>
  void handle(EndpointCounts& counts, const char* what, httplib::Response& response, const Handle& handle_request);
  // The body of POST /translate as a batch request, or a Refusal.
  TranslationBatcher::Request parse_translation(const std::string& body) const;
  void translate(const std::string& body, httplib::Response& response);
  // The body of POST /transcribe (an audio file) as a batch request of one utterance, or a Refusal.
  TranscriptionBatcher::Request parse_audio(const std::string& body) const;
  void transcribe(const std::string& body, httplib::Response& response);
  // The body of POST /classify as a batch request, or a Refusal.
  ClassificationBatcher::Request parse_classification(const std::string& body) const;
  void classify(const std::string& body, httplib::Response& response);
  // The body of POST /synthesize as a batch request of one text and the audio format asked for, or a Refusal.
  std::pair<SynthesisBatcher::Request, AudioFileFormat> parse_synthesis(const std::string& body) const;
  void synthesize(const std::string& body, httplib::Response& response);
  // Reads a POST body up to `limit` bytes (`flag` names the limit); true when it has all of it. A
  // body over the limit is refused as soon as its reading passes the limit, the rest unread.
  bool read_body(const httplib::ContentReader& content, int64_t limit, const char* flag, std::string& body,
                 httplib::Response& response);
  // Before any body is read: refuses a request whose Content-Length is no byte count or over its
  // endpoint's limit, a POST to a model this server does not serve, audio of a type other than
  // audio/* or application/octet-stream, and a body sent anywhere else. True when it answered.
  bool refuse_before_reading(const httplib::Request& request, httplib::Response& response);
  // Answers a refusal of the HTTP request itself and closes the connection after the answer.
  void refuse_and_close(httplib::Response& response, int status, const std::string& message);
  // "POST /translate, GET /health and GET /metrics": what this server answers, for messages.
  std::string endpoints() const;
  Json info() const;
  Json metrics() const;

  ServeOptions options_;
  ServedModels models_;
  std::unique_ptr<TranslationBatcher> translation_;     // null when no translator is served
  std::unique_ptr<TranscriptionBatcher> transcription_;  // null when no recognizer is served
  std::unique_ptr<ClassificationBatcher> classification_;  // null when no classifier is served
  std::unique_ptr<SynthesisBatcher> synthesis_;  // null when no synthesizer is served
  Clock::time_point started_ = Clock::now();
  EndpointCounts translate_counts_, transcribe_counts_, classify_counts_, synthesize_counts_;
  LatencyWindow latency_;              // of every answered request, in ms
  std::atomic<int64_t> refused_{0};    // answered 4xx, by the handlers or the library
  std::atomic<int64_t> failed_{0};     // answered 5xx
  std::atomic<int64_t> in_flight_{0};  // POST /translate, /transcribe, /classify and /synthesize being handled now
};

ModelServer::Impl::Impl(const ServeOptions& options, const ServedModels& models)
    : options_(options), models_(models) {
  MIXSEQ_CHECK(models_.translator != nullptr || models_.transcriber != nullptr || models_.classifier != nullptr ||
                   models_.synthesizer != nullptr,
               "serve: no model to serve; give a translation checkpoint, a speech recognizer's, a classifier's, a "
               "speech synthesizer's, or several");
  if (models_.translator != nullptr)
    translation_ = std::make_unique<TranslationBatcher>(
        options_.batching, [this](const std::vector<std::string>& sources, const BeamSearchOptions& search) {
          TranslateOptions translate;
          translate.search = search;
          translate.max_tokens = options_.batching.max_batch_cost;
          translate.max_source_tokens = 0;  // checked per request, before the batch
          return models_.translator->translate(sources, translate);
        });
  if (models_.transcriber != nullptr) {
    models_.speech_input.check();
    models_.transcribe.max_frames = options_.speech_batching.max_batch_cost;
    transcription_ = std::make_unique<TranscriptionBatcher>(
        options_.speech_batching, [this](const std::vector<std::vector<float>>& audio, const AnyBatch&) {
          return models_.transcriber->transcribe(audio, models_.transcribe);
        });
  }
  if (models_.classifier != nullptr)
    classification_ = std::make_unique<ClassificationBatcher>(
        options_.batching, [this](const std::vector<std::string>& texts, const AnyBatch&) {
          ClassificationOptions classify;
          classify.max_tokens = options_.batching.max_batch_cost;
          return classify_texts(*models_.classifier, texts, classify, models_.classifier_precision,
                                models_.classifier_device);
        });
  if (models_.synthesizer != nullptr) {
    models_.synthesize.max_utterances = options_.synthesis_batching.max_batch_cost;
    synthesis_ = std::make_unique<SynthesisBatcher>(
        options_.synthesis_batching, [this](const std::vector<std::string>& texts, const AnyBatch&) {
          return models_.synthesizer->synthesize(texts, models_.synthesize);
        });
  }
}

Json ModelServer::Impl::info() const {
  Json info = Json::object();
  if (translation_)
    info["translate"] = {{"source_language", models_.source_language},
                         {"target_language", models_.target_language},
                         {"beam_size", models_.search.beam_size},
                         {"max_beam_size", options_.max_beam_size},
                         {"max_sentences", options_.max_sentences}};
  if (transcription_)
    info["transcribe"] = {{"sample_rate", models_.speech_input.sample_rate},
                          {"max_audio_seconds", options_.max_audio_seconds},
                          {"max_audio_bytes", options_.max_audio_bytes}};
  if (classification_) info["classify"] = {{"labels", models_.classifier->labels}};
  if (synthesis_)
    info["synthesize"] = {{"sample_rate", models_.synthesizer->sample_rate()},
                          {"max_text_symbols", options_.max_text_symbols}};
  return info;
}

std::string ModelServer::Impl::endpoints() const {
  std::string list;
  if (translation_) list += "POST /translate, ";
  if (transcription_) list += "POST /transcribe, ";
  if (classification_) list += "POST /classify, ";
  if (synthesis_) list += "POST /synthesize, ";
  return list + "GET / (a page for a browser), GET /info, GET /health and GET /metrics";
}

TranslationBatcher::Request ModelServer::Impl::parse_translation(const std::string& body) const {
  if (static_cast<int64_t>(body.size()) > options_.max_body_bytes)
    throw Refusal{413, str_cat("the request body has ", body.size(), " bytes, over the limit of ",
                               options_.max_body_bytes, " (--max-body-bytes)")};
  const Json json =
      parse_body_object(body, {"src", "beam_size", "nbest", "alignment"}, "{\"src\": [\"a sentence\", ...]}");
  const auto& src = json.at("src");
  if (!src.is_array()) throw Refusal{400, str_cat("\"src\" must be an array of strings; got a ", src.type_name())};
  if (static_cast<int64_t>(src.size()) > options_.max_sentences)
    throw Refusal{413, str_cat("\"src\" has ", src.size(), " sentences, over the limit of ", options_.max_sentences,
                               " a request (--max-sentences)")};

  TranslationBatcher::Request request;
  auto& search = request.settings;
  search = models_.search;
  if (json.contains("beam_size")) search.beam_size = integer_in(json, "beam_size", 1, options_.max_beam_size);
  if (json.contains("nbest")) search.nbest = integer_in(json, "nbest", 1, search.beam_size);
  if (search.nbest > search.beam_size)
    throw Refusal{400, str_cat("\"beam_size\" ", search.beam_size, " is below the server's nbest ", search.nbest,
                               "; ask for nbest <= beam_size")};
  if (json.contains("alignment")) {
    if (!json.at("alignment").is_boolean())
      throw Refusal{400, str_cat("\"alignment\" must be true or false; got a ", json.at("alignment").type_name())};
    search.return_alignment = json.at("alignment").get<bool>();
  }
  for (size_t i = 0; i < src.size(); ++i) {
    if (!src[i].is_string()) throw Refusal{400, str_cat("src[", i, "] is a ", src[i].type_name(), ", not a string")};
    auto sentence = src[i].get<std::string>();
    const int64_t tokens = models_.translator->source_tokens(sentence);
    if (options_.max_source_tokens > 0 && tokens > options_.max_source_tokens)
      throw Refusal{400, str_cat("src[", i, "] has ", tokens, " tokens, over the limit of ", options_.max_source_tokens,
                                 " (--max-source-tokens)")};
    request.cost += tokens + 1;  // + </s>, as the model sees it
    request.items.push_back(std::move(sentence));
  }
  return request;
}

ClassificationBatcher::Request ModelServer::Impl::parse_classification(const std::string& body) const {
  const Json json = parse_body_object(body, {"text"}, "{\"text\": [\"a sentence\", ...]}");
  const auto& texts = json.at("text");
  if (!texts.is_array()) throw Refusal{400, str_cat("\"text\" must be an array of strings; got a ", texts.type_name())};
  if (static_cast<int64_t>(texts.size()) > options_.max_sentences)
    throw Refusal{413, str_cat("\"text\" has ", texts.size(), " texts, over the limit of ", options_.max_sentences,
                               " a request (--max-sentences)")};
  ClassificationBatcher::Request request;
  const TrainedClassifier& classifier = *models_.classifier;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!texts[i].is_string()) throw Refusal{400, str_cat("text[", i, "] is a ", texts[i].type_name(), ", not a string")};
    auto text = texts[i].get<std::string>();
    const auto tokens = static_cast<int64_t>(classifier.tokenizer->encode(text).size());
    if (tokens == 0) throw Refusal{400, str_cat("text[", i, "] is empty: a classifier needs words to read")};
    if (options_.max_source_tokens > 0 && tokens > options_.max_source_tokens)
      throw Refusal{400, str_cat("text[", i, "] has ", tokens, " tokens, over the limit of ", options_.max_source_tokens,
                                 " (--max-source-tokens)")};
    request.cost += tokens + 2;  // + the two </s> the classifier reads
    request.items.push_back(std::move(text));
  }
  return request;
}

std::pair<SynthesisBatcher::Request, AudioFileFormat> ModelServer::Impl::parse_synthesis(const std::string& body) const {
  const Json json = parse_body_object(body, {"text", "format"}, "{\"text\": \"a sentence\"}");
  const auto& text = json.at("text");
  if (!text.is_string()) throw Refusal{400, str_cat("\"text\" must be a string; got a ", text.type_name())};
  AudioFileFormat format = AudioFileFormat::kWav;
  if (json.contains("format")) {
    const auto& name = json.at("format");
    if (!name.is_string() || (name != "wav" && name != "flac"))
      throw Refusal{400, str_cat("\"format\" must be \"wav\" or \"flac\", not ", name.dump())};
    if (name == "flac") format = AudioFileFormat::kFlac;
  }
  SynthesisBatcher::Request request;
  request.items.push_back(text.get<std::string>());
  int64_t symbols = 0;
  try {  // an empty text, a character outside the symbols: the message names the column
    symbols = static_cast<int64_t>(synthesis_symbol_ids(request.items.front(), "\"text\"").size());
  } catch (const Error& e) {
    throw Refusal{400, e.what()};
  }
  if (options_.max_text_symbols > 0 && symbols > options_.max_text_symbols)
    throw Refusal{400, str_cat("\"text\" has ", symbols, " symbols, over the limit of ", options_.max_text_symbols,
                               " (--max-text-symbols)")};
  request.cost = 1;
  return {std::move(request), format};
}

TranscriptionBatcher::Request ModelServer::Impl::parse_audio(const std::string& body) const {
  if (static_cast<int64_t>(body.size()) > options_.max_audio_bytes)
    throw Refusal{413, str_cat("the request body has ", body.size(), " bytes, over the limit of ",
                               options_.max_audio_bytes, " (--max-audio-bytes)")};
  if (body.empty())
    throw Refusal{400, "the request body is empty: send the bytes of an audio file (WAV, FLAC, OGG, ...)"};
  const double announced = announced_seconds(body);
  if (options_.max_audio_seconds > 0 && announced > options_.max_audio_seconds)
    throw Refusal{400, str_cat("the audio is too long: its header announces ", announced,
                               " s, over the limit of ", options_.max_audio_seconds, " s (--max-audio-seconds)")};
  const AudioReadOptions reading = models_.speech_input.audio_read_options();
  Audio audio;
  try {
    audio = decode_audio(body, "the request body", reading);
  } catch (const Error& e) {  // not audio, truncated, empty: each names what is wrong
    throw Refusal{400, str_cat(e.what(), "; send the bytes of an audio file (WAV, FLAC, OGG, ...)")};
  }
  const double seconds = audio.seconds();
  if (options_.max_audio_seconds > 0 && seconds > options_.max_audio_seconds)
    throw Refusal{400, str_cat("the audio is too long: ", seconds, " s, over the limit of ",
                               options_.max_audio_seconds, " s (--max-audio-seconds)")};
  if (options_.min_audio_seconds > 0 && seconds < options_.min_audio_seconds)
    throw Refusal{400, str_cat("the audio is too short: ", seconds, " s, under the minimum of ",
                               options_.min_audio_seconds, " s (--min-audio-seconds)")};
  TranscriptionBatcher::Request request;
  // As `mixseq transcribe` reads a file: the samples a prepared dataset would hold (16 bits).
  request.items.push_back(as_stored_samples(audio.samples));
  request.cost = models_.speech_input.feature_options().frames(static_cast<int64_t>(audio.samples.size()));
  return request;
}

void ModelServer::Impl::refuse_and_close(httplib::Response& response, int status, const std::string& message) {
  ++refused_;
  t_close_after_answer = true;
  answer(response, status, {{"error", message}});
  response.set_header("Connection", "close");
}

bool ModelServer::Impl::refuse_before_reading(const httplib::Request& request, httplib::Response& response) {
  const bool post = request.method == "POST";
  const bool to_translate = post && request.path == "/translate";
  const bool to_transcribe = post && request.path == "/transcribe";
  const bool to_classify = post && request.path == "/classify";
  const bool to_synthesize = post && request.path == "/synthesize";
  if ((to_translate && !translation_) || (to_transcribe && !transcription_) || (to_classify && !classification_) ||
      (to_synthesize && !synthesis_)) {
    refuse_and_close(response, 404,
                     str_cat("this server has no ",
                             to_translate    ? "translation model"
                             : to_transcribe ? "speech recognizer"
                             : to_classify   ? "classifier"
                                             : "speech synthesizer",
                             " (start it with ",
                             to_translate    ? "-c CHECKPOINT"
                             : to_transcribe ? "--speech-checkpoint CHECKPOINT"
                             : to_classify   ? "--classify-checkpoint CHECKPOINT"
                                             : "--synthesis-checkpoint CHECKPOINT",
                             "); there are ", endpoints()));
    return true;
  }
  if (to_transcribe) {
    // Audio comes as raw bytes: audio/wav, audio/flac, ..., or application/octet-stream (or no type).
    const auto type = request.get_header_value("Content-Type");
    const auto media = type.substr(0, type.find(';'));
    if (!media.empty() && strncasecmp(media.c_str(), "audio/", 6) != 0 &&
        strcasecmp(media.c_str(), "application/octet-stream") != 0) {
      refuse_and_close(response, 415,
                       str_cat("POST /transcribe takes the bytes of an audio file with Content-Type audio/* or "
                               "application/octet-stream, not \"", type, "\" (curl: -H 'Content-Type: audio/wav' "
                               "--data-binary @file.wav)"));
      return true;
    }
  }
  const bool own_body = to_translate || to_transcribe || to_classify || to_synthesize;  // read by the handler, up to the limit
  const int64_t limit = to_transcribe ? options_.max_audio_bytes : options_.max_body_bytes;
  const char* flag = to_transcribe ? "--max-audio-bytes" : "--max-body-bytes";
  // As cpp-httplib decides it: a body in chunks has no Content-Length to check beforehand.
  const bool chunked = strcasecmp(request.get_header_value("Transfer-Encoding").c_str(), "chunked") == 0;
  if (request.has_header("Content-Length") && !chunked) {
    const int64_t length = content_length_of(request);
    const size_t lengths = request.get_header_value_count("Content-Length");
    if (length < 0 && lengths > 1) {
      std::string values;
      for (size_t i = 0; i < lengths; ++i)
        values += str_cat(i > 0 ? ", \"" : "\"", request.get_header_value("Content-Length", i), "\"");
      refuse_and_close(response, 400,
                       str_cat("the request has ", lengths, " Content-Length headers that differ (", values,
                               "): send one, the body's length in bytes"));
      return true;
    }
    if (length < 0) {
      refuse_and_close(response, 400, str_cat("Content-Length \"", request.get_header_value("Content-Length"),
                                              "\" is not a byte count (a number of 0 to 18 digits)"));
      return true;
    }
    if (own_body && length > limit) {
      refuse_and_close(response, 413,
                       str_cat("the request body has ", length, " bytes (Content-Length), over the limit of ", limit,
                               " (", flag, "); it was not read"));
      return true;
    }
    if (own_body || length == 0) return false;
  } else if (own_body && !chunked) {
    // HTTP/1.1 reads a request body by its length or in chunks; one with neither ends before it starts.
    refuse_and_close(response, 411,
                     str_cat("POST ", request.path, " needs its body's length: send a Content-Length header "
                             "(or the body in chunks, Transfer-Encoding: chunked); this request had neither"));
    return true;
  } else if (own_body || (!chunked && request.method != "POST" && request.method != "PUT" &&
                          request.method != "PATCH" && request.method != "DELETE")) {
    return false;  // the POST endpoints read their bodies themselves; other methods have none
  }
  // A body sent anywhere else: the library would read it whole (a chunked one without limit) or,
  // for a GET, parse it as the next request.
  if (request.method == "GET" && (request.path == "/" || request.path == "/info" || request.path == "/health" ||
                                  request.path == "/metrics")) {
    refuse_and_close(response, 400, str_cat("GET ", request.path, " takes no request body"));
  } else {
    refuse_and_close(response, 404,
                     str_cat("no endpoint ", request.method, " ", request.path, "; there are ", endpoints()));
  }
  return true;
}

bool ModelServer::Impl::read_body(const httplib::ContentReader& content, int64_t limit, const char* flag,
                                  std::string& body, httplib::Response& response) {
  bool over_limit = false;
  const bool read = content([&](const char* data, size_t size) {
    if (static_cast<int64_t>(body.size() + size) > limit) {
      over_limit = true;
      return false;  // stops reading: the library returns at once, the rest of the body unread
    }
    body.append(data, size);
    return true;
  });
  if (over_limit) {
    refuse_and_close(response, 413, str_cat("the request body is over the limit of ", limit, " bytes (", flag,
                                            "); it was refused after ", body.size(), " bytes, the rest unread"));
    return false;
  }
  if (!read) {
    refuse_and_close(response, 400, str_cat("the request body could not be read after ", body.size(),
                                            " bytes: malformed chunked encoding, or the connection stopped sending"));
    return false;
  }
  return true;
}

template <typename Handle>
void ModelServer::Impl::handle(EndpointCounts& counts, const char* what, httplib::Response& response,
                               const Handle& handle_request) {
  const auto start = Clock::now();
  ++in_flight_;
  try {
    const int64_t items = handle_request(start);
    const double elapsed = milliseconds_since(start);
    latency_.add(elapsed);
    counts.latency.add(elapsed);
    ++counts.requests;
    counts.items += items;
  } catch (const Refusal& refusal) {
    ++refused_;
    answer(response, refusal.status, {{"error", refusal.message}});
  } catch (const c10::Error& e) {  // LibTorch's: its message without the C++ backtrace for the client
    ++failed_;
    log_info("serve: a ", what, " request failed: ", e.what());
    answer(response, 500, {{"error", str_cat(what, " failed: ", e.what_without_backtrace())}});
  } catch (const std::exception& e) {
    ++failed_;
    log_info("serve: a ", what, " request failed: ", e.what());
    answer(response, 500, {{"error", str_cat(what, " failed: ", e.what())}});
  }
  --in_flight_;
}

void ModelServer::Impl::translate(const std::string& body, httplib::Response& response) {
  handle(translate_counts_, "translation", response, [&](Clock::time_point start) {
    auto request = parse_translation(body);
    const bool nested = request.settings.nbest > 1;  // each "tgt" item a list of nbest translations
    const bool aligned = request.settings.return_alignment;
    const auto count = static_cast<int64_t>(request.items.size());
    Json alignment = Json::array(), src_pieces = Json::array(), tgt_pieces = Json::array();
    if (aligned)  // the best translation's pieces, each with the source piece it attended most
      for (const auto& sentence : request.items) src_pieces.push_back(models_.translator->segment(sentence));
    const auto results =
        request.items.empty() ? TranslationBatcher::Results{} : translation_->submit(std::move(request)).get();
    if (aligned)
      for (const auto& hypotheses : results) {
        alignment.push_back(hypotheses.front().alignment);
        tgt_pieces.push_back(hypotheses.front().pieces);
      }
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
    Json answered = {{"tgt", std::move(tgt)}, {"scores", std::move(scores)}};
    if (aligned) {
      answered["src_pieces"] = std::move(src_pieces);
      answered["tgt_pieces"] = std::move(tgt_pieces);
      answered["alignment"] = std::move(alignment);
    }
    answered["time_ms"] = milliseconds_since(start);
    answer(response, 200, answered);
    return count;
  });
}

void ModelServer::Impl::transcribe(const std::string& body, httplib::Response& response) {
  handle(transcribe_counts_, "transcription", response, [&](Clock::time_point start) {
    auto request = parse_audio(body);
    const double seconds = static_cast<double>(request.items.front().size()) /
                           static_cast<double>(models_.speech_input.sample_rate);
    const auto transcripts = transcription_->submit(std::move(request)).get();
    const Transcript& transcript = transcripts.at(0);
    Json words = Json::array();
    for (const auto& w : transcript.words)  // milliseconds, as `transcribe --json` writes them
      words.push_back({{"word", w.word}, {"start", std::round(w.start * 1000) / 1000},
                       {"end", std::round(w.end * 1000) / 1000}});
    answer(response, 200, {{"text", transcript.text}, {"words", std::move(words)},
                           {"seconds", std::round(seconds * 1000) / 1000}, {"time_ms", milliseconds_since(start)}});
    return int64_t{1};
  });
}

void ModelServer::Impl::classify(const std::string& body, httplib::Response& response) {
  handle(classify_counts_, "classification", response, [&](Clock::time_point start) {
    auto request = parse_classification(body);
    const auto count = static_cast<int64_t>(request.items.size());
    const auto predictions =
        request.items.empty() ? ClassificationBatcher::Results{} : classification_->submit(std::move(request)).get();
    const auto& labels = models_.classifier->labels;
    Json label = Json::array(), probability = Json::array(), probabilities = Json::array();
    for (const auto& prediction : predictions) {
      label.push_back(labels[static_cast<size_t>(prediction.label)]);
      probability.push_back(prediction.probability);
      Json all = Json::object();
      for (size_t c = 0; c < labels.size(); ++c) all[labels[c]] = prediction.probabilities[c];
      probabilities.push_back(std::move(all));
    }
    answer(response, 200, {{"label", std::move(label)}, {"probability", std::move(probability)},
                           {"probabilities", std::move(probabilities)}, {"time_ms", milliseconds_since(start)}});
    return count;
  });
}

void ModelServer::Impl::synthesize(const std::string& body, httplib::Response& response) {
  handle(synthesize_counts_, "synthesis", response, [&](Clock::time_point) {
    auto [request, format] = parse_synthesis(body);
    const auto speech = synthesis_->submit(std::move(request)).get();
    const SynthesizedSpeech& spoken = speech.at(0);
    const int64_t rate = models_.synthesizer->sample_rate();
    const std::string audio = encode_audio(spoken.samples, rate, format, "the synthesized audio");
    const double seconds = static_cast<double>(spoken.samples.size()) / static_cast<double>(rate);
    response.status = 200;
    response.set_header("X-Audio-Seconds", format_decimal(seconds, 3));
    response.set_header("X-Frames", std::to_string(spoken.frames));
    response.set_header("X-Stop-Token", spoken.stopped ? "1" : "0");
    response.set_content(audio, format == AudioFileFormat::kFlac ? "audio/flac" : "audio/wav");
    return int64_t{1};
  });
}

Json ModelServer::Impl::metrics() const {
  const auto percentiles = [](const LatencyWindow& window) {
    return Json{{"p50", window.percentile(50)}, {"p90", window.percentile(90)}, {"p99", window.percentile(99)}};
  };
  const int64_t translate_queue = translation_ ? translation_->queued_requests() : 0;
  const int64_t translate_batches = translation_ ? translation_->batches_run() : 0;
  const int64_t transcribe_queue = transcription_ ? transcription_->queued_requests() : 0;
  const int64_t transcribe_batches = transcription_ ? transcription_->batches_run() : 0;
  const int64_t classify_queue = classification_ ? classification_->queued_requests() : 0;
  const int64_t classify_batches = classification_ ? classification_->batches_run() : 0;
  const int64_t synthesize_queue = synthesis_ ? synthesis_->queued_requests() : 0;
  const int64_t synthesize_batches = synthesis_ ? synthesis_->batches_run() : 0;
  Json json = {{"requests", translate_counts_.requests.load() + transcribe_counts_.requests.load() +
                                classify_counts_.requests.load() + synthesize_counts_.requests.load()},
               {"sentences", translate_counts_.items.load()},
               {"utterances", transcribe_counts_.items.load()},
               {"texts", classify_counts_.items.load()},
               {"spoken", synthesize_counts_.items.load()},
               {"refused", refused_.load()},
               {"failed", failed_.load()},
               {"in_flight", in_flight_.load()},
               {"queue_length", translate_queue + transcribe_queue + classify_queue + synthesize_queue},
               {"batches", translate_batches + transcribe_batches + classify_batches + synthesize_batches},
               {"latency_ms", percentiles(latency_)},
               {"uptime_s", milliseconds_since(started_) / 1000}};
  if (translation_)
    json["translate"] = {{"requests", translate_counts_.requests.load()},
                         {"sentences", translate_counts_.items.load()},
                         {"queue_length", translate_queue},
                         {"batches", translate_batches},
                         {"latency_ms", percentiles(translate_counts_.latency)}};
  if (transcription_)
    json["transcribe"] = {{"requests", transcribe_counts_.requests.load()},
                          {"utterances", transcribe_counts_.items.load()},
                          {"queue_length", transcribe_queue},
                          {"batches", transcribe_batches},
                          {"latency_ms", percentiles(transcribe_counts_.latency)}};
  if (classification_)
    json["classify"] = {{"requests", classify_counts_.requests.load()},
                        {"texts", classify_counts_.items.load()},
                        {"queue_length", classify_queue},
                        {"batches", classify_batches},
                        {"latency_ms", percentiles(classify_counts_.latency)}};
  if (synthesis_)
    json["synthesize"] = {{"requests", synthesize_counts_.requests.load()},
                          {"texts", synthesize_counts_.items.load()},
                          {"queue_length", synthesize_queue},
                          {"batches", synthesize_batches},
                          {"latency_ms", percentiles(synthesize_counts_.latency)}};
  return json;
}

void ModelServer::Impl::run() {
  HttpServer http;
  const int threads = options_.http_threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // The library sets SO_REUSEPORT, with which a second server binds the same port and the kernel
  // splits the connections between the two (issue 29: identical requests answered by two models).
  // SO_REUSEADDR alone lets a restarted server bind while old connections linger in TIME_WAIT,
  // and makes a second bind of a port in use fail.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Bodies are read by read_body(), which stops at the endpoint's limit; the library's own limit
  // is a backstop.
  http.set_payload_max_length(static_cast<size_t>(std::max(options_.max_body_bytes, options_.max_audio_bytes)));
  http.set_keep_alive_timeout(2);  // an idle connection holds a thread, and holds up a shutdown this long
  // Requests a client may send on one connection, pipelined or not; the last answer says
  // "Connection: close" (cpp-httplib's default, 5, is low for pipelining clients).
  http.set_keep_alive_max_count(1000);
  http.set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    return refuse_before_reading(request, response) ? httplib::Server::HandlerResponse::Handled
                                                    : httplib::Server::HandlerResponse::Unhandled;
  });
  // A client that asks before sending its body (Expect: 100-continue, as curl does for large
  // ones) gets the refusal instead of "100 Continue", and sends nothing more.
  http.set_expect_100_continue_handler([this](const httplib::Request& request, httplib::Response& response) {
    return refuse_before_reading(request, response) ? response.status : 100;
  });
  http.Post("/translate", [this](const httplib::Request&, httplib::Response& response,
                                 const httplib::ContentReader& content) {
    std::string body;
    if (read_body(content, options_.max_body_bytes, "--max-body-bytes", body, response)) translate(body, response);
  });
  http.Post("/transcribe", [this](const httplib::Request&, httplib::Response& response,
                                  const httplib::ContentReader& content) {
    std::string body;
    if (read_body(content, options_.max_audio_bytes, "--max-audio-bytes", body, response)) transcribe(body, response);
  });
  http.Post("/classify", [this](const httplib::Request&, httplib::Response& response,
                                const httplib::ContentReader& content) {
    std::string body;
    if (read_body(content, options_.max_body_bytes, "--max-body-bytes", body, response)) classify(body, response);
  });
  http.Post("/synthesize", [this](const httplib::Request&, httplib::Response& response,
                                  const httplib::ContentReader& content) {
    std::string body;
    if (read_body(content, options_.max_body_bytes, "--max-body-bytes", body, response)) synthesize(body, response);
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& response) {  // the page (serve/web_page.h)
    const auto page = serve_page_html();
    response.set_content(page.data(), page.size(), "text/html; charset=utf-8");
  });
  http.Get("/info", [this](const httplib::Request&, httplib::Response& response) {
    answer(response, 200, info());
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& response) {
    answer(response, 200, {{"status", "ok"}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    answer(response, 200, metrics());
  });
  // The library's own refusals (an unknown path, a malformed request) get a JSON error too, and
  // count as refused.
  http.set_error_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;  // answered by a handler above
    if (response.status < 500) ++refused_;
    const std::string what =
        response.status == 404   ? str_cat("no endpoint ", request.method, " ", request.path, "; there are ", endpoints())
        : response.status == 413 ? str_cat("the request body is over the limit of ", options_.max_body_bytes,
                                           " bytes (--max-body-bytes)")
                                 : str_cat("the HTTP request was refused (status ", response.status, ")");
    answer(response, response.status, {{"error", what}});
  });

  int port = options_.port;
  errno = 0;
  const bool bound = port == 0 ? (port = http.bind_to_any_port(options_.host)) > 0 : http.bind_to_port(options_.host, port);
  const int bind_error = errno;
  MIXSEQ_CHECK(bound, "cannot listen on ", options_.host, ":", options_.port, ": ",
               bind_error == EADDRINUSE
                   ? "the port is in use (another server, perhaps another mixseq serve, listens there)"
                   : str_cat(bind_error != 0 ? std::strerror(bind_error) : "bind failed",
                             " (is the host an address of this machine?)"),
               "; choose another --port, or --port 0 for any free one");
  std::cout << "serve: listening on http://" << options_.host << ":" << port << std::endl;
  log_info("serve: listening on http://", options_.host, ":", port, " (", threads, " connection threads, ",
           translation_ ? str_cat("batches of ", options_.batching.max_batch_cost, " tokens, ") : "",
           transcription_ ? str_cat("batches of ", options_.speech_batching.max_batch_cost, " audio frames, ") : "",
           "waiting ", options_.batching.max_wait_ms, " ms)");

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
  if (translation_) translation_->shutdown();
  if (transcription_) transcription_->shutdown();
  if (classification_) classification_->shutdown();
  if (synthesis_) synthesis_->shutdown();
  log_info("serve: stopped after ",
           translate_counts_.requests.load() + transcribe_counts_.requests.load() + classify_counts_.requests.load() +
               synthesize_counts_.requests.load(),
           " requests (", translate_counts_.items.load(), " sentences, ", transcribe_counts_.items.load(),
           " utterances, ", classify_counts_.items.load(), " texts classified, ", synthesize_counts_.items.load(),
           " spoken), ", refused_.load(), " refused, ", failed_.load(), " failed");
}

ModelServer::ModelServer(const ServeOptions& options, const ServedModels& models)
    : impl_(std::make_unique<Impl>(options, models)) {}

ModelServer::~ModelServer() = default;

void ModelServer::run() { impl_->run(); }

}  // namespace mixseq
