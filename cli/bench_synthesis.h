// mixseq bench train / synthesize for speech synthesizers (-c CONFIG): random symbol ids and random
// mel frames at the peer harness's shapes (../shared/peers/tts_bench.py), the model, optimizer and
// clipping of the training config (configs/bench/tacotron2.yaml: Adam lr 1e-3, weight decay 1e-6,
// clip 1.0, as their platform/*train.sh). Prints one JSON line: train gives params and
// mel_frames_per_s (their train_items_per_sec), synthesize decoder_steps_per_s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config_arguments.h"

namespace mixseq::cli {

struct SynthesisBenchArguments {
  std::string config;                     // a training config whose model is a speech synthesizer
  std::vector<ConfigOverride> overrides;  // --model.<key> etc. after the flags
  int64_t batch = 8;                      // utterances per batch (synthesize: the harness's --infer-batch, 1)
  int64_t text_len = 60;                  // symbols per utterance
  int64_t mel_len = 150;                  // train: target frames per utterance; synthesize: decoder steps
  int64_t steps = 5;                      // train: timed updates; synthesize: timed calls
  int64_t warmup = 1;                     // untimed first
  std::string precision = "fp32";
  std::string device = "auto";
  int64_t seed = 1;
  int64_t profile_top = 0;                // print the N operators with the most self time; 0 = no profiling
};

int bench_synthesis_train(const SynthesisBenchArguments& arguments, int threads);
int bench_synthesis_synthesize(const SynthesisBenchArguments& arguments, int threads);

}  // namespace mixseq::cli
