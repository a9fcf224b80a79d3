// EvalModeScope: a module in eval() mode (no dropout) for a scope, its mode restored after,
// also when an exception leaves the scope (a training run that catches a failed validation
// must not go on training without dropout).
#pragma once

#include <torch/nn/module.h>

namespace mixseq {

class EvalModeScope {
 public:
  explicit EvalModeScope(torch::nn::Module& module) : module_(module), was_training_(module.is_training()) {
    module_.eval();
  }
  ~EvalModeScope() { module_.train(was_training_); }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

}  // namespace mixseq
