#include "mixseq/util/parallel_lines.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// The first line of a slice that threw, with the exception's message.
struct SliceFailure {
  size_t index;
  std::string what;
};

std::optional<SliceFailure> transform_slice(const LineTransform& transform, const std::vector<std::string>& lines,
                                            std::vector<std::string>& results, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    try {
      results[i] = transform(lines[i]);
    } catch (const std::exception& e) {
      return SliceFailure{i, e.what()};
    } catch (...) {
      return SliceFailure{i, "unknown exception"};
    }
  }
  return std::nullopt;
}

}  // namespace

int64_t transform_lines(LineReader& in, std::ostream& out, const LineTransform& transform,
                        const ParallelLinesOptions& options) {
  MIXSEQ_CHECK(options.threads >= 0, "threads must be >= 0 (0 = one per core), got ", options.threads);
  MIXSEQ_CHECK(options.chunk_lines >= 1, "chunk_lines must be >= 1, got ", options.chunk_lines);
  const size_t threads =
      options.threads > 0 ? static_cast<size_t>(options.threads) : std::max(1u, std::thread::hardware_concurrency());
  const size_t round_size = threads * static_cast<size_t>(options.chunk_lines);
  std::vector<std::string> lines(round_size), results(round_size);
  std::vector<std::optional<SliceFailure>> failures(threads);
  int64_t total = 0;
  for (bool more = true; more;) {
    const int64_t first_line_number = in.line_number() + 1;
    size_t count = 0;
    while (count < round_size && in.next(lines[count])) ++count;
    more = count == round_size;
    if (count == 0) break;

    // Worker w takes lines [count*w/threads, count*(w+1)/threads); worker 0 is this thread.
    const auto slice_begin = [&](size_t w) { return count * w / threads; };
    std::vector<std::thread> workers;
    for (size_t w = 1; w < threads; ++w)
      workers.emplace_back([&, w] {
        failures[w] = transform_slice(transform, lines, results, slice_begin(w), slice_begin(w + 1));
      });
    failures[0] = transform_slice(transform, lines, results, slice_begin(0), slice_begin(1));
    for (auto& worker : workers) worker.join();

    for (const auto& failure : failures)  // slices are in input order: the first failure is the earliest
      if (failure) throw input_error(in.path(), first_line_number + static_cast<int64_t>(failure->index), failure->what);
    for (size_t i = 0; i < count; ++i) out << results[i] << '\n';
    total += static_cast<int64_t>(count);
  }
  return total;
}

}  // namespace mixseq
