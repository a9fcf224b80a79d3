#include "mixseq/models/speech_recognizer.h"

#include "util/torch_compat.h"

namespace mixseq {

bool SpeechRecognizerImpl::runs_inference(const torch::Tensor& x) const {
  return !is_training() && !torch::GradMode::is_enabled() && x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
         !compat::is_autocast_enabled(c10::DeviceType::CPU);
}

}  // namespace mixseq
