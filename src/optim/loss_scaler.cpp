#include "mixseq/optim/loss_scaler.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Halving on overflow and doubling after a clean window, as NVIDIA GNMT (dls_downscale=2,
// dls_upscale=2), apex amp and torch.cuda.amp.GradScaler.
constexpr double kScaleFactor = 2.0;

std::vector<at::Tensor> defined_gradients(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> gradients;
  for (const auto& parameter : parameters) {
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  }
  return gradients;
}

}  // namespace

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& options) : options_(options) {
  MIXSEQ_CHECK(options.min_scale > 0.0 && options.min_scale <= options.init_scale &&
                   options.init_scale <= options.max_scale && std::isfinite(options.max_scale),
               "loss scaler: need 0 < min_scale <= init_scale <= max_scale < inf; got min_scale ", options.min_scale,
               ", init_scale ", options.init_scale, ", max_scale ", options.max_scale);
  MIXSEQ_CHECK(options.growth_interval >= 0, "loss scaler: growth_interval (", options.growth_interval,
               ") must not be negative; 0 keeps the scale from growing");
  state_.scale = options.init_scale;
}

at::Tensor DynamicLossScaler::scale(const at::Tensor& loss) const { return loss * state_.scale; }

void DynamicLossScaler::unscale_(const std::vector<at::Tensor>& parameters) const {
  const auto gradients = defined_gradients(parameters);
  if (!gradients.empty()) at::_foreach_mul_(gradients, 1.0 / state_.scale);
}

bool DynamicLossScaler::found_inf(const std::vector<at::Tensor>& parameters) {
  const auto gradients = defined_gradients(parameters);
  if (gradients.empty()) return false;
  // max |g| of each gradient: inf or NaN exactly when the gradient holds one (amax propagates
  // NaN), and unlike a sum or an L2 norm it cannot overflow on finite values.
  const auto maxima = at::_foreach_norm(gradients, std::numeric_limits<double>::infinity());
  return !at::stack(maxima).isfinite().all().item<bool>();
}

void DynamicLossScaler::update(bool found_inf) {
  if (found_inf) {
    const double halved = state_.scale / kScaleFactor;
    MIXSEQ_CHECK(halved >= options_.min_scale, "loss scale would fall to ", halved, ", below min_scale ",
                 options_.min_scale, ": gradients overflow however small the loss is scaled, so the loss is "
                 "probably diverging. Lower the learning rate, clip gradients or enlarge the batch");
    state_.scale = halved;
    state_.clean_steps = 0;
    return;
  }
  ++state_.clean_steps;
  if (options_.growth_interval > 0 && state_.clean_steps >= options_.growth_interval) {
    state_.scale = std::min(state_.scale * kScaleFactor, options_.max_scale);
    state_.clean_steps = 0;
  }
}

void DynamicLossScaler::load_state(const LossScalerState& state) {
  MIXSEQ_CHECK(state.scale > 0.0 && std::isfinite(state.scale) && state.clean_steps >= 0,
               "loss scaler state: scale (", state.scale, ") must be positive and finite and clean_steps (",
               state.clean_steps, ") not negative");
  state_ = state;
}

}  // namespace mixseq
