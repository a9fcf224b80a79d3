#include "mixseq/util/tensor_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mixseq/util/allocator.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;
constexpr size_t kAlignment = 64;                       // c10's own CPU alignment (gAlignment)
constexpr size_t kKeptMappingsBytes = size_t{1} << 30;  // mapped blocks kept for reuse, at most

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never"),
// or "" where it cannot be read.
std::string transparent_huge_page_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  const auto open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return text.substr(open + 1, close - open - 1);
}

// The start of glibc's main heap ("[heap]" in /proc/self/maps), or 0 where it has none yet.
uintptr_t heap_start() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.size() > 6 && line.compare(line.size() - 6, 6, "[heap]") == 0)
      return static_cast<uintptr_t>(std::strtoull(line.c_str(), nullptr, 16));
  return 0;
}

uintptr_t heap_end() { return reinterpret_cast<uintptr_t>(sbrk(0)) & ~(uintptr_t{kPage - 1}); }

class TensorMemory {
 public:
  explicit TensorMemory(uintptr_t advised_from) : advised_end_(advised_from) { advise_heap_growth(); }

  // A 2 MiB-aligned block of at least `bytes` on huge pages: a kept one that fits closely, else
  // a new mapping; nullptr where the kernel refuses.
  void* map(size_t bytes) {
    const size_t length = round_up(bytes, kHugePage);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // The smallest kept block that holds `length` wasting at most a quarter of itself.
      size_t best = kept_.size();
      for (size_t i = 0; i < kept_.size(); ++i) {
        const size_t size = kept_[i].second;
        if (size >= length && size - length <= size / 4 && (best == kept_.size() || size < kept_[best].second))
          best = i;
      }
      if (best < kept_.size()) {
        const auto block = kept_[best];
        kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(best));
        kept_bytes_ -= block.second;
        live_.emplace(block.first, block.second);
        return block.first;
      }
    }
    // One huge page more than needed, to start on a 2 MiB boundary; the ends go back at once.
    void* base = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return nullptr;
    const uintptr_t first = reinterpret_cast<uintptr_t>(base), aligned = round_up(first, kHugePage);
    if (aligned > first) munmap(base, aligned - first);
    const uintptr_t tail = first + length + kHugePage - (aligned + length);
    if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
    void* block = reinterpret_cast<void*>(aligned);
    madvise(block, length, MADV_HUGEPAGE);
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(block, length);
    return block;
  }

  // Whether `data` is a block of map(); if so it is kept for reuse, the oldest kept blocks
  // unmapped past kKeptMappingsBytes.
  bool release(void* data) {
    std::vector<std::pair<void*, size_t>> unmapped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = live_.find(data);
      if (it == live_.end()) return false;
      kept_.emplace_back(data, it->second);
      kept_bytes_ += it->second;
      live_.erase(it);
      while (kept_bytes_ > kKeptMappingsBytes) {
        unmapped.push_back(kept_.front());
        kept_bytes_ -= kept_.front().second;
        kept_.erase(kept_.begin());
      }
    }
    for (const auto& [block, length] : unmapped) munmap(block, length);
    return true;
  }

  // Advises what glibc's heap has grown by since the last call (it grows by M_TOP_PAD, 64 MiB).
  void advise_heap_growth() {
    const uintptr_t end = heap_end();
    if (end <= advised_end_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const uintptr_t from = advised_end_.load(std::memory_order_relaxed);
    if (end > from) {
      madvise(reinterpret_cast<void*>(from), end - from, MADV_HUGEPAGE);
      advised_end_.store(end, std::memory_order_relaxed);
    }
  }

  void release_kept() {
    std::vector<std::pair<void*, size_t>> unmapped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      unmapped.swap(kept_);
      kept_bytes_ = 0;
    }
    for (const auto& [block, length] : unmapped) munmap(block, length);
  }

  TensorMappings mappings() {
    std::lock_guard<std::mutex> lock(mutex_);
    TensorMappings counts;
    counts.live = live_.size();
    for (const auto& block : live_) counts.live_bytes += block.second;
    counts.kept = kept_.size();
    counts.kept_bytes = kept_bytes_;
    return counts;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, size_t> live_;      // block -> its length
  std::vector<std::pair<void*, size_t>> kept_;  // oldest first
  size_t kept_bytes_ = 0;
  std::atomic<uintptr_t> advised_end_;  // the heap is advised up to here; written under the lock
};

TensorMemory* g_memory = nullptr;  // set once, before any tensor; never destroyed

void free_tensor_memory(void* data) {
  // Mapped blocks start on a 2 MiB boundary; a heap block rarely does, and is looked up only then.
  if (data == nullptr) return;
  if (reinterpret_cast<uintptr_t>(data) % kHugePage == 0 && g_memory->release(data)) return;
  std::free(data);
}

c10::DataPtr allocate_tensor_memory(size_t bytes) {
  const c10::Device cpu(c10::DeviceType::CPU);
  if (bytes == 0) return {nullptr, nullptr, &free_tensor_memory, cpu};
  void* data = bytes >= kHeapBlockLimit ? g_memory->map(bytes) : nullptr;
  if (data == nullptr) {
    TORCH_CHECK(posix_memalign(&data, kAlignment, bytes) == 0 && data != nullptr,
                "mixseq: out of host memory: a tensor of ", bytes, " bytes");
    g_memory->advise_heap_growth();
  }
  return {data, data, &free_tensor_memory, cpu};
}

std::string& description() {
  static std::string text = "4 KiB pages (use_huge_pages_for_tensors was not called)";
  return text;
}

}  // namespace

void use_huge_pages_for_tensors() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* setting = std::getenv("MIXSEQ_HUGE_PAGES");
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    const std::string mode = transparent_huge_page_mode();
    if (setting != nullptr && std::string(setting) == "0") {
      description() = "4 KiB pages (MIXSEQ_HUGE_PAGES=0)";
      return;
    }
    if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) {
      description() = "glibc's (GLIBC_TUNABLES sets glibc.malloc.hugetlb)";
      return;
    }
    if (mode != "madvise" && mode != "always") {
      description() = "4 KiB pages (transparent huge pages: " + (mode.empty() ? std::string("unknown") : mode) + ")";
      return;
    }
    const uintptr_t start = heap_start();
    g_memory = new TensorMemory(start != 0 ? start : heap_end());
    if (!compat::set_cpu_allocator(&allocate_tensor_memory, &free_tensor_memory)) {
      description() = "LibTorch's own allocator (not replaceable in LibTorch " TORCH_VERSION ")";
      return;
    }
    description() = "huge pages (" + mode + ")";
  });
}

std::string describe_tensor_memory() { return description(); }

TensorMappings tensor_mappings() { return g_memory == nullptr ? TensorMappings{} : g_memory->mappings(); }

void release_kept_tensor_memory() {
  if (g_memory != nullptr) g_memory->release_kept();
}

}  // namespace mixseq
