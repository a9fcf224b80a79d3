#include "mixseq/models/speech_recognizer.h"

#include <torch/nn/modules/batchnorm.h>

#include <vector>

#include "mixseq/util/error.h"
#include "util/torch_compat.h"

namespace mixseq {

bool SpeechRecognizerImpl::runs_inference(const torch::Tensor& x) const {
  return !is_training() && !torch::GradMode::is_enabled() && x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
         !compat::is_autocast_enabled(c10::DeviceType::CPU);
}

namespace {

// A batch norm of either kind the recognizers use, seen through what adaptation touches.
struct AdaptedNorm {
  torch::nn::Module* module;
  c10::optional<double>* momentum;  // the options' momentum (nullopt: cumulative average)
  c10::optional<double> saved_momentum;
  std::function<void()> reset;
};

template <typename Norm>
bool collect_norm(torch::nn::Module& module, std::vector<AdaptedNorm>& norms) {
  auto* norm = dynamic_cast<Norm*>(&module);
  if (norm == nullptr) return false;
  MIXSEQ_CHECK(norm->options.track_running_stats(), "adapt_batch_norms: a batch norm without running statistics");
  norms.push_back({norm, &norm->options.momentum(), norm->options.momentum(), [norm] { norm->reset_running_stats(); }});
  return true;
}

}  // namespace

int64_t adapt_batch_norms(SpeechRecognizerImpl& model, int64_t batches,
                          const std::function<std::pair<torch::Tensor, torch::Tensor>(int64_t)>& batch) {
  MIXSEQ_CHECK(batches > 0, "adapt_batch_norms: no utterances to adapt the batch norms on");
  std::vector<AdaptedNorm> norms;
  for (const auto& module : model.modules(/*include_self=*/false))
    collect_norm<torch::nn::BatchNorm1dImpl>(*module, norms) || collect_norm<torch::nn::BatchNorm2dImpl>(*module, norms);
  if (norms.empty()) return 0;
  const bool was_training = model.is_training();
  std::vector<bool> requires_grad;
  for (const auto& parameter : model.parameters()) requires_grad.push_back(parameter.requires_grad());
  std::vector<torch::Tensor> statistics;  // every buffer as it was, put back if a batch fails
  for (const auto& buffer : model.buffers()) statistics.push_back(buffer.clone());
  // Autograd stays on (the models' inference paths read the folded statistics and would not
  // update them) but nothing requires a gradient, so no graph is kept.
  const auto restore = [&] {
    model.train(was_training);
    for (auto& norm : norms) *norm.momentum = norm.saved_momentum;
    size_t i = 0;
    for (auto& parameter : model.parameters()) parameter.set_requires_grad(requires_grad[i++]);
  };
  try {
    model.eval();
    for (auto& parameter : model.parameters()) parameter.set_requires_grad(false);
    for (auto& norm : norms) {
      norm.reset();
      *norm.momentum = c10::nullopt;
      norm.module->train(true);
    }
    torch::AutoGradMode autograd(true);
    for (int64_t i = 0; i < batches; ++i) {
      const auto [features, lengths] = batch(i);
      model.forward(features, lengths);
    }
  } catch (...) {
    restore();
    torch::NoGradGuard no_grad;
    size_t i = 0;
    for (auto& buffer : model.buffers()) buffer.copy_(statistics[i++]);
    throw;
  }
  restore();
  return static_cast<int64_t>(norms.size());
}

}  // namespace mixseq
