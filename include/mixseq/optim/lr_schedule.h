// Learning-rate schedules: the learning rate of each update as a pure function of the update's
// number, so that a resumed run needs nothing but the number of updates already made.
//
//   LrSchedule schedule(cfg.lr_schedule, cfg.optim.lr, cfg.max_steps);
//   for (int64_t step = state.step; step < cfg.max_steps; ++step) {
//     set_learning_rate(*optimizer, schedule.lr_at(step));
//     ...
//
// `step` counts from 0 for the first update. Each schedule reproduces the learning rates its
// reference's training loop applies to successive updates (where the reference adjusts the rate
// before or after an update, the formula below is shifted to match):
//
//   gnmt_step    NVIDIA GNMT's WarmupMultiStepLR (DeepLearningExamples, PyTorch/Translation/GNMT/
//                seq2seq/train/lr_scheduler.py). NVIDIA calls scheduler.step() before
//                optimizer.step() (fp_optimizers.py), so update `step` runs at its counter
//                t = step + 1:
//                  t <= warmup:  lr · 0.01^((warmup - t) / warmup)     exponential warmup
//                  t >= remain:  lr · decay_factor^min((t - remain) / decay_interval + 1, decay_steps)
//                  otherwise:    lr
//                (integer division; warmup is cut to remain when it is larger, as there).
//                (NVIDIA's manual_fp16 path does not count an update skipped for overflow, its
//                default apex path does: pass the count the compared run used.)
//   inverse_sqrt fairseq's inverse_square_root_schedule.py, update `step` at num_updates = step:
//                  step < warmup_updates:  warmup_init_lr + step · (lr - warmup_init_lr) / warmup_updates
//                  otherwise:              lr · sqrt(warmup_updates / step)
//   cosine       NVIDIA Transformer-XL (PyTorch/LanguageModeling/Transformer-XL/pytorch/train.py):
//                linear warmup, then CosineAnnealingLR over the remaining updates:
//                  step < warmup_steps:  lr · step / warmup_steps
//                  otherwise:            eta_min + (lr - eta_min) · (1 + cos(π · (step - warmup_steps) /
//                                        (total_steps - warmup_steps))) / 2, held at eta_min after total_steps
//                (Transformer-XL runs its very first update at the full lr, before it first sets the
//                rate; here update 0 gets the formula's 0 like every other warmup update.)
//   transformer_policy
//                OpenSeq2Seq's transformer_policy (open_seq2seq/optimizers/lr_policies.py), the
//                Transformer paper's "noam" rate with a hat, update `step` at global_step = step:
//                  min(max_lr, lr · coefficient · d_model^-0.5 · min((step + 1) · warmup_steps^-1.5,
//                      (step + 1)^-0.5))
//                (OpenSeq2Seq's `learning_rate` is lr here; max_lr 0 means no hat).
//   constant     lr at every update.
//
// An LrSchedule is immutable and cheap to copy; lr_at may be called from any thread.
#pragma once

#include <cstdint>
#include <vector>
#include <string>

#include "mixseq/util/config.h"

namespace torch::optim {
class Optimizer;
}

namespace mixseq {

// Where a field says "count or fraction", a value in (0, 1) is a fraction of total_steps
// (rounded down, as NVIDIA's perhaps_convert_float) and a whole number is a number of updates.
struct GnmtStepScheduleOptions {
  double warmup_steps = 200;     // updates of exponential warmup from 0.01·lr; count or fraction; 0 = none
  double remain_steps = 0.666;   // update counter at which step decay starts; count or fraction
  double decay_interval = 0;     // updates between decays; count or fraction; 0 = spread decay_steps
                                 // evenly over the rest: (total_steps - remain_steps) / decay_steps
  int64_t decay_steps = 4;       // most decays; 0 = no decay
  double decay_factor = 0.5;     // lr multiplier of each decay; 1 = no decay

  void visit(ConfigVisitor& v) {
    v.field("warmup_steps", warmup_steps, "exponential warmup updates (count, or fraction of training in (0, 1))");
    v.field("remain_steps", remain_steps, "update at which decay starts (count, or fraction in (0, 1))");
    v.field("decay_interval", decay_interval, "updates between decays (count or fraction); 0 = evenly spaced");
    v.field("decay_steps", decay_steps, "number of decays; 0 = none");
    v.field("decay_factor", decay_factor, "lr multiplier per decay");
  }
};

struct InverseSqrtScheduleOptions {
  int64_t warmup_updates = 4000;  // updates of linear warmup, at least 1 (fairseq --warmup-updates)
  double warmup_init_lr = 1e-7;   // lr of the first update (fairseq's translation examples use
                                  // --warmup-init-lr 1e-07)

