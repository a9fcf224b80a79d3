// Calibration: runs alongside the float model and records ActivationStatistics of the input and
// output of every quantizable linear layer that the config does not keep in float, and in
// mode: simulated also of every embedding (its lookups) and quantization point (its one
// activation; nn/quantization_point.h), whose statistics are `input` alone. Create it, run the
// model on calibration data (any way: a training-style forward or a beam search), read
// statistics(); the destructor detaches it from the model.
//
// It holds a reference to the model, which must outlive it. Not thread-safe.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <string>
#include <vector>

#include "mixseq/quant/activation_statistics.h"
#include "mixseq/quant/quantization_config.h"

namespace mixseq {

struct LayerStatistics {
  ActivationStatistics input;   // a point's activation, an embedding's lookups
  ActivationStatistics output;  // no batches for a point or an embedding
};

// The names (module paths) of `model`'s quantizable modules in registration order: linear
// layers, embeddings and quantization points.
std::vector<std::string> quantizable_layer_names(torch::nn::Module& model);

class Calibration {
 public:
  Calibration(torch::nn::Module& model, const QuantizationConfig& config);
  ~Calibration();
  Calibration(const Calibration&) = delete;
  Calibration& operator=(const Calibration&) = delete;

  const std::map<std::string, LayerStatistics>& statistics() const { return statistics_; }

 private:
  torch::nn::Module& model_;
  std::map<std::string, LayerStatistics> statistics_;  // the layers being watched, by name
};

}  // namespace mixseq
