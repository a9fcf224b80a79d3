// Speech synthesizers: models that turn symbol ids (characters) into spectrogram frames and a stop
// token, trained teacher-forced on (text, frames) pairs with the synthesis losses
// (criteria/synthesis_loss.h), and run free at inference; audio/griffin_lim.h turns their frames into
// audio. The "speech_synthesizer" family of models/registry.h.
//
//  - tacotron2.h: Tacotron 2 (Shen et al. 2018) as NVIDIA DeepLearningExamples builds it.
//
// Dimension alphabet: B utterances, S text positions, T frames, F frame bins (80 mel bins).
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>

namespace mixseq {

// What the teacher-forced forward pass predicts.
struct SynthesisOutput {
  torch::Tensor frames;          // [B, F, T] the decoder's frames
  torch::Tensor frames_postnet;  // [B, F, T] frames + the postnet's residual (the final prediction)
  torch::Tensor gate_logits;     // [B, T] stop-token logits (sigmoid > threshold: the utterance ends)
  torch::Tensor alignments;      // [B, T, S] attention weights of each decoder step
};

struct SynthesisOptions {
  int64_t max_steps = 2000;      // decoder steps at most (the reference's max_decoder_steps)
  double gate_threshold = 0.5;   // an utterance ends at the first step with sigmoid(gate) > this
  bool early_stop = true;        // stop when every utterance has ended; false: always max_steps (benchmarks)
};

// What free-running inference produces.
struct Synthesis {
  torch::Tensor frames;      // [B, F, T] frames after the postnet; T = steps run, shorter utterances padded
                             // with what the decoder went on producing
  torch::Tensor lengths;     // [B] int64: frames of each utterance before its stop token (max_steps when none)
  torch::Tensor alignments;  // [B, T, S]
};

class SpeechSynthesizerImpl : public torch::nn::Module {
 public:
  // text [B, S] int64 symbol ids, text_lengths [B] int64 (>= 1), frames [B, F, T] the targets fed
  // back teacher-forced (frame t - 1 is the input of step t; step 0 reads zeros).
  virtual SynthesisOutput forward(const torch::Tensor& text, const torch::Tensor& text_lengths,
                                  const torch::Tensor& frames) = 0;
  // Free-running: each step reads the previous step's frame. Runs under whatever grad mode the
  // caller set (use torch::NoGradGuard).
  virtual Synthesis infer(const torch::Tensor& text, const torch::Tensor& text_lengths,
                          const SynthesisOptions& options) = 0;
  // F: the bins of each frame.
  virtual int64_t frame_bins() const = 0;
  // The number of input symbols (ids 0 .. symbols() - 1).
  virtual int64_t symbols() const = 0;
  // Sets the biases of the frame projection to `frame_mean` [F] and of the stop-token logit to
  // `stop_logit`, so that an untrained model already predicts the data's average frame and stop rate
  // (the speech-synthesis task's synthesis.bias_from_data).
  virtual void initialize_output_bias(const torch::Tensor& frame_mean, double stop_logit) = 0;
};

using SpeechSynthesizer = std::shared_ptr<SpeechSynthesizerImpl>;

}  // namespace mixseq
