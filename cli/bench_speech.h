// mixseq bench train / transcribe for speech recognizers (-c CONFIG): random feature frames and
// random transcripts at the peer harness's shapes (../shared/peers/asr_bench.py), the model and
// optimizer of the training config. Prints one JSON line with params and frames_per_s (input
// feature frames per second) and audio_sec_per_s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config_arguments.h"

namespace mixseq::cli {

struct SpeechBenchArguments {
  std::string config;           // a training config whose model is a speech recognizer
  std::vector<ConfigOverride> overrides;  // --model.<key> etc. after the flags
  int64_t batch = 8;            // utterances per batch
  int64_t frames = 400;         // feature frames per utterance
  double chars_per_second = 15; // transcript length per audio second (the harness's --chars-per-sec)
  int64_t steps = 5;            // train: timed updates; transcribe: timed batches
  int64_t warmup = 1;           // untimed first
  std::string precision = "fp32";
  std::string device = "auto";
  int64_t seed = 1;
  int64_t profile_top = 0;      // print the N operators with the most self time; 0 = no profiling
};

int bench_speech_train(const SpeechBenchArguments& arguments, int threads);
int bench_speech_transcribe(const SpeechBenchArguments& arguments, int threads);

}  // namespace mixseq::cli
