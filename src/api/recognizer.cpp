#include "mixseq/api/recognizer.h"

#include <mutex>

#include "api/process_setup.h"
#include "mixseq/audio/audio_file.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/decode/speech_transcriber.h"
#include "mixseq/text/arpa_language_model.h"
#include "mixseq/util/error.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// `mixseq transcribe`'s set-up (cli/transcribe_command.cpp): device and precision, the word model
// and the rescoring model, then the checkpoint.
struct Recognizer::Impl {
  Impl(const std::string& path, const RecognizerOptions& options)
      : device((api::configure_process_threads(options.threads, "RecognizerOptions::threads"),
                resolve_device(options.device, "device"))),
        precision(resolve_precision(options.precision, device)),
        recognizer((configure_precision(precision, device), load_trained_speech_recognizer(path, device))),
        transcriber(recognizer, device, precision) {
    MIXSEQ_CHECK(options.max_frames >= 1, "RecognizerOptions::max_frames is ", options.max_frames,
                 "; it must be at least 1");
    MIXSEQ_CHECK(options.workers >= 0, "RecognizerOptions::workers is ", options.workers, "; it must be at least 0");
    base.max_frames = options.max_frames;
    base.workers = options.workers;
    if (!options.lm.empty())
      base.beam.language_model = std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::load(options.lm));
    if (!options.rescore_lm.empty())
      base.rescoring.language_model = SentenceLmScorer::load(options.rescore_lm, device, precision);
  }

  // The call's search on top of what was loaded, checked as the command checks its flags.
  TranscribeOptions transcribe(const TranscriptionOptions& call) const {
    TranscribeOptions options = base;
    options.beam.beam_size = call.beam_size;
    options.beam.alpha = call.lm_weight;
    options.beam.beta = call.word_bonus;
    options.beam.cutoff_top_n = call.cutoff_top_n;
    options.beam.cutoff_prob = call.cutoff_prob;
    options.rescoring.lm_weight = call.rescore_weight;
    options.rescoring.word_bonus = call.rescore_word_bonus;
    MIXSEQ_CHECK(call.beam_size >= 1 && call.nbest >= 0 && call.cutoff_top_n >= 0,
                 "TranscriptionOptions: beam_size (", call.beam_size, ") must be at least 1, nbest (", call.nbest,
                 ") and cutoff_top_n (", call.cutoff_top_n, ") at least 0");
    MIXSEQ_CHECK(call.cutoff_prob > 0 && call.cutoff_prob <= 1, "TranscriptionOptions::cutoff_prob (",
                 call.cutoff_prob, ") must be in (0, 1]");
    const bool rescoring = options.rescoring.language_model != nullptr;
    options.beam.nbest = call.nbest > 0 ? call.nbest : rescoring ? call.beam_size : 1;
    if (rescoring) {
      MIXSEQ_CHECK(call.beam_size > 1, "RecognizerOptions::rescore_lm re-ranks the beam search's n-best: give "
                   "TranscriptionOptions::beam_size above 1 (e.g. 16)");
      MIXSEQ_CHECK(options.beam.nbest > 1, "RecognizerOptions::rescore_lm with nbest 1 has nothing to re-rank; "
                   "give nbest 2 or more (at most beam_size), or 0 for the whole beam");
    }
    MIXSEQ_CHECK(options.beam.nbest <= call.beam_size, "TranscriptionOptions::nbest (", options.beam.nbest,
                 ") must be at most beam_size (", call.beam_size, ")");
    return options;
  }

  torch::Device device;
  Precision precision;
  TrainedSpeechRecognizer recognizer;
  SpeechTranscriber transcriber;
  TranscribeOptions base;  // max_frames, workers and the loaded models
  std::mutex mutex;        // transcribe() starts its own workers: one call at a time
};

Recognizer::Recognizer(const std::string& checkpoint_path, const RecognizerOptions& options)
    : impl_(std::make_unique<Impl>(checkpoint_path, options)) {}

Recognizer::~Recognizer() = default;
Recognizer::Recognizer(Recognizer&&) noexcept = default;
Recognizer& Recognizer::operator=(Recognizer&&) noexcept = default;

std::vector<Transcription> Recognizer::transcribe_files(const std::vector<std::string>& paths,
                                                        const TranscriptionOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Recognizer was moved from");
  const AudioReadOptions reading = impl_->recognizer.input.audio_read_options();
  std::vector<std::vector<float>> audio;
  audio.reserve(paths.size());
  for (const auto& path : paths) audio.push_back(read_audio(path, reading).samples);
  return transcribe_batch(audio, options);
}

std::vector<Transcription> Recognizer::transcribe_batch(const std::vector<std::vector<float>>& audio,
                                                        const TranscriptionOptions& options) const {
  MIXSEQ_CHECK(impl_, "this Recognizer was moved from");
  const auto transcribe = impl_->transcribe(options);
  check_ctc_beam_search_options(transcribe.beam, impl_->recognizer.symbols);
  std::vector<std::vector<float>> stored;  // 16-bit, as `mixseq transcribe` reads files
  stored.reserve(audio.size());
  for (const auto& samples : audio) stored.push_back(as_stored_samples(samples));
  std::vector<Transcript> transcripts;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    transcripts = impl_->transcriber.transcribe(stored, transcribe);
  }
  const double rate = static_cast<double>(impl_->recognizer.input.sample_rate);
  std::vector<Transcription> results(transcripts.size());
  for (size_t i = 0; i < transcripts.size(); ++i) {
    auto& transcript = transcripts[i];
    auto& result = results[i];
    result.text = std::move(transcript.text);
    for (auto& word : transcript.words) result.words.push_back({std::move(word.word), word.start, word.end});
    for (auto& h : transcript.nbest)
      result.nbest.push_back({std::move(h.text), h.score, h.search_score, h.ctc_log_prob, h.lm_log10_prob,
                              h.rescoring_lm_log_prob});
    result.seconds = static_cast<double>(stored[i].size()) / rate;
  }
  return results;
}

int64_t Recognizer::adapt_files(const std::vector<std::string>& paths) {
  MIXSEQ_CHECK(impl_, "this Recognizer was moved from");
  const AudioReadOptions reading = impl_->recognizer.input.audio_read_options();
  std::vector<std::vector<float>> audio;
  audio.reserve(paths.size());
  for (const auto& path : paths) audio.push_back(read_audio(path, reading).samples);
  return adapt_batch(audio);
}

int64_t Recognizer::adapt_batch(const std::vector<std::vector<float>>& audio) {
  MIXSEQ_CHECK(impl_, "this Recognizer was moved from");
  MIXSEQ_CHECK(!audio.empty(), "Recognizer: no audio to adapt the batch norms on");
  std::vector<std::vector<float>> stored;  // 16-bit, as `mixseq transcribe --adapt-norms` reads files
  stored.reserve(audio.size());
  for (const auto& samples : audio) stored.push_back(as_stored_samples(samples));
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return adapt_speech_recognizer(impl_->recognizer, static_cast<int64_t>(stored.size()),
                                 [&](int64_t i) { return stored[static_cast<size_t>(i)]; }, impl_->device);
}

int64_t Recognizer::sample_rate() const {
  MIXSEQ_CHECK(impl_, "this Recognizer was moved from");
  return impl_->recognizer.input.sample_rate;
}

}  // namespace mixseq
