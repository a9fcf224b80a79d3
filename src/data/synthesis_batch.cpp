#include "mixseq/data/synthesis_batch.h"

#include <algorithm>
#include <cmath>

#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/error.h"
#include "stft_settings.h"

namespace mixseq {

SpeechFeatureOptions SynthesisInputConfig::feature_options() const {
  SpeechFeatureOptions options;
  options.kind = SpeechFeatureKind::kLogMel;
  options.sample_rate = sample_rate;
  options.window_ms = window_ms;
  options.hop_ms = hop_ms;
  options.n_fft = n_fft;
  options.n_mels = n_mels;
  options.preemphasis = 0.0;
  options.dither = 0.0;
  options.normalize = false;
  return options;
}

std::string SynthesisInputConfig::describe_frames() const {
  return str_cat(frame_bins(), frames == "magnitude" ? " magnitude bins" : " mel bins");
}

GriffinLimOptions SynthesisInputConfig::stft_options() const {
  const auto features = feature_options();
  GriffinLimOptions options;
  options.n_fft = n_fft;
  options.hop_length = features.hop_samples();
  options.win_length = features.window_samples();
  options.power = 1.0;
  return options;
}

void SynthesisInputConfig::check() const {
  MIXSEQ_CHECK(frames == "mel" || frames == "magnitude", "synthesis.frames is '", frames,
               "'; choose mel (mel filterbank magnitudes) or magnitude (linear STFT magnitudes, n_fft / 2 + 1 bins)");
  check_stft_settings("synthesis", sample_rate, n_mels, n_fft, window_ms, hop_ms);
  MIXSEQ_CHECK(feature_options().window_samples() <= n_fft, "synthesis.window_ms (", window_ms, ": ",
               feature_options().window_samples(), " samples at ", sample_rate,
               " Hz) must fit in synthesis.n_fft (", n_fft, ")");
  MIXSEQ_CHECK(magnitude_floor > 0, "synthesis.magnitude_floor (", magnitude_floor, ") must be positive");
  MIXSEQ_CHECK(max_frames >= 1 && valid_max_frames >= 1 && max_utterances >= 0, "synthesis.max_frames (", max_frames,
               ") and synthesis.valid_max_frames (", valid_max_frames,
               ") must be positive, synthesis.max_utterances (", max_utterances, ") >= 0");
  MIXSEQ_CHECK(guided_attention_weight >= 0 && guided_attention_sigma > 0, "synthesis.guided_attention_weight (",
               guided_attention_weight, ") must be >= 0 and synthesis.guided_attention_sigma (", guided_attention_sigma,
               ") positive");
}

torch::Tensor synthesis_frames(const std::vector<float>& samples, const SynthesisInputConfig& config) {
  if (config.frames == "magnitude") {
    const auto options = config.stft_options();
    const auto length = static_cast<int64_t>(samples.size());
    MIXSEQ_CHECK(length > options.n_fft / 2, "the audio has ", length, " samples, too few for the STFT (more than ",
                 options.n_fft / 2, " at synthesis.n_fft ", options.n_fft, ")");
    const auto waveform = torch::from_blob(const_cast<float*>(samples.data()), {length}, torch::kFloat);
    return torch::log(stft_magnitude(waveform, options).t().clamp_min(config.magnitude_floor)).contiguous();  // [T, F]
  }
  // speech_features: ln(mel power + 1e-20); half of it is ln sqrt(mel power).
  const auto log_power = speech_features(samples, config.feature_options());  // [T, F]
  return (0.5 * log_power).clamp_min(std::log(config.magnitude_floor)).contiguous();
}

std::vector<float> synthesis_frames_to_audio(const torch::Tensor& frames, const SynthesisInputConfig& config,
                                             const GriffinLimOptions& griffin_lim,
                                             c10::optional<at::Generator> generator) {
  MIXSEQ_CHECK(frames.dim() == 2 && frames.size(1) == config.frame_bins(), "synthesis frames must be [T, ",
               config.describe_frames(), "], not ", frames.sizes());
  if (config.frames == "magnitude") {
    GriffinLimOptions options = config.stft_options();
    options.iterations = griffin_lim.iterations;
    options.momentum = griffin_lim.momentum;
    options.random_init = griffin_lim.random_init;
    const auto audio = mixseq::griffin_lim(torch::exp(frames.to(torch::kFloat)).t().contiguous(), options, 0,
                                           std::move(generator)).contiguous();
    return std::vector<float>(audio.data_ptr<float>(), audio.data_ptr<float>() + audio.numel());
  }
  return log_mel_to_audio(2.0 * frames.to(torch::kFloat), config.feature_options(), griffin_lim, 0,
                          std::move(generator));
}

SynthesisBatch make_synthesis_batch(const std::vector<const std::vector<int64_t>*>& texts,
                                    const std::vector<const torch::Tensor*>& frames) {
  MIXSEQ_CHECK(!texts.empty() && texts.size() == frames.size(), "a synthesis batch needs as many texts (",
               texts.size(), ") as frame sequences (", frames.size(), "), at least one");
  const auto B = static_cast<int64_t>(texts.size());
  const int64_t F = frames[0]->size(1);
  int64_t longest_text = 0, longest_frames = 0;
  for (size_t b = 0; b < texts.size(); ++b) {
    MIXSEQ_CHECK(!texts[b]->empty() && frames[b]->dim() == 2 && frames[b]->size(0) >= 1 && frames[b]->size(1) == F,
                 "utterance ", b, " of a synthesis batch has ", texts[b]->size(), " symbols and frames ",
                 frames[b]->sizes(), " (needed: >= 1 symbol, [T >= 1, ", F, "])");
    longest_text = std::max(longest_text, static_cast<int64_t>(texts[b]->size()));
    longest_frames = std::max(longest_frames, frames[b]->size(0));
  }
  SynthesisBatch batch;
  batch.text = torch::zeros({B, longest_text}, torch::kLong);
  batch.frames = torch::zeros({B, F, longest_frames});
  batch.gate = torch::zeros({B, longest_frames});
  std::vector<int64_t> text_lengths, frame_lengths;
  auto text = batch.text.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const auto& ids = *texts[static_cast<size_t>(b)];
    for (size_t s = 0; s < ids.size(); ++s) text[b][static_cast<int64_t>(s)] = ids[s];
    const torch::Tensor& f = *frames[static_cast<size_t>(b)];  // [T, F]
    const int64_t T = f.size(0);
    batch.frames[b].narrow(1, 0, T).copy_(f.t());
    batch.gate[b].narrow(0, T - 1, longest_frames - T + 1).fill_(1.0);
    text_lengths.push_back(static_cast<int64_t>(ids.size()));
    frame_lengths.push_back(T);
    batch.total_frames += T;
  }
  batch.text_lengths = torch::tensor(text_lengths, torch::kLong);
  batch.frame_lengths = torch::tensor(frame_lengths, torch::kLong);
  return batch;
}