  void visit(ConfigVisitor& v) {
    v.field("warmup_updates", warmup_updates, "updates of linear warmup (at least 1)");
    v.field("warmup_init_lr", warmup_init_lr, "learning rate of the first update");
  }
};

struct CosineScheduleOptions {
  int64_t warmup_steps = 1000;  // updates of linear warmup from 0 (Transformer-XL --warmup_step); 0 = none
  double eta_min = 0.001;       // lr at the end of training, at most lr (Transformer-XL --eta_min)

  void visit(ConfigVisitor& v) {
    v.field("warmup_steps", warmup_steps, "updates of linear warmup from 0; 0 = none");
    v.field("eta_min", eta_min, "final learning rate of the cosine decay");
  }
};

struct TransformerPolicyScheduleOptions {
  int64_t d_model = 512;        // the model width the rate is scaled by (d_model^-0.5)
  int64_t warmup_steps = 4000;  // updates of warmup, at least 1
  double max_lr = 0.0;          // the hat: no update's rate above it; 0 = none
  double coefficient = 1.0;     // OpenSeq2Seq's optimizer adjustment

  void visit(ConfigVisitor& v) {
    v.field("d_model", d_model, "model width; the rate scales with d_model^-0.5");
    v.field("warmup_steps", warmup_steps, "updates of warmup (at least 1)");
    v.field("max_lr", max_lr, "highest learning rate of any update; 0 = no limit");
    v.field("coefficient", coefficient, "multiplier of the rate (OpenSeq2Seq: optimizer adjustment)");
  }
};

struct LrScheduleOptions {
  std::string name = "gnmt_step";  // gnmt_step | inverse_sqrt | cosine | transformer_policy |
                                   // constant; only the section of that name is used
  GnmtStepScheduleOptions gnmt_step;
  InverseSqrtScheduleOptions inverse_sqrt;
  CosineScheduleOptions cosine;
  TransformerPolicyScheduleOptions transformer_policy;

  void visit(ConfigVisitor& v) {
    v.choice("name", name, {"gnmt_step", "inverse_sqrt", "cosine", "transformer_policy", "constant"},
             "learning-rate schedule");
    v.section("gnmt_step", gnmt_step);
    v.section("inverse_sqrt", inverse_sqrt);
    v.section("cosine", cosine);
    v.section("transformer_policy", transformer_policy);
  }
};

class LrSchedule {
 public:
  // lr: the peak learning rate (the optimizer's); total_steps: the updates the run makes, which
  // gnmt_step's fractions and cosine's length refer to. Throws mixseq::Error for options that
  // make no schedule (naming the field, its value and the valid range).
  LrSchedule(const LrScheduleOptions& options, double lr, int64_t total_steps);

  // The learning rate of update number `step` (0 = the first update).
  double lr_at(int64_t step) const;

  // Whether the rates depend on total_steps (gnmt_step, cosine) or on the step alone.
  bool depends_on_total() const { return kind_ == Kind::kGnmtStep || kind_ == Kind::kCosine; }

 private:
  enum class Kind { kGnmtStep, kInverseSqrt, kCosine, kTransformerPolicy, kConstant };

  double gnmt_step_lr(int64_t step) const;
  double inverse_sqrt_lr(int64_t step) const;
  double cosine_lr(int64_t step) const;
  double transformer_policy_lr(int64_t step) const;

  Kind kind_;
  LrScheduleOptions options_;
  double lr_;
  int64_t total_steps_;
  // gnmt_step's counts, resolved from counts or fractions of total_steps.
  int64_t gnmt_warmup_steps_ = 0;
  int64_t gnmt_remain_steps_ = 0;
  int64_t gnmt_decay_interval_ = 1;
};

// Sets the learning rate of every parameter group of `optimizer`: lr * scales[i] for group i (1
// where `scales` has no entry: empty = lr everywhere).
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& scales = {});

}  // namespace mixseq
