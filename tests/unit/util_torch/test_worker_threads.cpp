#include "mixseq/util/worker_threads.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(WorkerThreads, CountIsOnePerThreadOrAsRequestedButNeverAboveTheTasks) {
  EXPECT_EQ(worker_count(0, 2, 10), 2);
  EXPECT_EQ(worker_count(0, 8, 3), 3);
  EXPECT_EQ(worker_count(4, 2, 10), 4);
  EXPECT_EQ(worker_count(4, 2, 1), 1);
  EXPECT_EQ(worker_count(0, 2, 0), 1);
  EXPECT_NE(test::error_of([] { worker_count(-1, 2, 5); }).find("workers must be 0"), std::string::npos);
}

TEST(WorkerThreads, EveryTaskRunsOnceOnAWorkerWithItsShareOfTheThreads) {
  const int threads = at::get_num_threads();
  at::set_num_threads(4);
  std::vector<std::atomic<int>> runs(50);
  std::mutex mutex;
  std::set<std::thread::id> workers;
  std::vector<int> counts;
  run_on_workers(50, 2, [&](int64_t i) {
    ++runs[static_cast<size_t>(i)];
    const std::lock_guard<std::mutex> lock(mutex);
    workers.insert(std::this_thread::get_id());
    counts.push_back(at::get_num_threads());
    counts.push_back(adapt_threads_to_load());  // a worker's count is fixed
  });
  for (const auto& count : runs) EXPECT_EQ(count.load(), 1);
  EXPECT_LE(workers.size(), 2u);
  EXPECT_EQ(workers.count(std::this_thread::get_id()), 0u);
  for (const int count : counts) EXPECT_EQ(count, 2);  // 4 threads shared by 2 workers
  EXPECT_EQ(at::get_num_threads(), 4);                 // the caller's count again
  at::set_num_threads(threads);
}

TEST(WorkerThreads, OneWorkerRunsInOrderOnTheCallingThread) {
  std::vector<int64_t> order;
  const auto caller = std::this_thread::get_id();
  run_on_workers(5, 1, [&](int64_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(WorkerThreads, TheFirstErrorStopsTheTakingAndReachesTheCaller) {
  std::atomic<int> started{0};
  const auto message = test::error_of([&] {
    run_on_workers(1000, 3, [&](int64_t i) {
      ++started;
      if (i == 4) throw Error("task 4 failed");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
  });
  EXPECT_NE(message.find("task 4 failed"), std::string::npos);
  EXPECT_LT(started.load(), 1000);
}

}  // namespace
}  // namespace mixseq
