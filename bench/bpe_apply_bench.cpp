// bpe_apply_bench: learns BPE codes from a corpus, then times `bpe apply` over the same corpus with
// one worker thread and with one per core. Prints one JSON line (figures in docs/bpe.md).
//
//   bpe_apply_bench [corpus.txt] [symbols=10000] [repeats=3]
// Without a corpus it writes a synthetic one: 200,000 lines of random words drawn from a fixed-seed
// Zipf-like distribution over 100,000 word types. Each apply pass starts with empty word caches;
// the fastest of `repeats` passes is reported.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include <unistd.h>

#include "mixseq/text/bpe_applier.h"
#include "mixseq/text/bpe_learner.h"
#include "mixseq/util/utf8.h"
#include "mixseq/util/line_reader.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void write_synthetic_corpus(const std::string& path) {
  std::mt19937_64 random(20160807);
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  std::vector<std::string> words(100000);
  for (auto& word : words)
    for (size_t n = 2 + random() % 10; n > 0; --n) word += letters[random() % letters.size()];
  std::ofstream out(path, std::ios::binary);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int line = 0; line < 200000; ++line) {
    for (size_t n = 5 + random() % 20; n > 0; --n) {
      // Zipf-like ranks: rank = exp(u * ln(types)) - 1 gives P(rank) ~ 1 / (rank + 1).
      const auto rank = static_cast<size_t>(std::exp(uniform(random) * std::log(words.size())) - 1.0);
      out << words[std::min(rank, words.size() - 1)] << (n > 1 ? " " : "\n");
    }
  }
}

struct Throughput {
  double seconds;
  double lines_per_second;
  double words_per_second;
};

Throughput time_apply(const mixseq::BpeCodes& codes, int threads, const std::string& corpus, const std::string& output,
                      int repeats, int64_t lines, int64_t words) {
  mixseq::BpeApplyOptions options;
  options.threads = threads;
  const mixseq::BpeApplier applier(codes, options);
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    applier.apply_file(corpus, output);
    best = std::min(best, seconds_since(start));
  }
  return {best, lines / best, words / best};
}

}  // namespace

int main(int argc, char** argv) {
  const auto temp_dir = std::filesystem::temp_directory_path() / ("bpe_apply_bench_" + std::to_string(getpid()));
  std::filesystem::create_directories(temp_dir);
  std::string corpus = argc > 1 ? argv[1] : "";
  const std::string corpus_name = corpus.empty() ? "synthetic" : corpus;
  const int64_t symbols = argc > 2 ? std::stoll(argv[2]) : 10000;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  if (corpus.empty()) {
    corpus = (temp_dir / "synthetic.txt").string();
    write_synthetic_corpus(corpus);
  }
  const std::string output = (temp_dir / "out.txt").string();

  int64_t lines = 0, words = 0;
  {
    mixseq::LineReader reader(corpus);
    for (std::string line; reader.next(line); ++lines)
      for (const auto word : mixseq::split_on_space(line)) words += !word.empty();
  }
  const auto learn_start = Clock::now();
  const mixseq::WordCounts counts = mixseq::count_words({corpus});
  mixseq::BpeLearnOptions learn_options;
  learn_options.symbols = symbols;
  const mixseq::BpeCodes codes = mixseq::learn_bpe(counts, learn_options);
  const double learn_seconds = seconds_since(learn_start);

  const int all_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const Throughput one = time_apply(codes, 1, corpus, output, repeats, lines, words);
  const Throughput all = time_apply(codes, all_threads, corpus, output, repeats, lines, words);
  std::filesystem::remove_all(temp_dir);

  std::printf(
      "{\"bench\": \"bpe_apply\", \"corpus\": \"%s\", \"lines\": %lld, \"words\": %lld, \"word_types\": %zu, "
      "\"merges\": %zu, \"learn_s\": %.3f, "
      "\"apply_1_thread\": {\"s\": %.3f, \"lines_per_s\": %.0f, \"words_per_s\": %.0f}, "
      "\"apply_threads\": %d, \"apply_all_threads\": {\"s\": %.3f, \"lines_per_s\": %.0f, \"words_per_s\": %.0f}}\n",
      corpus_name.c_str(), static_cast<long long>(lines), static_cast<long long>(words), counts.size(),
      codes.merges().size(), learn_seconds, one.seconds, one.lines_per_second, one.words_per_second, all_threads,
      all.seconds, all.lines_per_second, all.words_per_second);
  return 0;
}
