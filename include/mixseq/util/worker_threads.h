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

#include <cstdint>
#include <functional>

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

}  // namespace mixseq
