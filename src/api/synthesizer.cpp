#include "mixseq/api/synthesizer.h"

#include <mutex>

#include "api/process_setup.h"
#include "mixseq/audio/audio_file.h"
#include "mixseq/decode/text_to_speech.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// `mixseq synthesize`'s set-up (cli/synthesize_command.cpp): device and precision, then the checkpoint.
struct Synthesizer::Impl {
  Impl(const std::string& path, const SynthesizerOptions& options)
      : device((api::configure_process_threads(options.threads, "SynthesizerOptions::threads"),
                resolve_device(options.device, "device"))),
        precision(resolve_precision(options.precision, device)),
        trained((configure_precision(precision, device), load_trained_speech_synthesizer(path, device))),
        speaker(trained, device, precision) {}

  torch::Device device;
  Precision precision;
  TrainedSpeechSynthesizer trained;
  TextToSpeech speaker;
  std::mutex mutex;  // the generators are seeded per call: one call at a time
};

Synthesizer::Synthesizer(const std::string& checkpoint_path, const SynthesizerOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint_path, options)) {}

Synthesizer::~Synthesizer() = default;
Synthesizer::Synthesizer(Synthesizer&&) noexcept = default;
Synthesizer& Synthesizer::operator=(Synthesizer&&) noexcept = default;

std::vector<Speech> Synthesizer::synthesize_batch(const std::vector<std::string>& texts,
                                                  const SpeakOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Synthesizer was moved from");
  MIXSEQ_CHECK(options.batch_size >= 1 && options.max_steps >= 0 && options.griffin_lim_iterations >= 0,
               "SpeakOptions: batch_size (", options.batch_size, ") must be at least 1, max_steps (", options.max_steps,
               ") and griffin_lim_iterations (", options.griffin_lim_iterations, ") at least 0");
  MIXSEQ_CHECK(options.griffin_lim_momentum >= 0 && options.griffin_lim_momentum < 1,
               "SpeakOptions: griffin_lim_momentum (", options.griffin_lim_momentum, ") must be in [0, 1)");
  SynthesizeOptions synthesize;
  synthesize.max_utterances = options.batch_size;
  synthesize.max_steps = options.max_steps;
  synthesize.gate_threshold = options.gate_threshold;
  synthesize.griffin_lim.iterations = options.griffin_lim_iterations;
  synthesize.griffin_lim.momentum = options.griffin_lim_momentum;
  synthesize.seed = options.seed;
  std::vector<SynthesizedSpeech> spoken;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    spoken = impl_->speaker.synthesize(texts, synthesize);
  }
  std::vector<Speech> results;
  results.reserve(spoken.size());
  for (auto& s : spoken) results.push_back({std::move(s.samples), impl_->speaker.sample_rate(), s.frames, s.stopped});
  return results;
}

int64_t Synthesizer::sample_rate() const {
  MIXSEQ_CHECK(impl_, "this Synthesizer was moved from");
  return impl_->speaker.sample_rate();
}

std::string Synthesizer::audio_file(const Speech& speech, const std::string& format) {
  MIXSEQ_CHECK(format == "wav" || format == "flac", "audio_file: format must be \"wav\" or \"flac\", not \"", format,
               "\"");
  MIXSEQ_CHECK(speech.sample_rate > 0, "audio_file: the speech has no sample rate");
  return encode_audio(speech.samples, speech.sample_rate, format == "wav" ? AudioFileFormat::kWav : AudioFileFormat::kFlac);
}

}  // namespace mixseq
