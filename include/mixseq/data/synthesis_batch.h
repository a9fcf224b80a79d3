// Speech-synthesis batches: what a Tacotron 2 (models/tacotron2.h) trains on, made from a speech
// dataset (data/speech_data.h, `mixseq prepare --task speech`): each utterance's transcript as the
// synthesis symbols (text/synthesis_symbols.h) and its audio as target frames.
//
// The frames (synthesis.frames: mel) are the natural log of mel-filterbank magnitudes, floored, as
// DeepLearningExamples' Tacotron 2 computes its targets (layers.TacotronSTFT.mel_spectrogram:
// dynamic_range_compression, log(clamp(x, min=1e-5)), no normalisation), here made from
// speech_features' unnormalised log-mel power (audio/speech_features.h: Slaney filterbank, symmetric
// Hann window, no pre-emphasis) as half its log: ln sqrt(mel power) rather than ln(mel of |X|), so
// that the frames go back to audio through the same filterbank (synthesis_frames_to_audio,
// audio/griffin_lim.h). With synthesis.frames: magnitude they are the log of the linear STFT
// magnitudes, n_fft / 2 + 1 bins (513 at the default FFT), as OpenSeq2Seq's Tacotron 2 can predict
// them ("magnitude" features): made with Griffin-Lim's own STFT (centred, reflect padding, periodic
// Hann window, stft_magnitude), so that they go back to audio through Griffin-Lim alone, with no
// filterbank to invert. The defaults are the reference's STFT at 22.05 kHz: 1024-sample window and
// FFT, hop 256, 80 mel bins.
//
// Gate (stop-token) targets are 1 from each utterance's last frame on, as their TextMelCollate pads
// them; texts and frames are zero-padded. Dimension alphabet: B utterances, S symbols, T frames,
// F mel bins.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/audio/griffin_lim.h"
#include "mixseq/audio/speech_features.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/util/config.h"

namespace mixseq {

// The synthesis task's input settings (the `synthesis` section of a training config); a trained
// model's checkpoint keeps them, so synthesis turns frames back into audio as they were made.
struct SynthesisInputConfig {
  int64_t sample_rate = 22050;      // Hz of the audio (the prepared dataset's rate; synthesis writes it)
  std::string frames = "mel";       // mel: ln mel magnitudes, n_mels bins; magnitude: ln linear STFT magnitudes,
                                    // n_fft / 2 + 1 bins (OpenSeq2Seq's "magnitude")
  int64_t n_mels = 80;              // mel bins (frames: mel)
  int64_t n_fft = 1024;             // FFT size (>= the window)
  double window_ms = 46.44;         // analysis window: 1024 samples at 22.05 kHz
  double hop_ms = 11.61;            // frame shift: 256 samples at 22.05 kHz
  double magnitude_floor = 1e-5;    // frames are ln(max(magnitude, this)): the reference's clamp
  int64_t max_frames = 6000;        // training batch: utterances x longest utterance's frames
  int64_t max_utterances = 0;       // training batch: utterances; 0 = no limit
  int64_t valid_max_frames = 12000; // validation batch: utterances x longest utterance's frames
  double guided_attention_weight = 0.0;  // weight of the guided-attention loss (criteria/synthesis_loss.h); 0 = off
  double guided_attention_sigma = 0.2;   // its width g
  bool mask_padding = true;         // the frames of the reference's --mask-padding (off by default there): predicted
                                    // frames past each utterance's end are set to the padding's (0) before the loss,
                                    // so padding adds nothing to the frame loss; false: the model must learn to
                                    // predict them, which dominates the loss of batches of unequal lengths. The stop
                                    // token still learns from the padding (1: past the end, stop), which their flag
                                    // masks too
  bool bias_from_data = true;       // start the model's frame bias at the training frames' mean per bin and its
                                    // stop-token bias at the log-odds of a frame being an utterance's last (the
                                    // reference starts both near 0: with frames around -8 and one stop in ~100
                                    // frames, learning them alone takes hundreds of updates); false: as the reference

  // F: bins of a frame (the model's n_mel_channels): n_mels, or n_fft / 2 + 1 for magnitude frames.
  int64_t frame_bins() const { return frames == "magnitude" ? n_fft / 2 + 1 : n_mels; }
  // "80 mel bins" or "513 magnitude bins", for messages and logs.
  std::string describe_frames() const;
  // speech_features' settings for mel frames: log_mel, unnormalised, no dither, no pre-emphasis
  // (their window and hop make magnitude frames too).
  SpeechFeatureOptions feature_options() const;
  // Griffin-Lim's STFT at these settings: magnitude frames are made and inverted with it.
  GriffinLimOptions stft_options() const;
  void check() const;  // throws naming the synthesis.* key of a bad value

