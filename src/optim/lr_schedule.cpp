#include "mixseq/optim/lr_schedule.h"

#include <torch/optim/optimizer.h>

#include <algorithm>
#include <cmath>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// NVIDIA's WarmupMultiStepLR starts its warmup at 0.01·lr (math.log(0.01) in get_lr).
constexpr double kGnmtWarmupStartFactor = 0.01;
constexpr double kPi = 3.14159265358979323846;

// A "count or fraction" field as a number of updates: a fraction in (0, 1) of total_steps,
// rounded down as NVIDIA's perhaps_convert_float (int(param * total)), or a whole count.
int64_t resolve_steps(const char* field, double value, int64_t total_steps) {
  if (value > 0.0 && value < 1.0) return static_cast<int64_t>(value * static_cast<double>(total_steps));
  MIXSEQ_CHECK(value >= 0.0 && std::floor(value) == value, "lr_schedule.gnmt_step.", field, " (", value,
               ") must be a whole number of updates or a fraction of training in (0, 1)");
  return static_cast<int64_t>(value);
}

}  // namespace

LrSchedule::LrSchedule(const LrScheduleOptions& options, double lr, int64_t total_steps)
    : options_(options), lr_(lr), total_steps_(total_steps) {
  MIXSEQ_CHECK(lr >= 0.0, "the learning rate (", lr, ") must not be negative");
  if (options.name == "gnmt_step") {
    kind_ = Kind::kGnmtStep;
  } else if (options.name == "inverse_sqrt") {
    kind_ = Kind::kInverseSqrt;
  } else if (options.name == "cosine") {
    kind_ = Kind::kCosine;
  } else if (options.name == "transformer_policy") {
    kind_ = Kind::kTransformerPolicy;
  } else if (options.name == "constant") {
    kind_ = Kind::kConstant;
  } else {
    throw Error(str_cat("unknown lr_schedule.name '", options.name,
                        "'; known: gnmt_step, inverse_sqrt, cosine, transformer_policy, constant"));
  }

  if (kind_ == Kind::kGnmtStep || kind_ == Kind::kCosine) {
    MIXSEQ_CHECK(total_steps >= 1, "lr_schedule.name ", options.name, " needs the number of training updates; got ",
                 total_steps);
  }
  if (kind_ == Kind::kGnmtStep) {
    const auto& gnmt = options.gnmt_step;
    gnmt_remain_steps_ = resolve_steps("remain_steps", gnmt.remain_steps, total_steps);
    // As the reference: a warmup longer than the constant phase is cut to end where decay starts.
    gnmt_warmup_steps_ = std::min(resolve_steps("warmup_steps", gnmt.warmup_steps, total_steps), gnmt_remain_steps_);
    MIXSEQ_CHECK(gnmt.decay_steps >= 0, "lr_schedule.gnmt_step.decay_steps (", gnmt.decay_steps, ") must not be negative");
    MIXSEQ_CHECK(gnmt.decay_factor > 0.0, "lr_schedule.gnmt_step.decay_factor (", gnmt.decay_factor,
                 ") must be positive; 0.5 halves the rate at each decay");
    if (gnmt.decay_interval != 0.0) {
      gnmt_decay_interval_ = resolve_steps("decay_interval", gnmt.decay_interval, total_steps);
      MIXSEQ_CHECK(gnmt_decay_interval_ >= 1, "lr_schedule.gnmt_step.decay_interval (", gnmt.decay_interval,
                   ") is less than one update out of ", total_steps);
    } else if (gnmt.decay_steps > 0) {
      gnmt_decay_interval_ = std::max<int64_t>((total_steps - gnmt_remain_steps_) / gnmt.decay_steps, 1);
    }
  }
  if (kind_ == Kind::kInverseSqrt) {
    MIXSEQ_CHECK(options.inverse_sqrt.warmup_updates >= 1, "lr_schedule.inverse_sqrt.warmup_updates (",
                 options.inverse_sqrt.warmup_updates, ") must be at least 1; fairseq's Transformer uses 4000");
  }
  if (kind_ == Kind::kTransformerPolicy) {
    const auto& policy = options.transformer_policy;
    MIXSEQ_CHECK(policy.d_model >= 1, "lr_schedule.transformer_policy.d_model (", policy.d_model,
                 ") must be at least 1: the model's width");
    MIXSEQ_CHECK(policy.warmup_steps >= 1, "lr_schedule.transformer_policy.warmup_steps (", policy.warmup_steps,
                 ") must be at least 1; OpenSeq2Seq's ConvS2S and Transformer use 4000");
    MIXSEQ_CHECK(policy.max_lr >= 0.0, "lr_schedule.transformer_policy.max_lr (", policy.max_lr,
                 ") must not be negative; 0 means no limit");
    MIXSEQ_CHECK(policy.coefficient > 0.0, "lr_schedule.transformer_policy.coefficient (", policy.coefficient,
                 ") must be positive");
  }
  if (kind_ == Kind::kCosine) {
    const auto& cosine = options.cosine;
    MIXSEQ_CHECK(cosine.warmup_steps >= 0 && cosine.warmup_steps < total_steps, "lr_schedule.cosine.warmup_steps (",
                 cosine.warmup_steps, ") must lie in [0, ", total_steps, "), the number of training updates");
    MIXSEQ_CHECK(cosine.eta_min >= 0.0 && cosine.eta_min <= lr, "lr_schedule.cosine.eta_min (", cosine.eta_min,
                 ") must lie between 0 and the learning rate (", lr, ")");
  }
}

