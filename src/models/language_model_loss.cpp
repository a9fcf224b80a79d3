#include "mixseq/models/language_model_loss.h"

namespace mixseq {

LanguageModelLoss language_model_loss(LanguageModelImpl& model, const torch::Tensor& input, const torch::Tensor& target,
                                      const LmMemory& memory, Precision precision, const torch::Device& device) {
  LmOutput output;
  {
    const AutocastScope autocast(precision, device);
    output = model.forward(input, target, memory);  // nll: [B, T]
  }
  auto nll_sum = output.nll.sum();
  return {std::move(nll_sum), target.numel(), std::move(output.memory), std::move(output.nll), std::move(output.states)};
}

}  // namespace mixseq
