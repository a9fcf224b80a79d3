// Speech recognizers: acoustic models that turn feature frames into per-frame distributions over
// characters (or SentencePiece units) for the CTC loss (criteria/ctc_loss.h) and CTC decoding
// (decode/ctc_decoding.h); the "speech_recognizer" family of models/registry.h.
//
//  - conv_ctc.h: Wave2Letter+ (OpenSeq2Seq, Collobert et al. 2016 with batch norm and clipped ReLU)
//    and Jasper (Li et al. 2019, DeepLearningExamples), 1-D convolutions over time;
//  - deepspeech2.h: DeepSpeech2 (Amodei et al. 2016, MLPerf's reference), 2-D convolutions, a
//    bidirectional recurrent stack and a fully connected layer.
//
// Dimension alphabet: B utterances, T feature frames, F feature bins, T' output frames (T / 2 for
// the models here), V output symbols, the CTC blank being id 0.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace mixseq {

struct CtcOutput {
  torch::Tensor logits;   // [B, T', V] unnormalised scores (log_softmax gives the CTC distribution)
  torch::Tensor lengths;  // [B] int64: the valid output frames of each utterance
};

class SpeechRecognizerImpl : public torch::nn::Module {
 public:
  // features [B, T, F] (frames past an utterance's length are zero), lengths [B] int64.
  virtual CtcOutput forward(const torch::Tensor& features, const torch::Tensor& lengths) = 0;
  // F: the feature bins the model reads.
  virtual int64_t feature_bins() const = 0;
  // The output frames of an utterance of `frames` input frames (<= 0: too short for the model).
  virtual int64_t output_frames(int64_t frames) const = 0;

 protected:
  // Whether a forward over x takes the model's inference path (folded batch norms, spectral
  // convolutions): eval mode, autograd off, fp32 on the CPU, autocast off.
  bool runs_inference(const torch::Tensor& x) const;
};

using SpeechRecognizer = std::shared_ptr<SpeechRecognizerImpl>;

// Unsupervised adaptation to a new speaker or recording channel (AdaBN, Li et al. 2016): the
// running mean and variance of every batch norm in `model` are re-estimated from unlabelled
// utterances, as Kaldi's per-speaker CMVN re-estimates a speaker's feature statistics; no weight
// changes. `batch(i)` gives the i-th of `batches` (features [B, T, F], lengths [B] int64, on the
// model's device); one utterance per batch keeps padding out of the statistics. Each batch runs
// forward with the model in evaluation mode (no dropout) and its batch norms in training mode, so a
// layer's statistics are measured on what the adapted layers before it output, and each statistic
// ends as the plain mean over the batches (batch norm's cumulative average: momentum unset). The
// model is left in the mode it had, its batch norms' momentum as it was. Returns how many batch
// norms were adapted (0 for a model with none, which is then unchanged). When `batch` or a forward
// throws, every statistic is put back as it was before the exception goes on. Not thread-safe:
// nothing else may use the model meanwhile.
int64_t adapt_batch_norms(SpeechRecognizerImpl& model, int64_t batches,
                          const std::function<std::pair<torch::Tensor, torch::Tensor>(int64_t)>& batch);

}  // namespace mixseq
