// BackgroundThread (util/worker_threads.h) and UpdatePrefetch (train/update_prefetch.h): jobs run
// in order on another thread with one intra-op thread; prefetched batches are handed over only for
// the place they were made for, errors reach the caller that asks for that place, and the
// process-wide thread default is left as it was.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mixseq/train/update_prefetch.h"
#include "mixseq/util/threads.h"
#include "mixseq/util/worker_threads.h"

namespace mixseq {
namespace {

TEST(BackgroundThread, RunsJobsInOrderOnAnotherThreadWithOneIntraOpThread) {
  set_intra_op_threads(2);
  std::vector<int> order;
  std::promise<void> done;
  std::thread::id job_thread;
  int job_threads = 0;
  {
    BackgroundThread background;
    background.run([&] { order.push_back(1); });
    background.run([&] {
      order.push_back(2);
      job_thread = std::this_thread::get_id();
      job_threads = at::get_num_threads();
    });
    background.run([&] { done.set_value(); });
    done.get_future().wait();
  }  // the destructor ran whatever was queued and joined
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_NE(job_thread, std::this_thread::get_id());
  EXPECT_EQ(job_threads, 1);
  EXPECT_EQ(at::get_num_threads(), 2);
  // A thread started now starts from the process-wide default, which the background thread's own
  // count of 1 must not have replaced.
  int fresh = 0;
  std::thread([&] { fresh = at::get_num_threads(); }).join();
  EXPECT_EQ(fresh, 2);
}

TEST(BackgroundThread, RunsWhatIsStillQueuedWhenDestroyed) {
  std::atomic<int> ran{0};
  {
    BackgroundThread background;
    for (int i = 0; i < 5; ++i) background.run([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 5);
}

// Batches of one int, the place they were made for: epoch * 100 + position.
UpdatePrefetch<int>::Maker maker_for(int64_t epoch, int64_t position, std::atomic<int>* made_on_background,
                                     std::thread::id caller) {
  return [=] {
    if (std::this_thread::get_id() != caller) ++*made_on_background;
    return std::vector<int>{static_cast<int>(epoch * 100 + position)};
  };
}

TEST(UpdatePrefetch, HandsOverBatchesOnlyForThePlaceTheyWereMadeFor) {
  const auto caller = std::this_thread::get_id();
  std::atomic<int> background{0};
  UpdatePrefetch<int> prefetch(true);
  EXPECT_TRUE(prefetch.enabled());
  EXPECT_EQ(prefetch.take(1, 0, maker_for(1, 0, &background, caller)), std::vector<int>{100});
  EXPECT_EQ(background.load(), 0);  // nothing was prefetched: made here
  prefetch.start(1, 2, maker_for(1, 2, &background, caller));
  EXPECT_EQ(prefetch.take(1, 2, maker_for(1, 2, &background, caller)), std::vector<int>{102});
  EXPECT_EQ(background.load(), 1);
  EXPECT_EQ(prefetch.taken(), 1);
  // Prefetched for a place nobody asks for (the epoch ended): made anew for the place asked.
  prefetch.start(1, 4, maker_for(1, 4, &background, caller));
  EXPECT_EQ(prefetch.take(2, 0, maker_for(2, 0, &background, caller)), std::vector<int>{200});
  EXPECT_EQ(prefetch.taken(), 1);
  // A second start replaces the first.
  prefetch.start(2, 2, maker_for(2, 2, &background, caller));
  prefetch.start(2, 3, maker_for(2, 3, &background, caller));
  EXPECT_EQ(prefetch.take(2, 3, maker_for(2, 3, &background, caller)), std::vector<int>{203});
  EXPECT_EQ(prefetch.taken(), 2);
}

TEST(UpdatePrefetch, ReportsAnErrorToTheCallerOfItsPlaceOnly) {
  UpdatePrefetch<int> prefetch(true);
  const UpdatePrefetch<int>::Maker failing = []() -> std::vector<int> { throw std::runtime_error("bad audio x.wav"); };
  const UpdatePrefetch<int>::Maker fine = [] { return std::vector<int>{7}; };
  prefetch.start(1, 1, failing);
  try {
    prefetch.take(1, 1, fine);
    ADD_FAILURE() << "the background job's error was not rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "bad audio x.wav");
  }
  prefetch.start(1, 2, failing);
  EXPECT_EQ(prefetch.take(3, 0, fine), std::vector<int>{7});  // another place: its error is dropped
  prefetch.start(1, 3, failing);                              // and one in flight at destruction
}

TEST(UpdatePrefetch, DisabledMakesEverythingOnTheCallingThread) {
  const auto caller = std::this_thread::get_id();
  std::atomic<int> background{0};
  UpdatePrefetch<int> prefetch(false);
  EXPECT_FALSE(prefetch.enabled());
  prefetch.start(1, 1, maker_for(1, 1, &background, caller));
  EXPECT_EQ(prefetch.take(1, 1, maker_for(1, 1, &background, caller)), std::vector<int>{101});
  EXPECT_EQ(background.load(), 0);
  EXPECT_EQ(prefetch.taken(), 0);
}

}  // namespace
}  // namespace mixseq
