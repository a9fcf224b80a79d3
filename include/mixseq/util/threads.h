// CPU threads: how many LibTorch's and OpenBLAS's (shared, OpenMP) pool runs, and when.
//
// Measured on 2-core machines (docs/threads.md): an OpenMP worker that shares its core with
// another busy process makes every parallel region wait for a scheduler slice, so two threads
// run 10-25x slower than one there, while idle they run 1.5x faster than one. So by default
// (`--threads 0`) mixseq starts with every usable core and then follows the load: between units
// of work (a training update, a decoding step) adapt_threads_to_load() drops a core that another
// process keeps busy and takes it back when it is free again. An explicit thread count is
// fixed. Call configure_threads once, early in main(), before any tensor work; call
// adapt_threads_to_load from the thread that runs the tensor work (OpenMP's thread count is a
// per-thread setting).
#pragma once

namespace mixseq {

// The CPUs this process may run on: its affinity mask (taskset, numactl, a launcher's binding),
// or, where OpenMP binds threads (OMP_PROC_BIND), the CPUs of OpenMP's places (libgomp binds the
// initial thread to the first place as it loads, so that thread's own mask then names one place);
// capped by a cgroup v2 CPU quota (containers) rounded up. At least 1.
int usable_cpu_count();

// Where OpenMP binds threads (OMP_PROC_BIND, OMP_PLACES): gives the calling thread, the one libgomp
// bound to the first place as it loaded, every CPU of usable_cpu_count() back, so that the threads
// it starts (prepare's and BPE's line workers, serve's HTTP threads) are not all confined to that
// place. OpenMP's own team threads stay bound to their places. Does nothing where nothing binds.
// `mixseq`'s main() calls it before starting any thread; the library leaves a host's threads be.
void release_initial_thread_binding();

// The largest --threads accepted: beyond 4 threads per usable CPU only the waiting grows.
int max_thread_count(int usable_cpus);

// The thread count to start with: `requested` when > 0 (an error above max_thread_count),
// else the usable CPUs shared out among the `local_ranks` processes of this node, at least 1.
int resolve_thread_count(int requested, int usable_cpus, int local_ranks);

// The thread count that leaves other processes their CPU time: `usable_cpus` less the cores
// others kept busy (`others_busy_cores`, in cores, measured while this process ran), a core
// counting as taken once others use 25% of it; between 1 and `max_threads`.
int threads_for_load(int usable_cpus, double others_busy_cores, int max_threads);

// Sets LibTorch's intra-op and inter-op counts and OpenBLAS's from resolve_thread_count, and
// turns load following on when `requested` is 0. Returns the count in use.
int configure_threads(int requested, int local_ranks = 1);

// With load following on: at most every 300 ms, measures the CPU time other processes took on
// this process's CPUs since the last measurement and applies threads_for_load. Returns the
// count in use. Cheap enough to call per decoding step (a clock read between measurements).
int adapt_threads_to_load();

// LibTorch's and OpenBLAS's intra-op count: this thread's, and the process-wide default that
// new threads start from. Load following goes on from it.
void set_intra_op_threads(int threads);

// For a worker thread (util/worker_threads.h): fixes this thread's intra-op count, which
// adapt_threads_to_load then returns unchanged. OpenBLAS follows the calling thread's OpenMP
// count, so its process-wide setting is left as it is. Where OpenMP binds threads, the worker
// also gets the process's CPUs back: it inherited the mask of the thread that started it, which
// libgomp bound to one place, and every worker would have run on that one CPU.
void fix_worker_threads(int threads);

}  // namespace mixseq
