// MicroBatcher: many client threads submit requests; one worker thread, the only one that runs
// the model, takes the queued requests that can share a batch, runs their items (sentences to
// translate, utterances to transcribe) as one batch and hands each request its own results (in
// order) through its future. A batch of one client's short request costs nearly what a batch of
// sixteen clients' costs on a busy model, so batching them is where a server's throughput comes
// from (Marian's and CTranslate2's servers batch the same way). `mixseq serve` runs one batcher
// per model: TranslationBatcher for POST /translate, TranscriptionBatcher for POST /transcribe,
// ClassificationBatcher for POST /classify, SynthesisBatcher for POST /synthesize.
//
// The batch. The worker waits for the oldest request, then up to max_wait_ms more for others,
// unless the queue already holds max_batch_cost. It takes the oldest request and every later one
// with equal settings (operator==), in arrival order, while the total cost stays within
// max_batch_cost (a costlier request runs alone). Requests with other settings wait for a later
// batch: a translation's beam size and n-best are per batch. The cost is the caller's measure of
// the work: source tokens for translation, feature frames for speech.
//
// Threads and ownership. submit() and queued_requests() may be called from any thread. The
// run function runs on the worker thread only, so it may own a model that is not thread-safe.
// A failure is its request's own: where the run function throws for a batch of several requests,
// each of them is run again alone, and the exception reaches (through its future) only a request
// whose own items throw it; the others get their results. One client's bad input (a text that no
// check foresaw, on which the model fails) must not fail the clients it shared a batch with.
// shutdown() (and the destructor) lets the worker finish every request already submitted; a
// submit() after it throws mixseq::Error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mixseq/decode/beam_search.h"
#include "mixseq/decode/sentence_classification.h"
#include "mixseq/decode/speech_transcriber.h"
#include "mixseq/decode/text_to_speech.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/util/error.h"

namespace mixseq {

struct MicroBatcherOptions {
  int64_t max_batch_cost = 4096;  // cost (source tokens, feature frames) per batch; one costlier request runs alone
  int64_t max_wait_ms = 5;        // how long a batch's first request waits for others; 0 = no wait
};

// Throws mixseq::Error naming a bad value (a cost limit below 1, a negative wait).
void check_micro_batcher_options(const MicroBatcherOptions& options);

// Item: what a request holds many of (a sentence); Result: what the model makes of one item;
// Settings: what every request of a batch must share (compared with ==).
template <typename Item, typename Result, typename Settings>
class MicroBatcher {
 public:
  struct Request {
    std::vector<Item> items;
    Settings settings{};
    int64_t cost = 0;  // of all its items, as counted against max_batch_cost
  };
  using Results = std::vector<Result>;  // one per item, in order
  // Runs one batch: every item of the batch's requests, in order; returns one result per item.
  using RunBatch = std::function<Results(const std::vector<Item>& items, const Settings& settings)>;

  MicroBatcher(const MicroBatcherOptions& options, RunBatch run_batch)
      : options_(checked(options)), run_batch_(std::move(run_batch)), worker_([this] { run(); }) {}
  ~MicroBatcher() { shutdown(); }
  MicroBatcher(const MicroBatcher&) = delete;
  MicroBatcher& operator=(const MicroBatcher&) = delete;

  std::future<Results> submit(Request request);
  // Waits until every submitted request is answered, then stops the worker.
  void shutdown();

  int64_t queued_requests() const;  // submitted, not yet taken into a batch
  int64_t batches_run() const;      // batches run so far

 private:
  struct Pending {
    Request request;
    std::promise<Results> promise;
    std::chrono::steady_clock::time_point arrival;
  };

  // Checked before the worker starts: a constructor that throws after must not leave it running.
  static const MicroBatcherOptions& checked(const MicroBatcherOptions& options) {
    check_micro_batcher_options(options);
    return options;
  }
  void run();                          // the worker's loop
  std::vector<Pending> take_batch();   // with mutex_ held; the queue is not empty
  void run_batch(std::vector<Pending>& batch);