SynthesisSplit::SynthesisSplit(const SpeechSplit& split, const std::string& where,
                               const SynthesisInputConfig& config) {
  text_.reserve(static_cast<size_t>(split.size()));
  frames_.reserve(static_cast<size_t>(split.size()));
  for (int64_t i = 0; i < split.size(); ++i) {
    const std::string line = str_cat(where, ":", i + 1);
    text_.push_back(synthesis_symbol_ids(split.transcript(i), line));
    try {
      frames_.push_back(synthesis_frames(split.audio(i), config));
    } catch (const Error& e) {
      throw Error(str_cat(line, " (", split.source(i), "): ", e.what()));
    }
    lengths_.push_back(frames_.back().size(0));
    bytes_ += frames_.back().numel() * static_cast<int64_t>(sizeof(float));
  }
}

torch::Tensor SynthesisSplit::frame_mean() const {
  MIXSEQ_CHECK(!frames_.empty(), "the frame mean of an empty split");
  auto sum = torch::zeros({frames_[0].size(1)}, torch::kDouble);
  int64_t count = 0;
  for (const auto& f : frames_) {
    sum += f.sum(0, false, torch::kDouble);
    count += f.size(0);
  }
  return (sum / static_cast<double>(count)).to(torch::kFloat);
}

SynthesisBatch SynthesisSplit::batch(const std::vector<int64_t>& indices) const {
  std::vector<const std::vector<int64_t>*> texts;
  std::vector<const torch::Tensor*> frames;
  for (const int64_t i : indices) {
    texts.push_back(&text(i));
    frames.push_back(&this->frames(i));
  }
  return make_synthesis_batch(texts, frames);
}

}  // namespace mixseq
