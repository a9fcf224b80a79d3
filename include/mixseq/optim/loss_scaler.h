// Dynamic loss scaling for fp16 training (Micikevicius et al. 2018, "Mixed Precision Training",
// §3.2; the dynamic variant of NVIDIA GNMT's seq2seq/train/fp_optimizers.py and apex amp). Small fp16 gradients underflow to zero;
// multiplying the loss by a large scale S before backward keeps them representable, and
// dividing the gradients by S before clipping and the optimizer step gives the true ones back.
// S is found by trial: when a step's gradients hold inf or NaN the step is skipped and S halved;
// after `growth_interval` clean steps in a row S doubles. bf16 training needs no scaler (bf16
// has fp32's exponent range).
//
// The trainer's step, with the scaler's calls in order:
//
//   scaler.scale(loss).backward();                       // per micro-batch
//   // all-reduce gradients first, so that every rank sees the same inf/NaN and agrees
//   scaler.unscale_(parameters);                         // true gradients, once per update
//   const bool overflow = DynamicLossScaler::found_inf(parameters);
//   clip_gradient_norm(parameters, clip_options);
//   if (!overflow) optimizer.step();
//   scaler.update(overflow);
//
// state() and load_state() carry everything the scaler remembers, for an exact resume.
// A DynamicLossScaler is not thread-safe; one per training process.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "mixseq/util/config.h"

namespace mixseq {

struct LossScalerOptions {
  double init_scale = 8192;       // S at the first step (NVIDIA GNMT --init-scale 8192)
  int64_t growth_interval = 128;  // clean steps in a row after which S doubles (GNMT
                                  // --upscale-interval 128); 0 = S never grows
  double min_scale = 1e-4;        // an overflow that would halve S below this throws mixseq::Error:
                                  // the loss is diverging (fairseq's min_loss_scale)
  double max_scale = 16777216;    // 2^24, S never grows past it (apex amp's max_loss_scale, which
                                  // GNMT's default --math fp16 uses)

  void visit(ConfigVisitor& v) {
    v.field("init_scale", init_scale, "initial fp16 loss scale");
    v.field("growth_interval", growth_interval, "clean steps before the scale doubles; 0 = never");
    v.field("min_scale", min_scale, "smallest loss scale; going below it stops training");
    v.field("max_scale", max_scale, "largest loss scale");
  }
};

// Everything a DynamicLossScaler remembers between steps.
struct LossScalerState {
  double scale = 0;         // the current loss scale S
  int64_t clean_steps = 0;  // steps without inf/NaN since S last changed
};

class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(const LossScalerOptions& options);

  // loss · S.
  at::Tensor scale(const at::Tensor& loss) const;

  // Divides the gradient of every parameter that has one by S, in place (exact when S is a
  // power of two, as from init_scale 8192).
  void unscale_(const std::vector<at::Tensor>& parameters) const;

  // Whether any gradient holds inf or NaN: one reduction per gradient and a single
  // device-to-host copy for all of them. Parameters without a gradient are ignored.
  static bool found_inf(const std::vector<at::Tensor>& parameters);

  // After each update attempt: halves S when `found_inf` (the step must have been skipped),
  // otherwise counts a clean step and doubles S (up to max_scale) after growth_interval of them.
  void update(bool found_inf);

  double current_scale() const { return state_.scale; }
  LossScalerState state() const { return state_; }
  void load_state(const LossScalerState& state);

 private:
  LossScalerOptions options_;
  LossScalerState state_;
};

}  // namespace mixseq
