// Measures how fast training batches of speech features are made (data/speech_batch.h: speed
// perturbation, features, dither, SpecAugment), without a model: the part of a recognizer's update
// that speech.prefetch moves to a background thread and that the intra-op threads share.
// Prints one JSON line: {"bench":"speech_batch","batches":...,"ms_per_batch":...,"audio_s_per_s":...}.
//
//   speech_batch_bench --data DIR [--max-frames 8000] [--batches 40] [--threads N]
//                      [--sample-rate 8000] [--n-mels 64] [--speed 0.9,1.1] [--masks 2]
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <string>

#include "mixseq/data/speech_batch.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/util/threads.h"

int main(int argc, char** argv) {
  std::string dir;
  mixseq::SpeechInputConfig config;
  config.sample_rate = 8000;
  config.speed_perturbation = {0.9, 1.1};
  config.freq_masks = config.time_masks = 2;
  config.max_freq = 10;
  config.max_time = 15;
  int64_t max_frames = 8000, batches = 40;
  int threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--data") dir = value;
    else if (flag == "--max-frames") max_frames = std::stoll(value);
    else if (flag == "--batches") batches = std::stoll(value);
    else if (flag == "--threads") threads = std::stoi(value);
    else if (flag == "--sample-rate") config.sample_rate = std::stoll(value);
    else if (flag == "--n-mels") config.n_mels = std::stoll(value);
    else if (flag == "--masks") config.freq_masks = config.time_masks = std::stoll(value);
    else if (flag == "--speed") {
      const auto comma = value.find(',');
      config.speed_perturbation = comma == std::string::npos
                                      ? std::vector<double>{}
                                      : std::vector<double>{std::stod(value.substr(0, comma)), std::stod(value.substr(comma + 1))};
    } else {
      std::cerr << "unknown flag " << flag << '\n';
      return 2;
    }
  }
  if (dir.empty()) {
    std::cerr << "speech_batch_bench --data DIR (a folder `mixseq prepare --task speech` wrote)\n";
    return 2;
  }
  threads = mixseq::configure_threads(threads);
  config.check();
  const mixseq::SpeechData data(dir);
  const mixseq::SpeechSplit& train = data.split("train");
  mixseq::BatchingOptions batching;
  batching.max_tokens = max_frames;
  const auto plan = mixseq::plan_epoch_batches(mixseq::speech_frame_lengths(train, config), {}, batching, 1).batches;
  batches = std::min<int64_t>(batches, static_cast<int64_t>(plan.size()) - 2);
  double audio_seconds = 0, seconds = 0;
  int64_t utterances = 0;
  for (int64_t b = 0; b < batches + 2; ++b) {  // the first two warm up
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(b + 1));
    const auto start = std::chrono::steady_clock::now();
    const auto batch = mixseq::make_speech_batch(train, plan[static_cast<size_t>(b)], config, &generator);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (b < 2) continue;
    seconds += took;
    utterances += static_cast<int64_t>(plan[static_cast<size_t>(b)].size());
    for (const int64_t i : plan[static_cast<size_t>(b)])
      audio_seconds += static_cast<double>(train.samples(i)) / static_cast<double>(config.sample_rate);
  }
  std::cout << nlohmann::json{{"bench", "speech_batch"},
                              {"data", dir},
                              {"threads", threads},
                              {"batches", batches},
                              {"utterances", utterances},
                              {"ms_per_batch", 1000 * seconds / static_cast<double>(batches)},
                              {"audio_s_per_s", audio_seconds / seconds}}
                   .dump()
            << '\n';
}