double LrSchedule::lr_at(int64_t step) const {
  MIXSEQ_CHECK(step >= 0, "learning rate asked for update ", step, "; updates count from 0");
  switch (kind_) {
    case Kind::kGnmtStep:
      return gnmt_step_lr(step);
    case Kind::kInverseSqrt:
      return inverse_sqrt_lr(step);
    case Kind::kCosine:
      return cosine_lr(step);
    case Kind::kTransformerPolicy:
      return transformer_policy_lr(step);
    case Kind::kConstant:
      break;
  }
  return lr_;
}

double LrSchedule::gnmt_step_lr(int64_t step) const {
  const int64_t t = step + 1;  // NVIDIA's last_epoch when this update runs
  if (t <= gnmt_warmup_steps_) {
    // Written as NVIDIA's get_lr computes it, so that the values agree to the last bit.
    const double warmup_factor = std::exp(std::log(kGnmtWarmupStartFactor) / static_cast<double>(gnmt_warmup_steps_));
    return lr_ * std::pow(warmup_factor, static_cast<double>(gnmt_warmup_steps_ - t));
  }
  if (t >= gnmt_remain_steps_) {
    const int64_t decays = std::min((t - gnmt_remain_steps_) / gnmt_decay_interval_ + 1, options_.gnmt_step.decay_steps);
    return lr_ * std::pow(options_.gnmt_step.decay_factor, static_cast<double>(decays));
  }
  return lr_;
}

double LrSchedule::inverse_sqrt_lr(int64_t step) const {
  const auto& o = options_.inverse_sqrt;
  if (step < o.warmup_updates) {
    const double lr_step = (lr_ - o.warmup_init_lr) / static_cast<double>(o.warmup_updates);
    return o.warmup_init_lr + static_cast<double>(step) * lr_step;
  }
  // fairseq's decay_factor · num_updates^-0.5 with decay_factor = lr · sqrt(warmup_updates).
  return lr_ * std::sqrt(static_cast<double>(o.warmup_updates)) / std::sqrt(static_cast<double>(step));
}

double LrSchedule::cosine_lr(int64_t step) const {
  const auto& o = options_.cosine;
  if (step < o.warmup_steps) return lr_ * static_cast<double>(step) / static_cast<double>(o.warmup_steps);
  const double progress = static_cast<double>(std::min(step, total_steps_) - o.warmup_steps) /
                          static_cast<double>(total_steps_ - o.warmup_steps);
  return o.eta_min + (lr_ - o.eta_min) * (1.0 + std::cos(kPi * progress)) / 2.0;
}

double LrSchedule::transformer_policy_lr(int64_t step) const {
  const auto& o = options_.transformer_policy;
  const double t = static_cast<double>(step + 1);  // OpenSeq2Seq's global_step + 1
  const double decay = o.coefficient * std::pow(static_cast<double>(o.d_model), -0.5) *
                       std::min(t * std::pow(static_cast<double>(o.warmup_steps), -1.5), std::pow(t, -0.5));
  const double lr = decay * lr_;
  return o.max_lr > 0.0 ? std::min(o.max_lr, lr) : lr;
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& scales) {
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(i < scales.size() ? lr * scales[i] : lr);
}

}  // namespace mixseq
