// QuantizableEmbedding: a torch::nn::Embedding (it derives from EmbeddingImpl: same parameter
// "weight" [V, D], options, initialization and random draws, so checkpoints are unchanged) whose
// table post-training quantization may round to a grid in simulation, as Distiller's quantized
// embedding does: a lookup returns rows of the rounded table, the rest of the model is fp32.
//
//   float      EmbeddingImpl::forward, bit for bit
//   simulated  the rows of quantize_dequantize(weight, grid) (nn/quantization_grid.h); a
//              per-channel grid has one scale per row, that is per token
//
// Like QuantizableLinear, the table is rounded once, when set_weight_grid() is called; later
// weight changes need another call. Simulation only: int8 mode keeps embeddings in float.
// Calibration watches the lookups through set_observer() (the range is informative: the grid
// comes from the weight). Not thread-safe (like every module).
#pragma once

#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include <functional>

#include "mixseq/nn/quantization_grid.h"

namespace mixseq {

class QuantizableEmbeddingImpl : public torch::nn::EmbeddingImpl {
 public:
  using torch::nn::EmbeddingImpl::EmbeddingImpl;

  torch::Tensor forward(const torch::Tensor& tokens);  // [...] int64 -> [..., D]

  // Rounds the table to `grid` ([] or [V] scales); an undefined grid ({}) returns to float.
  void set_weight_grid(const QuantizationGrid& grid);

  // Called after each lookup with its result [..., D]; empty: none.
  using Observer = std::function<void(const torch::Tensor& rows)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }

 private:
  torch::Tensor simulated_weight_;  // the table rounded to its grid, [V, D]; undefined in float
  Observer observer_;
};

class QuantizableEmbedding : public torch::nn::ModuleHolder<QuantizableEmbeddingImpl> {
 public:
  using torch::nn::ModuleHolder<QuantizableEmbeddingImpl>::ModuleHolder;
};

}  // namespace mixseq
