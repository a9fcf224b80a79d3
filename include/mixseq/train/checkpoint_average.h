// Checkpoint averaging, as fairseq's scripts/average_checkpoints.py: the element-wise mean of
// the weights of the last few checkpoints of a run usually translates better than any one of
// them (Vaswani et al. 2017, §6.1, average the last 5 or 20 checkpoints).
//
// The trainer writes numbered checkpoints <run_dir>/checkpoint_<update>.pt when
// train.keep_last_checkpoints > 0; last_numbered_checkpoints picks the newest of them.
// Functions here read and write files only; they hold no state and may run on any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mixseq {

// "<run_dir>/checkpoint_<update>.pt".
std::string numbered_checkpoint_path(const std::string& run_dir, int64_t update);

// Every checkpoint_<update>.pt in run_dir, oldest first by update number (9 before 10).
std::vector<std::string> numbered_checkpoints(const std::string& run_dir);

// The n newest numbered checkpoints of run_dir, oldest first; throws mixseq::Error when
// fewer than n exist.
std::vector<std::string> last_numbered_checkpoints(const std::string& run_dir, int64_t n);

// Writes to output_path, atomically, a checkpoint whose model tensors are the mean of those of
// `paths`: floating-point tensors are summed in fp64 and cast back to their type; integer
// buffers (counts, not weights) come from the last checkpoint, where fairseq's script would
// floor-divide their sum. Config, vocabulary, tokenizer and training progress are the last
// checkpoint's; there is no optimizer state, so the result translates (transcribes, scores,
// classifies or speaks: models of every family average) but cannot resume training. All checkpoints must share the model section of the
// config, the tensor names and shapes, and the vocabulary; mixseq::Error names the file that
// differs. An output_path that holds a training checkpoint (one with optimizer state, such as
// checkpoint_last.pt) is refused before anything is read, so that resuming stays possible.
void average_checkpoints(const std::vector<std::string>& paths, const std::string& output_path);

}  // namespace mixseq
