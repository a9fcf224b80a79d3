#include "mixseq/train/translation_loss.h"

namespace mixseq {

LossSums translation_loss(Seq2SeqModelImpl& model, const TranslationBatch& batch,
                          const LabelSmoothingOptions& criterion, Precision precision, const torch::Device& device) {
  const auto on_device = batch.to(device);
  const AutocastScope autocast(precision, device);
  const auto logits = model.forward(on_device.source, on_device.source_lengths, on_device.target_input);  // [B, T, V]
  const auto sums = label_smoothed_cross_entropy(logits, on_device.target_output, criterion);
  return {sums.loss, sums.nll, on_device.target_tokens, on_device.source_tokens};
}

}  // namespace mixseq
