// Measures `mixseq prepare` throughput: raw parallel text in, token datasets out.
// Without --train it writes the built-in number task (--pairs pairs) and prepares that.
// Prints one JSON line: {"bench":"prepare","pairs":...,"seconds":...,"pairs_per_s":...}.
//
//   prepare_bench [--train PREFIX --source-lang en --target-lang de] [--tokenizer bpe:codes]
//                 [--pairs 200000] [--threads N] [--work-dir DIR]
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "mixseq/data/prepare.h"
#include "mixseq/data/synthetic_numbers.h"
#include "mixseq/util/threads.h"

int main(int argc, char** argv) {
  mixseq::PrepareOptions options;
  options.tokenizer = "none";
  int64_t pairs = 200000;
  int threads = 0;
  std::string work_dir = (std::filesystem::temp_directory_path() / "mixseq-prepare-bench").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--train") options.train_prefix = value;
    else if (flag == "--source-lang") options.source_lang = value;
    else if (flag == "--target-lang") options.target_lang = value;
    else if (flag == "--tokenizer") options.tokenizer = value;
    else if (flag == "--pairs") pairs = std::stoll(value);
    else if (flag == "--threads") threads = std::stoi(value);
    else if (flag == "--work-dir") work_dir = value;
    else {
      std::cerr << "unknown flag " << flag << '\n';
      return 2;
    }
  }
  threads = mixseq::configure_threads(threads);
  std::filesystem::create_directories(work_dir);
  if (options.train_prefix.empty()) {
    mixseq::NumberTaskOptions task;
    task.train_size = pairs, task.valid_size = 0, task.test_size = 0;
    mixseq::write_number_task(mixseq::make_number_task(task), work_dir + "/raw");
    options.train_prefix = work_dir + "/raw/train";
  }
  options.output_dir = work_dir + "/data";
  const auto start = std::chrono::steady_clock::now();
  const auto report = mixseq::prepare_corpus(options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& train = report.splits.at(0);
  std::cout << nlohmann::json{{"bench", "prepare"},
                              {"corpus", options.train_prefix},
                              {"tokenizer", options.tokenizer},
                              {"threads", threads},
                              {"pairs", train.lines},
                              {"tokens", train.source_tokens + train.target_tokens},
                              {"seconds", seconds},
                              {"pairs_per_s", train.lines / seconds}}
                   .dump()
            << std::endl;
}
