// The losses of a speech synthesizer (models/speech_synthesizer.h):
//  - Tacotron 2's (DeepLearningExamples' tacotron2/loss_function.py, Tacotron2Loss): the mean
//    squared error of the frames before and after the postnet against the targets, plus the
//    stop-token ("gate") binary cross-entropy with logits; every mean over all elements of the
//    padded batch, padding included, as theirs (mask_padding off by default there);
//  - an optional guided-attention loss (Tachibana et al. 2017, "Efficiently trainable text-to-speech
//    system based on deep convolutional networks with guided attention", §4.1): the mean of
//    A[t, s] W[t, s] over each utterance's valid steps and text positions, with
//    W[t, s] = 1 - exp(-(s / S_b - t / T_b)^2 / (2 g^2)), which penalises attention off the
//    diagonal, so that small data aligns early. Weight 0 disables it (nothing is computed).
// Dimension alphabet: B utterances, F frame bins, T frames, S text positions.
#pragma once

#include <torch/types.h>

namespace mixseq {

struct SynthesisLossOptions {
  double guided_attention_weight = 0.0;  // lambda of the guided-attention term; 0 disables
  double guided_attention_sigma = 0.2;   // g of W[t, s] (Tachibana et al. use 0.2)
};

struct SynthesisLoss {
  torch::Tensor total;             // mel + gate + guided_attention_weight * guided: what backward() reads
  torch::Tensor mel;               // MSE before + MSE after the postnet
  torch::Tensor gate;              // BCE with logits of the stop token
  torch::Tensor guided_attention;  // the unweighted guided-attention loss (0 when disabled)
};

// frames, frames_postnet, targets: [B, F, T]; gate_logits, gate_targets: [B, T] (1 from an
// utterance's last frame on, as their TextMelCollate pads it). The guided-attention term needs
// alignments [B, T, S] and the lengths [B] of texts and frames; it may be left undefined when the
// term is disabled.
SynthesisLoss synthesis_loss(const torch::Tensor& frames, const torch::Tensor& frames_postnet,
                             const torch::Tensor& gate_logits, const torch::Tensor& targets,
                             const torch::Tensor& gate_targets, const SynthesisLossOptions& options = {},
                             const torch::Tensor& alignments = {}, const torch::Tensor& text_lengths = {},
                             const torch::Tensor& frame_lengths = {});

// W [B, T, S] of the guided-attention loss: 1 - exp(-(s / S_b - t / T_b)^2 / (2 g^2)) inside each
// utterance's lengths, 0 outside (so padding adds nothing).
torch::Tensor guided_attention_weights(const torch::Tensor& text_lengths, const torch::Tensor& frame_lengths,
                                       int64_t max_frames, int64_t max_text, double sigma);

// How well the attention of a batch follows its text:
//  - diagonal, per utterance: the correlation (Pearson's r) of the decoder step t with the position
//    the step attends to, sum_s s A[t, s] / sum_s A[t, s] over the text: 1 when the attention moves
//    steadily forward through the text (pauses and uneven speed lower it only a little), 0 when it
//    stays put or is spread evenly, negative when it runs backwards; 0 for an utterance of one
//    step. Summed over the batch's utterances;
//  - focus, per decoder step: its largest weight: 1 for attention on one symbol, 1 / S when spread
//    evenly. Summed over the valid steps of every utterance.
// Sums add over batches and ranks; divide by utterances and steps for the means. alignments
// [B, T, S] (padding steps and symbols are ignored), lengths [B].
struct AlignmentFigures {
  double diagonal = 0;     // summed over utterances
  int64_t utterances = 0;
  double focus = 0;        // summed over steps
  int64_t steps = 0;       // valid decoder steps summed over
};
AlignmentFigures alignment_figures(const torch::Tensor& alignments, const torch::Tensor& text_lengths,
                                   const torch::Tensor& frame_lengths);

}  // namespace mixseq
