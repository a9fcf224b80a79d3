// MicroBatcher: many client threads submit translation requests; one worker thread, the only
// one that runs the model, takes the queued requests that can share a search, translates their
// sentences as one batch and hands each request its own results (in order) through its future.
// A batch of one client's short request costs nearly what a batch of sixteen clients' costs on
// a busy model, so batching them is where a server's throughput comes from (Marian's and
// CTranslate2's servers batch the same way).
//
// The batch. The worker waits for the oldest request, then up to max_wait_ms more for others,
// unless the queue already holds max_batch_tokens source tokens. It takes the oldest request and
// every later one with the same search options, in arrival order, while the total stays within
// max_batch_tokens (a bigger request runs alone). Requests with other options wait for a
// later batch: beam size and n-best are per batch.
//
// Threads and ownership. submit() and queued_requests() may be called from any thread. The
// translate function runs on the worker thread only, so it may own a model that is not
// thread-safe. An exception it throws reaches every request of that batch through its future.
// shutdown() (and the destructor) lets the worker finish every request already submitted; a
// submit() after it throws mixseq::Error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mixseq/decode/beam_search.h"
#include "mixseq/decode/translator.h"

namespace mixseq {

struct MicroBatcherOptions {
  int64_t max_batch_tokens = 4096;  // source tokens per batch; one request with more runs alone
  int64_t max_wait_ms = 5;          // how long a batch's first request waits for others; 0 = no wait
};

// For each source sentence, in order, its hypotheses (best first).
using BatchResults = std::vector<std::vector<TextHypothesis>>;
using BatchTranslate = std::function<BatchResults(const std::vector<std::string>& sources,
                                                  const BeamSearchOptions& search)>;

struct BatchRequest {
  std::vector<std::string> sources;
  BeamSearchOptions search;
  int64_t source_tokens = 0;  // of all its sentences, as counted against max_batch_tokens
};

class MicroBatcher {
 public:
  MicroBatcher(const MicroBatcherOptions& options, BatchTranslate translate);
  ~MicroBatcher();
  MicroBatcher(const MicroBatcher&) = delete;
  MicroBatcher& operator=(const MicroBatcher&) = delete;

  std::future<BatchResults> submit(BatchRequest request);
  // Waits until every submitted request is answered, then stops the worker.
  void shutdown();

  int64_t queued_requests() const;  // submitted, not yet taken into a batch
  int64_t batches_run() const;      // batches translated so far

 private:
  struct Pending {
    BatchRequest request;
    std::promise<BatchResults> promise;
    std::chrono::steady_clock::time_point arrival;
  };

  void run();                          // the worker's loop
  std::vector<Pending> take_batch();   // with mutex_ held; the queue is not empty
  void translate_batch(std::vector<Pending>& batch);

  MicroBatcherOptions options_;
  BatchTranslate translate_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> queue_;
  int64_t queued_tokens_ = 0;
  int64_t batches_run_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // last: starts once everything above is ready
};

}  // namespace mixseq
