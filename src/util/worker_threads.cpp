#include "mixseq/util/worker_threads.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "mixseq/util/error.h"
#include "mixseq/util/stop_request.h"
#include "mixseq/util/threads.h"

namespace mixseq {

int worker_count(int requested, int threads, int64_t tasks) {
  MIXSEQ_CHECK(requested >= 0, "workers must be 0 (one per thread) or a positive count, not ", requested);
  const int64_t wanted = requested > 0 ? requested : threads;
  return static_cast<int>(std::max<int64_t>(1, std::min(wanted, tasks)));
}

void run_on_workers(int64_t tasks, int workers, const std::function<void(int64_t)>& task) {
  if (workers <= 1 || tasks <= 1) {
    for (int64_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  const int threads = at::get_num_threads();
  const int threads_per_worker = std::max(1, threads / workers);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      fix_worker_threads(threads_per_worker);
      for (int64_t i; !failed.load() && (i = next.fetch_add(1)) < tasks;) {
        try {
          task(i);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(error_mutex);
          if (!first_error) first_error = std::current_exception();
          failed.store(true);
        }
      }
    });
  for (auto& worker : pool) worker.join();
  // The workers' counts were also stored as LibTorch's and OpenBLAS's process-wide defaults.
  set_intra_op_threads(threads);
  if (first_error) std::rethrow_exception(first_error);
}

BackgroundThread::BackgroundThread() {
  const int threads = at::get_num_threads();
  thread_ = std::thread([this] { loop(); });
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return ready_; });
  // fix_worker_threads(1) on the new thread also stored 1 as the process-wide default.
  set_intra_op_threads(threads);
}

BackgroundThread::~BackgroundThread() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundThread::run(std::function<void()> job) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void BackgroundThread::loop() {
  hold_stop_signals_for_good();
  fix_worker_threads(1);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ready_ = true;
  }
  changed_.notify_all();
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace mixseq
