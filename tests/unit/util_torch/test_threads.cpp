#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include <thread>

#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"
#include "mixseq/util/worker_threads.h"
#include "test_support.h"

namespace mixseq {
namespace {

TEST(Threads, ExplicitCountIsKept) {
  EXPECT_EQ(resolve_thread_count(3, 2, 1), 3);
  EXPECT_EQ(resolve_thread_count(1, 16, 4), 1);
}

TEST(Threads, DefaultSharesUsableCpusAmongLocalRanks) {
  EXPECT_EQ(resolve_thread_count(0, 2, 1), 2);
  EXPECT_EQ(resolve_thread_count(0, 16, 4), 4);
  EXPECT_EQ(resolve_thread_count(0, 2, 4), 1);  // more ranks than CPUs: still one each
}

TEST(Threads, AbsurdCountsAreClearErrors) {
  EXPECT_EQ(max_thread_count(2), 8);
  EXPECT_NE(test::error_of([] { resolve_thread_count(100000, 2, 1); }).find("at most 8 threads"), std::string::npos);
  EXPECT_NE(test::error_of([] { resolve_thread_count(-1, 2, 1); }).find("--threads must be 0"), std::string::npos);
}

TEST(Threads, LoadGivesUpCoresOthersKeepBusy) {
  EXPECT_EQ(threads_for_load(2, 0.02, 2), 2);  // idle but for the system's noise
  EXPECT_EQ(threads_for_load(2, 0.2, 2), 2);   // a core used under 25% still counts as free
  EXPECT_EQ(threads_for_load(2, 0.67, 2), 1);  // a busy process sharing 2 cores with our 2 threads
  EXPECT_EQ(threads_for_load(2, 1.0, 2), 1);   // ... and once we run 1 thread
  EXPECT_EQ(threads_for_load(2, 3.0, 2), 1);   // never fewer than one
  EXPECT_EQ(threads_for_load(16, 2.5, 16), 13);
  EXPECT_EQ(threads_for_load(16, 0.0, 8), 8);  // never more than the ranks' share
}

TEST(Threads, UsableCpusFollowAffinity) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_LE(usable_cpu_count(), CPU_COUNT(&all));
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(usable_cpu_count(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
}

TEST(Threads, ExplicitCountIsFixed) {
  EXPECT_EQ(configure_threads(1), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  EXPECT_EQ(adapt_threads_to_load(), 1);
}

// A busy process on this process's CPUs takes a thread away; when it ends, the thread comes back.
TEST(Threads, DefaultFollowsAnotherProcesssLoad) {
  if (usable_cpu_count() != 2) GTEST_SKIP() << "written for 2 usable CPUs";
  ASSERT_EQ(configure_threads(0), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  if (adapt_threads_to_load() != 2) GTEST_SKIP() << "another process already keeps a CPU busy";
  const pid_t hog = fork();
  ASSERT_GE(hog, 0);
  if (hog == 0)
    for (volatile unsigned long spin = 0;; ++spin) {
    }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const int loaded = adapt_threads_to_load();
  kill(hog, SIGKILL);
  waitpid(hog, nullptr, 0);
  EXPECT_EQ(loaded, 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  adapt_threads_to_load();  // starts a measurement window without the busy process
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_EQ(adapt_threads_to_load(), 2);
  EXPECT_EQ(at::get_num_threads(), 2);
}

// Run only by UsableCpusSurviveOpenMpBinding, in a child started with OMP_PROC_BIND=true: prints
// the calling thread's own mask size and usable_cpu_count().
TEST(Threads, DISABLED_BoundChildReports) {
  cpu_set_t own;
  ASSERT_EQ(sched_getaffinity(0, sizeof(own), &own), 0);
  std::printf("own %d usable %d\n", CPU_COUNT(&own), usable_cpu_count());
  // Worker threads (translate --workers) start from this thread's one-CPU mask.
  configure_threads(0);
  std::vector<int> worker_cpus(4);
  run_on_workers(4, 2, [&](int64_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // both workers take tasks
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) worker_cpus[static_cast<size_t>(i)] = CPU_COUNT(&mask);
  });
  for (const int cpus : worker_cpus) std::printf("worker %d\n", cpus);
  // This thread's CPUs back (main() does it), then a thread without OpenMP (prepare's and BPE's
  // line workers) started from it.
  release_initial_thread_binding();
  ASSERT_EQ(sched_getaffinity(0, sizeof(own), &own), 0);
  int plain_cpus = 0;
  std::thread plain([&] {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) plain_cpus = CPU_COUNT(&mask);
  });
  plain.join();
  std::printf("released %d plain %d\n", CPU_COUNT(&own), plain_cpus);
}

// OMP_PROC_BIND (set by many clusters' environments): libgomp binds the initial thread to the
// first place as it loads, so that thread's mask names one CPU, and mixseq used to run one thread
// at half its speed. The usable count must still be the process's CPUs. libgomp reads the variable
// only when it loads, hence a child process.
TEST(Threads, UsableCpusSurviveOpenMpBinding) {
  const int usable = usable_cpu_count();
  if (usable < 2) GTEST_SKIP() << "needs 2 usable CPUs to tell one place from all of them";
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
  const std::string command = std::string("OMP_PROC_BIND=true '") + self +
                              "' --gtest_also_run_disabled_tests --gtest_filter=Threads.DISABLED_BoundChildReports";
  FILE* child = popen(command.c_str(), "r");
  ASSERT_NE(child, nullptr);
  int own = 0, reported = 0, released = 0, plain = 0;
  std::vector<int> workers;
  char line[512];
  while (std::fgets(line, sizeof(line), child) != nullptr) {
    int cpus = 0;
    std::sscanf(line, "own %d usable %d", &own, &reported);
    std::sscanf(line, "released %d plain %d", &released, &plain);
    if (std::sscanf(line, "worker %d", &cpus) == 1) workers.push_back(cpus);
  }
  ASSERT_EQ(pclose(child), 0);
  EXPECT_EQ(own, 1) << "libgomp did not bind the initial thread: this test no longer sees what it checks";
  EXPECT_EQ(reported, usable);
  EXPECT_EQ(workers, std::vector<int>(4, usable)) << "a worker thread kept the bound thread's one CPU";
  EXPECT_EQ(released, usable);
  EXPECT_EQ(plain, usable) << "a thread started after release_initial_thread_binding kept one CPU";
}

}  // namespace
}  // namespace mixseq