  MicroBatcherOptions options_;
  RunBatch run_batch_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> queue_;
  int64_t queued_cost_ = 0;
  int64_t batches_run_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // last: starts once everything above is ready
};

// POST /translate: sentences in, their hypotheses (best first) out, batched per search.
using TranslationBatcher = MicroBatcher<std::string, std::vector<TextHypothesis>, BeamSearchOptions>;

// POST /transcribe: utterances (mono samples at the recognizer's rate) in, transcripts out. Every
// request is decoded alike, with the server's settings, so any requests may share a batch.
struct AnyBatch {
  bool operator==(const AnyBatch&) const { return true; }
};
using TranscriptionBatcher = MicroBatcher<std::vector<float>, Transcript, AnyBatch>;

// POST /classify: texts in, a label and its probabilities out; every request alike.
using ClassificationBatcher = MicroBatcher<std::string, ClassPrediction, AnyBatch>;

// POST /synthesize: texts in, audio out; every request alike.
using SynthesisBatcher = MicroBatcher<std::string, SynthesizedSpeech, AnyBatch>;

// ---------------------------------------------------------------------------------------------
// The template's implementation.

template <typename Item, typename Result, typename Settings>
std::future<typename MicroBatcher<Item, Result, Settings>::Results> MicroBatcher<Item, Result, Settings>::submit(
    Request request) {
  Pending pending{std::move(request), {}, std::chrono::steady_clock::now()};
  auto future = pending.promise.get_future();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    MIXSEQ_CHECK(!stopping_, "the server is shutting down; the request was not taken");
    queued_cost_ += pending.request.cost;
    queue_.push_back(std::move(pending));
  }
  changed_.notify_all();
  return future;
}

template <typename Item, typename Result, typename Settings>
void MicroBatcher<Item, Result, Settings>::shutdown() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

template <typename Item, typename Result, typename Settings>
int64_t MicroBatcher<Item, Result, Settings>::queued_requests() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

template <typename Item, typename Result, typename Settings>
int64_t MicroBatcher<Item, Result, Settings>::batches_run() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return batches_run_;
}

template <typename Item, typename Result, typename Settings>
void MicroBatcher<Item, Result, Settings>::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every request answered
    // Give other clients max_wait_ms to join the oldest request (no wait once stopping: drain).
    const auto deadline = queue_.front().arrival + std::chrono::milliseconds(options_.max_wait_ms);
    changed_.wait_until(lock, deadline, [&] { return stopping_ || queued_cost_ >= options_.max_batch_cost; });
    auto batch = take_batch();
    lock.unlock();
    run_batch(batch);
    lock.lock();
    ++batches_run_;
  }
}

template <typename Item, typename Result, typename Settings>
std::vector<typename MicroBatcher<Item, Result, Settings>::Pending> MicroBatcher<Item, Result, Settings>::take_batch() {
  std::vector<Pending> batch;
  int64_t cost = 0;
  const Settings settings = queue_.front().request.settings;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const bool first = batch.empty();
    if (!first && (!(it->request.settings == settings) || cost + it->request.cost > options_.max_batch_cost)) {
      ++it;
      continue;
    }
    cost += it->request.cost;
    queued_cost_ -= it->request.cost;
    batch.push_back(std::move(*it));
    it = queue_.erase(it);
  }
  return batch;
}

template <typename Item, typename Result, typename Settings>
void MicroBatcher<Item, Result, Settings>::run_batch(std::vector<Pending>& batch) {
  std::vector<Item> items;
  std::vector<size_t> counts;  // items of each request: theirs are moved out below
  for (auto& pending : batch) {
    auto& own = pending.request.items;
    counts.push_back(own.size());
    items.insert(items.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
  }
  const Settings& settings = batch.front().request.settings;
  const auto run = [&](const std::vector<Item>& some) {
    Results out = run_batch_(some, settings);
    MIXSEQ_CHECK(out.size() == some.size(), "the batch function returned ", out.size(), " results for ", some.size(),
                 " items");
    return out;
  };
  Results results;
  try {
    results = run(items);
  } catch (...) {
    if (batch.size() == 1) {
      batch.front().promise.set_exception(std::current_exception());
      return;
    }
    size_t first = 0;
    for (size_t r = 0; r < batch.size(); ++r) {  // each request alone, to find whose failure it is
      const std::vector<Item> own(items.begin() + static_cast<std::ptrdiff_t>(first),
                                  items.begin() + static_cast<std::ptrdiff_t>(first + counts[r]));
      first += counts[r];
      try {
        batch[r].promise.set_value(run(own));
      } catch (...) {
        batch[r].promise.set_exception(std::current_exception());
      }
    }
    return;
  }
  size_t next = 0;
  for (size_t r = 0; r < batch.size(); ++r) {
    Results own(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(next)),
                std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(next + counts[r])));
    next += counts[r];
    batch[r].promise.set_value(std::move(own));
  }
}

}  // namespace mixseq
