#include "mixseq/criteria/ctc_loss.h"

#include "mixseq/util/error.h"

namespace mixseq {

int64_t ctc_min_frames(const std::vector<int64_t>& targets) {
  int64_t frames = static_cast<int64_t>(targets.size());
  for (size_t i = 1; i < targets.size(); ++i) frames += targets[i] == targets[i - 1];
  return frames;
}

CtcLossSums ctc_loss_sums(const torch::Tensor& logits, const torch::Tensor& lengths,
                          const std::vector<std::vector<int64_t>>& targets) {
  const int64_t batch = logits.size(0);
  MIXSEQ_CHECK(logits.dim() == 3 && lengths.numel() == batch && static_cast<int64_t>(targets.size()) == batch,
               "ctc_loss_sums: logits [B, T, V], lengths [B] and B transcripts, not ", logits.sizes(), ", ",
               lengths.numel(), " and ", targets.size());
  const auto frames = lengths.to(torch::kCPU, torch::kLong).contiguous();
  const auto* frame_count = frames.data_ptr<int64_t>();
  std::vector<int64_t> flat, target_lengths;
  CtcLossSums sums;
  sums.utterances = batch;
  for (int64_t b = 0; b < batch; ++b) {
    flat.insert(flat.end(), targets[b].begin(), targets[b].end());
    target_lengths.push_back(static_cast<int64_t>(targets[b].size()));
    sums.infeasible += frame_count[b] < ctc_min_frames(targets[b]);
  }
  const auto log_probs = torch::log_softmax(logits.to(torch::kFloat), -1).transpose(0, 1);  // [T', B, V]
  const auto target_tensor = torch::tensor(flat, torch::kLong).to(logits.device());
  const auto per_utterance = torch::ctc_loss(log_probs, target_tensor, frames, torch::tensor(target_lengths, torch::kLong),
                                             /*blank=*/0, at::Reduction::None, /*zero_infinity=*/true);  // [B]
  sums.loss = per_utterance.sum();
  return sums;
}

}  // namespace mixseq
