#include "mixseq/util/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mixseq/util/error.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {
namespace {

// OpenBLAS is a dependency of LibTorch, not of mixseq: find its setter at run time, if loaded.
void set_openblas_threads(int threads) {
  using Setter = void (*)(int);
  if (auto setter = reinterpret_cast<Setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    setter(threads);
}

// The OpenMP pool's workers (the calling thread's team of `threads`) never take SIGINT or
// SIGTERM: those go to a thread outside the pool, or wait, pending, until the calling thread
// takes them. Why: Debian's oneDNN sgemm corrupts the heap when a signal handler runs on a thread
// inside it (nn/bf16_matmul.cpp), and training handles both signals (util/stop_request.h).
void keep_stop_signals_off_the_pool(int threads) {
#pragma omp parallel num_threads(threads)
  if (omp_get_thread_num() != 0) hold_stop_signals_for_good();
}

// cgroup v2's "cpu.max": "<quota> <period>" or "max <period>". 0 when there is no quota.
int cgroup_cpu_quota() {
  std::ifstream file("/sys/fs/cgroup/cpu.max");
  std::string quota;
  double period = 0;
  if (!(file >> quota >> period) || quota == "max" || period <= 0) return 0;
  return static_cast<int>(std::ceil(std::stod(quota) / period));
}

// Busy time of the given CPUs since boot, in seconds, from /proc/stat's "cpuN" lines: user, nice,
// system, irq, softirq and steal (time the hypervisor gave another machine); idle and iowait are free.
double busy_seconds(const cpu_set_t& cpus) {
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream stat("/proc/stat");
  std::string line;
  double busy_ticks = 0;
  while (std::getline(stat, line)) {
    if (line.rfind("cpu", 0) != 0) continue;
    if (line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;  // the "cpu" total
    std::istringstream fields(line.substr(3));
    int cpu = 0;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &cpus)) busy_ticks += user + nice + system + irq + softirq + steal;
  }
  return busy_ticks / ticks_per_second;
}

// The CPUs this process may run on. The calling thread's affinity mask is that set, except where
// OpenMP binds threads (OMP_PROC_BIND, OMP_PLACES): then libgomp has bound this, the initial,
// thread to the first place when it loaded, and its mask holds that place alone (one CPU: mixseq
// ran one thread, half its speed). The places, made from the process's mask before that, hold
// every CPU it may use.
void process_cpus(cpu_set_t& cpus) {
  CPU_ZERO(&cpus);
  if (omp_get_proc_bind() != omp_proc_bind_false) {
    for (int place = 0; place < omp_get_num_places(); ++place) {
      std::vector<int> ids(static_cast<size_t>(std::max(0, omp_get_place_num_procs(place))));
      omp_get_place_proc_ids(place, ids.data());
      for (const int id : ids)
        if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &cpus);
    }
    if (CPU_COUNT(&cpus) > 0) return;
  }
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) CPU_ZERO(&cpus);
}

// Where OpenMP binds threads: the calling thread may run on every CPU of process_cpus() again
// (its own mask only; OpenMP's team threads keep theirs).
void give_calling_thread_process_cpus() {
  if (omp_get_proc_bind() == omp_proc_bind_false) return;
  cpu_set_t cpus;
  process_cpus(cpus);
  if (CPU_COUNT(&cpus) > 0) sched_setaffinity(0, sizeof(cpus), &cpus);
}

double own_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Process-wide, like the thread pools it steers; touched only from the thread doing tensor work.
struct LoadFollower {
  bool enabled = false;
  int usable_cpus = 1;
  int max_threads = 1;
  int threads = 1;
  cpu_set_t cpus{};
  std::chrono::steady_clock::time_point last_wall;
  double last_busy = 0;
  double last_own = 0;
};
LoadFollower follower;

thread_local int fixed_worker_threads = 0;  // > 0 on a worker thread: its count, left alone

constexpr auto kMeasurementInterval = std::chrono::milliseconds(300);

}  // namespace

