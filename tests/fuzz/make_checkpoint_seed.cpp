// Writes the seed of corpus/checkpoint/: a real checkpoint of the tiny model of
// checkpoint_seed_model.h with Adam's state after one update, small enough for the repository.
//   make_checkpoint_seed tests/fuzz/corpus/checkpoint/seed_tiny.pt
#include <iostream>

#include "checkpoint_seed_model.h"
#include "mixseq/models/checkpoint.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_checkpoint_seed OUTPUT.pt\n";
    return 2;
  }
  torch::manual_seed(1);
  auto model = mixseq::fuzz::make_seed_model();
  auto optimizer = mixseq::fuzz::make_seed_optimizer(model);
  model->forward(torch::ones({1, 2})).sum().backward();
  optimizer.step();
  mixseq::CheckpointContents contents;
  contents.config_yaml = "model:\n  arch: transformer\n";
  contents.vocabulary_text = "<pad> 0\n<unk> 0\n<s> 0\n</s> 0\na 3\n";
  contents.vocabulary_fingerprint = 42;
  contents.tokenizer_kind = "none";
  contents.progress.step = 1;
  mixseq::save_checkpoint(argv[1], contents, *model, &optimizer);
  return 0;
}