  void visit(ConfigVisitor& v) {
    v.field("sample_rate", sample_rate, "Hz of the audio; the prepared dataset must have this rate");
    v.field("frames", frames, "mel (n_mels bins) or magnitude (linear STFT, n_fft / 2 + 1 bins) = model n_mel_channels");
    v.field("n_mels", n_mels, "mel bins of a frame (frames: mel)");
    v.field("n_fft", n_fft, "FFT size (>= the window)");
    v.field("window_ms", window_ms, "analysis window in milliseconds");
    v.field("hop_ms", hop_ms, "frame shift in milliseconds");
    v.field("magnitude_floor", magnitude_floor, "frames are ln(max(mel magnitude, this))");
    v.field("max_frames", max_frames, "training batch budget: utterances x longest frames");
    v.field("max_utterances", max_utterances, "training batch: utterances at most; 0 = no limit");
    v.field("valid_max_frames", valid_max_frames, "validation batch budget: utterances x longest frames");
    v.field("guided_attention_weight", guided_attention_weight, "weight of the guided-attention loss; 0 = off");
    v.field("guided_attention_sigma", guided_attention_sigma, "width g of the guided-attention loss");
    v.field("mask_padding", mask_padding, "set predicted frames past each utterance's end to the padding's before the loss");
    v.field("bias_from_data", bias_from_data, "start the frame and stop-token biases at the training data's mean and stop rate");
  }
};

// [T, F] frames of mono samples at config.sample_rate. Throws mixseq::Error for audio too short for
// the STFT.
torch::Tensor synthesis_frames(const std::vector<float>& samples, const SynthesisInputConfig& config);

// Audio (samples at config.sample_rate) from [T, F] frames: mel frames' magnitudes squared back to
// mel power, then log_mel_to_audio (the filterbank's pseudo-inverse and Griffin-Lim with
// `griffin_lim`'s iterations, momentum and initial phase); magnitude frames straight to Griffin-Lim.
std::vector<float> synthesis_frames_to_audio(const torch::Tensor& frames, const SynthesisInputConfig& config,
                                             const GriffinLimOptions& griffin_lim = {},
                                             c10::optional<at::Generator> generator = c10::nullopt);

struct SynthesisBatch {
  torch::Tensor text;           // [B, S] int64 symbol ids, 0 (the pad symbol) past each length
  torch::Tensor text_lengths;   // [B] int64
  torch::Tensor frames;         // [B, F, T] fp32 targets, zero past each length
  torch::Tensor gate;           // [B, T] fp32 stop-token targets: 1 from each utterance's last frame on
  torch::Tensor frame_lengths;  // [B] int64
  int64_t total_frames = 0;     // sum of frame_lengths
};

// Pads per-utterance symbol ids and [T, F] frames into one batch (equal counts, each at least one
// symbol and one frame; throws mixseq::Error otherwise).
SynthesisBatch make_synthesis_batch(const std::vector<const std::vector<int64_t>*>& texts,
                                    const std::vector<const torch::Tensor*>& frames);

// One split of a speech dataset made ready for synthesis training: every transcript as symbol ids
// and every utterance's frames, computed once and kept in memory (4 bytes x F x frames: 80 bins at
// 86 frames a second are 99 MB an hour of audio). Immutable once built; read from any thread.
class SynthesisSplit {
 public:
  // Throws mixseq::Error naming "<dir>/<name>.tsv:<line>" for a transcript with a character outside
  // the synthesis symbols, or an utterance too short for the STFT.
  SynthesisSplit(const SpeechSplit& split, const std::string& where, const SynthesisInputConfig& config);

  int64_t size() const { return static_cast<int64_t>(text_.size()); }
  const std::vector<int64_t>& text(int64_t i) const { return text_.at(static_cast<size_t>(i)); }
  const torch::Tensor& frames(int64_t i) const { return frames_.at(static_cast<size_t>(i)); }
  // Frames of every utterance, for batching by frames.
  const std::vector<int64_t>& frame_lengths() const { return lengths_; }
  int64_t bytes() const { return bytes_; }
  // [F] the mean of every frame of the split, per bin.
  torch::Tensor frame_mean() const;
  // The batch of utterances `indices`.
  SynthesisBatch batch(const std::vector<int64_t>& indices) const;

 private:
  std::vector<std::vector<int64_t>> text_;
  std::vector<torch::Tensor> frames_;  // [T, F] each
  std::vector<int64_t> lengths_;
  int64_t bytes_ = 0;
};

}  // namespace mixseq
