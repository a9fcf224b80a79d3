// QuantizationPoint: one activation between two operations that post-training quantization may
// round to a grid in simulation (Distiller's quantize-dequantize at op boundaries): the result of
// an element-wise add or multiply, a matrix product, a concatenation, or the input or output of a
// softmax, tanh or sigmoid, which themselves stay in fp32.
//
// The module that computes the activation owns the point, registered under a name that says
// which activation it is ("cell.tanh_c", "attention.scores"), and passes the activation through
// it: y = point_(y). The point registers no parameters or buffers, so checkpoints are unchanged;
// quant/ finds points by their module path, like the QuantizableLinear layers, calibrates them
// through set_observer() and sets their grid.
//
//   no grid, no observer   float: forward returns its argument itself, no tensor operation
//   grid set               quantize_dequantize(x, grid) (nn/quantization_grid.h), per tensor
//
// Points are simulation only: int8 execution (nn/quantizable_linear.h) leaves them in float.
// Modules whose float path is a fused kernel (the LSTMs) ask active() to take the unfused path.
// Not thread-safe (like every module).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <functional>

#include "mixseq/nn/quantization_grid.h"

namespace mixseq {

class QuantizationPointImpl : public torch::nn::Module {
 public:
  torch::Tensor forward(const torch::Tensor& x);  // any shape -> the same shape

  // A per-tensor grid; an undefined grid ({}) returns the point to float.
  void set_grid(const QuantizationGrid& grid);

  // Called on every activation that passes, before rounding; empty: none.
  using Observer = std::function<void(const torch::Tensor& x)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  // Whether forward does anything (a grid or an observer is set).
  bool active() const { return grid_.defined() || static_cast<bool>(observer_); }

 private:
  QuantizationGrid grid_;
  Observer observer_;
};
TORCH_MODULE(QuantizationPoint);

// The activation through `point`, or `x` itself when the point is float: the call sites of
// optional points (plain functions that modules pass their points to) read as one line.
torch::Tensor through(QuantizationPointImpl* point, const torch::Tensor& x);

}  // namespace mixseq
