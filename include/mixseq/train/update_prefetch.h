// UpdatePrefetch: a task's next update's micro-batches, made on a background thread
// (util/worker_threads.h) while the current update runs, for tasks whose batches cost real CPU
// time to make (speech features computed on the fly: a third of an update of a small recognizer).
//
// The batches must be a pure function of their place, (epoch, position in the epoch): what the
// task's makers return for a place may not depend on when or on which thread they run. Then
// prefetching changes nothing but the time: a resumed run, a validation in between or a guess
// that was not taken (the epoch ended) makes the batches on the calling thread and gets the very
// same ones. The speech task draws each batch's augmentation from a generator seeded by the
// seed, the epoch and the batch (train/speech_recognition_task.cpp) for that reason.
//
//   auto batches = prefetch.take(epoch, position, make_here);  // the prefetched ones when made for this place
//   prefetch.start(epoch, position + update_freq, make_next);  // the next update's, while this one runs
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "mixseq/util/worker_threads.h"

namespace mixseq {

template <class Batch>
class UpdatePrefetch {
 public:
  // Makes one update's micro-batches. It may run on the background thread: it must hold (by value)
  // everything of the task's that can change meanwhile, such as the epoch's plan.
  using Maker = std::function<std::vector<Batch>()>;

  // `enabled` false: take() always makes the batches on the calling thread and start() does nothing.
  explicit UpdatePrefetch(bool enabled) {
    if (enabled) thread_ = std::make_unique<BackgroundThread>();
  }
  // Waits for a job in flight (its batches and any error are dropped).
  ~UpdatePrefetch() { drop(); }
  UpdatePrefetch(const UpdatePrefetch&) = delete;
  UpdatePrefetch& operator=(const UpdatePrefetch&) = delete;

  // The batches at (epoch, position): the prefetched ones when start() was last called for this
  // place (an error making them is rethrown here), else make() on the calling thread.
  std::vector<Batch> take(int64_t epoch, int64_t position, const Maker& make) {
    if (pending_.valid() && epoch == epoch_ && position == position_) {
      ++taken_;
      return pending_.get();
    }
    drop();
    return make();
  }

  // Starts make() for the batches at (epoch, position) on the background thread, after any job in
  // flight; nothing when disabled.
  void start(int64_t epoch, int64_t position, Maker make) {
    if (!thread_) return;
    drop();
    auto job = std::make_shared<std::packaged_task<std::vector<Batch>()>>(std::move(make));
    pending_ = job->get_future();
    epoch_ = epoch;
    position_ = position;
    thread_->run([job] { (*job)(); });
  }

  bool enabled() const { return thread_ != nullptr; }
  // take() calls that got prefetched batches (for tests and logs).
  int64_t taken() const { return taken_; }

 private:
  // Waits for the job in flight, if any, and forgets it.
  void drop() {
    if (!pending_.valid()) return;
    try {
      pending_.get();
    } catch (...) {  // batches nobody asked for: a wanted place reports its error when made
    }
  }

  std::unique_ptr<BackgroundThread> thread_;
  std::future<std::vector<Batch>> pending_;
  int64_t epoch_ = -1, position_ = -1;
  int64_t taken_ = 0;
};

}  // namespace mixseq
