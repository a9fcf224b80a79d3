// Whole units of work side by side: each worker thread runs one unit at a time with its own
// share of the CPU threads (CTranslate2's inter_threads, Marian's --cpu-threads workers).
//
// Why: a beam step is hundreds of small operators. Split over two cores, each pays a barrier
// and leaves a core waiting in the serial glue between them, and oneDNN's int8 products are too
// small to split at all. Two batches decoded side by side, one thread each, have no barriers:
// on 2 cores beam 5 runs 1.1x (fp32) and 1.5x (int8) the sentences/s of one batch on two
// threads (docs/threads.md, "Decoding workers"). A worker's count is fixed: with one thread it
// has no barrier that another process could stall, so it needs no load following.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace mixseq {

// Workers for `tasks` units with `threads` CPU threads in all: `requested` when > 0, else one
// per thread; never more than there are tasks, at least 1.
int worker_count(int requested, int threads, int64_t tasks);

// Runs task(i) once for every i in [0, tasks). With one worker, in order on the calling thread
// (which keeps following the load). Otherwise on `workers` new threads, each taking the next
// index not yet taken, with max(1, the calling thread's count / workers) intra-op threads; the
// calling thread waits. The first exception stops the taking of new indices and is rethrown
// here once every worker has stopped. Thread-local LibTorch state (grad mode, autocast) is the
// worker's own: task sets what it needs.
void run_on_workers(int64_t tasks, int workers, const std::function<void(int64_t)>& task);

// One thread that runs jobs behind the caller's back, one at a time and in order, with one intra-op
// thread and SIGINT and SIGTERM held off it (util/stop_request.h): work the caller will want next
// (a training update's speech features, train/update_prefetch.h) made while the caller computes.
// A job reports its own result and errors (std::packaged_task); one that throws anyway ends the
// process, as an uncaught exception in any thread does.
class BackgroundThread {
 public:
  // Starts the thread; the process-wide default intra-op count that new threads start from is left
  // as the calling thread found it.
  BackgroundThread();
  // Runs the jobs still queued, then ends the thread.
  ~BackgroundThread();
  BackgroundThread(const BackgroundThread&) = delete;
  BackgroundThread& operator=(const BackgroundThread&) = delete;

  // Queues `job` after those before it.
  void run(std::function<void()> job);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool ready_ = false, stopping_ = false;
  std::thread thread_;
};

}  // namespace mixseq
