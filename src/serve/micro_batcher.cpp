#include "mixseq/serve/micro_batcher.h"

#include <exception>
#include <utility>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Checked before the worker starts: a constructor that throws after must not leave it running.
const MicroBatcherOptions& checked(const MicroBatcherOptions& options) {
  MIXSEQ_CHECK(options.max_batch_tokens >= 1, "max_batch_tokens must be at least 1; got ", options.max_batch_tokens);
  MIXSEQ_CHECK(options.max_wait_ms >= 0, "max_wait_ms must be >= 0 (0 = no wait); got ", options.max_wait_ms);
  return options;
}

}  // namespace

MicroBatcher::MicroBatcher(const MicroBatcherOptions& options, BatchTranslate translate)
    : options_(checked(options)), translate_(std::move(translate)), worker_([this] { run(); }) {}

MicroBatcher::~MicroBatcher() { shutdown(); }

std::future<BatchResults> MicroBatcher::submit(BatchRequest request) {
  Pending pending{std::move(request), {}, std::chrono::steady_clock::now()};
  auto future = pending.promise.get_future();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    MIXSEQ_CHECK(!stopping_, "the server is shutting down; the request was not taken");
    queued_tokens_ += pending.request.source_tokens;
    queue_.push_back(std::move(pending));
  }
  changed_.notify_all();
  return future;
}

void MicroBatcher::shutdown() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

int64_t MicroBatcher::queued_requests() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

int64_t MicroBatcher::batches_run() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return batches_run_;
}

void MicroBatcher::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every request answered
    // Give other clients max_wait_ms to join the oldest request (no wait once stopping: drain).
    const auto deadline = queue_.front().arrival + std::chrono::milliseconds(options_.max_wait_ms);
    changed_.wait_until(lock, deadline, [&] { return stopping_ || queued_tokens_ >= options_.max_batch_tokens; });
    auto batch = take_batch();
    lock.unlock();
    translate_batch(batch);
    lock.lock();
    ++batches_run_;
  }
}

std::vector<MicroBatcher::Pending> MicroBatcher::take_batch() {
  std::vector<Pending> batch;
  int64_t tokens = 0;
  const BeamSearchOptions search = queue_.front().request.search;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const bool first = batch.empty();
    if (!first && (it->request.search != search ||
                   tokens + it->request.source_tokens > options_.max_batch_tokens)) {
      ++it;
      continue;
    }
    tokens += it->request.source_tokens;
    queued_tokens_ -= it->request.source_tokens;
    batch.push_back(std::move(*it));
    it = queue_.erase(it);
  }
  return batch;
}

void MicroBatcher::translate_batch(std::vector<Pending>& batch) {
  std::vector<std::string> sources;
  for (const auto& pending : batch)
    sources.insert(sources.end(), pending.request.sources.begin(), pending.request.sources.end());
  BatchResults results;
  try {
    results = translate_(sources, batch.front().request.search);
    MIXSEQ_CHECK(results.size() == sources.size(), "the translate function returned ", results.size(),
                 " results for ", sources.size(), " sentences");
  } catch (...) {
    for (auto& pending : batch) pending.promise.set_exception(std::current_exception());
    return;
  }
  size_t next = 0;
  for (auto& pending : batch) {
    const size_t count = pending.request.sources.size();
    BatchResults own(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(next)),
                     std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(next + count)));
    next += count;
    pending.promise.set_value(std::move(own));
  }
}

}  // namespace mixseq
