// mixseq::Synthesizer: a trained speech synthesizer's checkpoint (Tacotron 2, `mixseq train` on a
// speech dataset: docs/synthesis.md), ready to speak text.
//
//   #include <mixseq/mixseq.h>
//   mixseq::Synthesizer tts("runs/tts/checkpoint_best.pt");
//   const auto speech = tts.synthesize_batch({"three one four", "a dog runs"});
//   std::ofstream("a.wav", std::ios::binary) << mixseq::Synthesizer::audio_file(speech[0], "wav");
//
// Contract. A Synthesizer owns the weights on its device and the frame settings stored in the
// checkpoint. synthesize_batch() speaks as `mixseq synthesize` does with the same options: the texts
// read as the synthesis symbols (letters, space, -!'(),.:;? and {ARPAbet}), run through the model
// together longest first until each one's stop token, Griffin-Lim through the stored filterbank. The
// prenet's dropout stays on at inference, as in Tacotron 2: a call seeds it with options.seed, so
// the same texts in the same call give the same audio, and a text alone gives the command's audio
// for it (`mixseq synthesize "text"` writes the bytes audio_file() makes).
//
// Threads. One Synthesizer may be shared: calls from several threads are served one at a time (each
// already runs on all the CPU threads). For calls that really run side by side, create one per thread.
//
// Errors. Every failure (an unreadable or corrupt checkpoint, a checkpoint of another task, an empty
// text, a character outside the symbols, a bad option) throws std::runtime_error (mixseq::Error)
// whose message says what is wrong ("text 2: column 6: '1' is not a symbol ..."). A Synthesizer
// that threw stays usable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/api/model_options.h"

namespace mixseq {

using SynthesizerOptions = ModelOptions;  // device, precision, threads (api/model_options.h)

// `mixseq synthesize`'s settings and defaults.
struct SpeakOptions {
  int64_t batch_size = 8;             // texts run through the model together (--batch-size)
  int64_t max_steps = 0;              // frames per text at most; 0 = the model's max_decoder_steps
  double gate_threshold = 0;          // a text ends at the first frame with stop probability above it; 0 = the model's
  int64_t griffin_lim_iterations = 60;  // --griffin-lim-iters
  double griffin_lim_momentum = 0.99;   // --griffin-lim-momentum, in [0, 1)
  uint64_t seed = 1;                  // the prenet's dropout and Griffin-Lim's initial phase (--seed)
};

struct Speech {
  std::vector<float> samples;  // mono audio in [-1, 1] at sample_rate
  int64_t sample_rate = 0;     // Hz
  int64_t frames = 0;          // decoder steps kept (those before the stop token)
  bool stopped = false;        // the stop token ended it (false: it ran to max_steps)
};

class Synthesizer {
 public:
  // Opens a speech synthesizer's checkpoint written by `mixseq train`.
  explicit Synthesizer(const std::string& checkpoint_path, const SynthesizerOptions& options = {});
  ~Synthesizer();
  Synthesizer(Synthesizer&&) noexcept;
  Synthesizer& operator=(Synthesizer&&) noexcept;

  // One Speech per text, in order. Throws for a bad text before anything is spoken.
  std::vector<Speech> synthesize_batch(const std::vector<std::string>& texts, const SpeakOptions& options = {}) const;

  int64_t sample_rate() const;

  // The bytes of a 16-bit mono audio file of `speech` in `format` ("wav" or "flac"), as `mixseq
  // synthesize` writes its files.
  static std::string audio_file(const Speech& speech, const std::string& format = "wav");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