int usable_cpu_count() {
  cpu_set_t cpus;
  process_cpus(cpus);
  int count = CPU_COUNT(&cpus);
  if (count <= 0) count = static_cast<int>(std::thread::hardware_concurrency());
  const int quota = cgroup_cpu_quota();
  if (quota > 0) count = std::min(count, quota);
  return std::max(1, count);
}

void release_initial_thread_binding() { give_calling_thread_process_cpus(); }

int max_thread_count(int usable_cpus) { return 4 * std::max(1, usable_cpus); }

int resolve_thread_count(int requested, int usable_cpus, int local_ranks) {
  MIXSEQ_CHECK(requested >= 0, "--threads must be 0 (follow the load) or a positive count, not ", requested);
  MIXSEQ_CHECK(requested <= max_thread_count(usable_cpus), "--threads ", requested, " is more than 4 per CPU: this process may use ",
               usable_cpus, " CPUs, so at most ", max_thread_count(usable_cpus), " threads (0 picks a count by itself)");
  if (requested > 0) return requested;
  return std::max(1, usable_cpus / std::max(1, local_ranks));
}

int threads_for_load(int usable_cpus, double others_busy_cores, int max_threads) {
  const int taken = std::max(0, static_cast<int>(std::ceil(others_busy_cores - 0.25)));
  return std::clamp(usable_cpus - taken, 1, std::max(1, max_threads));
}

int configure_threads(int requested, int local_ranks) {
  const int usable = usable_cpu_count();
  const int threads = resolve_thread_count(requested, usable, local_ranks);
  set_intra_op_threads(threads);
  static bool interop_set = false;  // LibTorch allows setting it once per process
  if (!interop_set) {
    try {
      at::set_num_interop_threads(threads);
    } catch (const c10::Error&) {
      // The host process (Python with torch, through the library's module) already ran inter-op
      // work: LibTorch keeps the pool it started, and the intra-op count above is what matters.
    }
    interop_set = true;
  }
  follower = LoadFollower{};
  follower.enabled = requested == 0;
  follower.usable_cpus = usable;
  follower.max_threads = follower.threads = threads;
  if (follower.enabled) {
    process_cpus(follower.cpus);
    if (CPU_COUNT(&follower.cpus) == 0)
      for (int cpu = 0; cpu < usable; ++cpu) CPU_SET(cpu, &follower.cpus);
    follower.last_wall = std::chrono::steady_clock::now();
    follower.last_busy = busy_seconds(follower.cpus);
    follower.last_own = own_cpu_seconds();
  }
  return threads;
}

void set_intra_op_threads(int threads) {
  at::set_num_threads(threads);
  set_openblas_threads(threads);
  keep_stop_signals_off_the_pool(threads);
}

void fix_worker_threads(int threads) {
  at::get_num_threads();  // LibTorch's first call on a thread applies the process-wide default: not after ours
  at::set_num_threads(threads);
  keep_stop_signals_off_the_pool(threads);
  fixed_worker_threads = threads;
  // After the thread's first parallel region (keep_stop_signals_off_the_pool): libgomp binds a
  // thread it did not start there, so a mask set before it would not last.
  give_calling_thread_process_cpus();
}

int adapt_threads_to_load() {
  if (fixed_worker_threads > 0) return fixed_worker_threads;
  if (!follower.enabled) return follower.threads;
  const auto now = std::chrono::steady_clock::now();
  if (now - follower.last_wall < kMeasurementInterval) return follower.threads;
  const double busy = busy_seconds(follower.cpus), own = own_cpu_seconds();
  const double wall = std::chrono::duration<double>(now - follower.last_wall).count();
  // Others' share: what our CPUs were busy with beyond this process's own CPU time.
  const double others = ((busy - follower.last_busy) - (own - follower.last_own)) / wall;
  follower.last_wall = now;
  follower.last_busy = busy;
  follower.last_own = own;
  const int threads = threads_for_load(follower.usable_cpus, others, follower.max_threads);
  if (threads != follower.threads) {
    set_intra_op_threads(threads);
    follower.threads = threads;
  }
  return threads;
}

}  // namespace mixseq
