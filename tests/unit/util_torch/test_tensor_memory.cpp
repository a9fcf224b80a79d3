#include "mixseq/util/tensor_memory.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mixseq/util/allocator.h"

namespace mixseq {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// As mixseq's main() does (tests/cpu_kernels_environment.cpp does it before every suite too).
// Each test starts with no block kept.
bool huge_pages() {
  keep_freed_memory_for_reuse();
  use_huge_pages_for_tensors();
  release_kept_tensor_memory();
  return describe_tensor_memory().rfind("huge pages", 0) == 0;
}

// Writes i to element i through the data pointer (no temporary tensor: a large one would take a
// kept block) and reads a few back.
void expect_written_whole(at::Tensor& t) {
  float* data = t.data_ptr<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 4096);
  for (const int64_t i : {int64_t{0}, n / 3, n - 1}) EXPECT_EQ(data[i], static_cast<float>(i % 4096));
}

uintptr_t address(const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); }

at::Tensor block_of(int64_t mib) { return at::empty({mib * kMiB / 4}, at::kFloat); }

// AnonHugePages (kB) of the mapping of /proc/self/smaps that holds `at`.
int64_t huge_page_kb_at(uintptr_t at) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t low = 0, high = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> low >> dash >> high && dash == '-' && line.find(' ') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      inside = at >= low && at < high;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stoll(line.substr(14));
  }
  return -1;
}

TEST(TensorMemory, LargeBlocksAreMappedOnHugePageBoundariesAndReused) {
  if (!huge_pages()) GTEST_SKIP() << "tensor memory here: " << describe_tensor_memory();
  const auto before = tensor_mappings();
  ASSERT_EQ(before.kept, 0u);
  uintptr_t first = 0;
  {
    auto t = block_of(40);
    first = address(t);
    EXPECT_EQ(first % kHugePage, 0u);
    const auto during = tensor_mappings();
    EXPECT_EQ(during.live, before.live + 1);
    EXPECT_EQ(during.live_bytes, before.live_bytes + 40 * kMiB);
    expect_written_whole(t);  // the memory is the tensor's, every byte of it
  }
  const auto after = tensor_mappings();
  EXPECT_EQ(after.live, before.live);
  EXPECT_EQ(after.kept, before.kept + 1);
  {
    auto again = block_of(40);  // the kept block, not a new mapping
    EXPECT_EQ(address(again), first);
    EXPECT_EQ(tensor_mappings().kept, before.kept);
  }
  {
    auto smaller = block_of(34);  // fits the kept 40 MiB, wasting 6 of it (at most a quarter)
    EXPECT_EQ(address(smaller), first);
  }
  uintptr_t second = 0;
  {
    auto larger = block_of(64);  // no kept block holds it: a new mapping
    second = address(larger);
    EXPECT_NE(second, first);
    EXPECT_EQ(second % kHugePage, 0u);
  }
  {
    auto fits_both = block_of(34);  // the smallest kept block that fits: 40 MiB, not 64
    EXPECT_EQ(address(fits_both), first);
    auto fits_one = block_of(50);  // 64 MiB, wasting 14 (at most a quarter: 16)
    EXPECT_EQ(address(fits_one), second);
  }
  {
    auto wasteful = block_of(44);  // 64 MiB would waste 20 of it: a new mapping
    EXPECT_NE(address(wasteful), first);
    EXPECT_NE(address(wasteful), second);
  }
  // Below the limit, glibc's heap as before: neither live nor kept as a mapping.
  const auto settled = tensor_mappings();
  {
    auto heap = block_of(16);
    expect_written_whole(heap);
    EXPECT_EQ(tensor_mappings().live, settled.live);
  }
  EXPECT_EQ(tensor_mappings().kept, settled.kept);
}

TEST(TensorMemory, KeptBlocksStayWithinOneGibibyte) {
  if (!huge_pages()) GTEST_SKIP() << "tensor memory here: " << describe_tensor_memory();
  {
    std::vector<at::Tensor> blocks;  // 40 blocks of 40-79 MiB, about 2.4 GiB of address space (never touched)
    for (int64_t i = 0; i < 40; ++i) blocks.push_back(block_of(40 + i));
    EXPECT_GE(tensor_mappings().live, 40u);
  }
  const auto kept = tensor_mappings();
  EXPECT_LE(kept.kept_bytes, size_t{1} << 30);
  EXPECT_GT(kept.kept_bytes, size_t{900} << 20);  // the newest of them, up to the bound
  EXPECT_LT(kept.kept, 40u);
}

TEST(TensorMemory, RawAllocationsGoBackThroughTheRawDeleter) {
  if (!huge_pages()) GTEST_SKIP() << "tensor memory here: " << describe_tensor_memory();
  c10::Allocator* cpu = c10::GetCPUAllocator();
  ASSERT_NE(cpu->raw_deleter(), nullptr);
  for (const size_t bytes : {size_t{0}, size_t{1000}, static_cast<size_t>(48 * kMiB)}) {
    void* data = cpu->raw_allocate(bytes);  // asserts that the context is the data pointer
    if (bytes == 0) {
      EXPECT_EQ(data, nullptr);
      continue;
    }
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
    static_cast<char*>(data)[bytes - 1] = 7;
    const auto held = tensor_mappings();
    cpu->raw_deallocate(data);
    const auto released = tensor_mappings();
    const size_t mapped = bytes >= kHeapBlockLimit ? 1 : 0;
    EXPECT_EQ(released.live, held.live - mapped);
    EXPECT_EQ(released.kept, held.kept + mapped);
  }
}

// The point of it all: the kernel backs a written block with huge pages.
TEST(TensorMemory, WrittenBlocksSitOnHugePages) {
  if (!huge_pages()) GTEST_SKIP() << "tensor memory here: " << describe_tensor_memory();
  auto t = block_of(64);
  t.fill_(1.0f);
  const int64_t kb = huge_page_kb_at(address(t));
  ASSERT_GE(kb, 0) << "no mapping of /proc/self/smaps holds the tensor";
  EXPECT_GE(kb, 2048) << "the kernel gave the written 64 MiB block no huge page";
}

}  // namespace
}  // namespace mixseq
