// TextToSpeech: text in, audio out, with a trained speech synthesizer
// (models/trained_model.h, load_trained_speech_synthesizer): each text read as synthesis symbols
// (text/synthesis_symbols.h), the model run free in evaluation mode until its stop token
// (models/speech_synthesizer.h, infer), its frames turned into audio with Griffin-Lim through the
// frame settings it was trained with (data/synthesis_batch.h, synthesis_frames_to_audio).
//
// Texts are batched longest-first within a call (up to SynthesizeOptions::max_utterances); results
// come back in input order. The prenet's dropout stays on at inference (as in Tacotron 2), so the
// audio is random: each call seeds the generators with options.seed, and the same texts in the same
// call give the same audio. Make one call at a time.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/audio/griffin_lim.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct SynthesizeOptions {
  int64_t max_utterances = 8;     // texts run through the model together
  int64_t max_steps = 0;          // decoder steps (frames) at most per text; 0 = the model's max_decoder_steps
  double gate_threshold = 0;      // a text ends at the first step with sigmoid(gate) > this; 0 = the model's
  GriffinLimOptions griffin_lim = default_griffin_lim();  // its iterations, momentum and random_init are used
  uint64_t seed = 1;              // prenet dropout and Griffin-Lim's initial phase

  // DeepLearningExamples' inference default for Griffin-Lim: 60 iterations; fast Griffin-Lim's 0.99 momentum.
  static GriffinLimOptions default_griffin_lim() {
    GriffinLimOptions options;
    options.iterations = 60;
    options.momentum = 0.99;
    return options;
  }
};

struct SynthesizedSpeech {
  std::vector<float> samples;   // mono audio in [-1, 1] (clipped), at the model's sample rate
  int64_t frames = 0;           // decoder steps kept (those before the stop token)
  bool stopped = false;         // the stop token ended it (false: it ran to max_steps)
  torch::Tensor alignment;      // [frames, symbols] fp32 attention weights of the kept steps
};

class TextToSpeech {
 public:
  // `synthesizer` must outlive this object.
  TextToSpeech(TrainedSpeechSynthesizer& synthesizer, const torch::Device& device, Precision precision);

  // One result per text. `names` (empty, or one per text) name the texts in error messages, e.g.
  // "texts.txt:3"; without them "text 3". Throws mixseq::Error for an empty text or a character
  // outside the symbols, naming the text and the column, before anything is synthesized.
  std::vector<SynthesizedSpeech> synthesize(const std::vector<std::string>& texts, const SynthesizeOptions& options = {},
                                            const std::vector<std::string>& names = {}) const;

  int64_t sample_rate() const { return synthesizer_.input.sample_rate; }

 private:
  TrainedSpeechSynthesizer& synthesizer_;
  torch::Device device_;
  Precision precision_;
};

}  // namespace mixseq
