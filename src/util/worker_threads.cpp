#include "mixseq/util/worker_threads.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "mixseq/util/error.h"
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

}  // namespace mixseq
