#include "mixseq/train/checkpoint_average.h"

#include <torch/nn/module.h>
#include <torch/types.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string_view>
#include <utility>

#include "mixseq/models/checkpoint.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/util/error.h"

namespace mixseq {
namespace {

constexpr std::string_view kNumberedPrefix = "checkpoint_";
constexpr std::string_view kNumberedSuffix = ".pt";

// The update number of "checkpoint_<update>.pt", or -1 for any other name (checkpoint_last.pt).
int64_t update_of(const std::string& name) {
  if (name.size() <= kNumberedPrefix.size() + kNumberedSuffix.size()) return -1;
  if (name.compare(0, kNumberedPrefix.size(), kNumberedPrefix) != 0) return -1;
  if (name.compare(name.size() - kNumberedSuffix.size(), kNumberedSuffix.size(), kNumberedSuffix) != 0) return -1;
  const auto digits = name.substr(kNumberedPrefix.size(), name.size() - kNumberedPrefix.size() - kNumberedSuffix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return std::stoll(digits);
}

// The model section alone: other sections (learning rate, data, run_dir) may differ between the
// checkpoints of one model, e.g. after a resume with other settings.
std::string model_section_yaml(const std::string& path, const CheckpointContents& contents) {
  ModelConfig config = stored_model_config(contents, path);
  return config_to_yaml([&](ConfigVisitor& v) { v.section("model", config); });
}

std::vector<std::pair<std::string, torch::Tensor>> named_tensors(const torch::nn::Module& model) {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& parameter : model.named_parameters()) tensors.emplace_back(parameter.key(), parameter.value());
  for (const auto& buffer : model.named_buffers()) tensors.emplace_back(buffer.key(), buffer.value());
  return tensors;
}

// Replacing a training checkpoint with an average would lose the optimizer state that resuming
// needs. Other files (an earlier average, or anything that is not a checkpoint) may be replaced.
void refuse_to_replace_training_checkpoint(const std::string& output_path, size_t inputs) {
  if (!std::filesystem::exists(output_path)) return;
  bool training_checkpoint = false;
  try {
    training_checkpoint = has_optimizer_state(output_path);
  } catch (const Error&) {
    return;  // not a readable checkpoint: nothing to resume from is lost
  }
  const auto folder = std::filesystem::path(output_path).parent_path();
  MIXSEQ_CHECK(!training_checkpoint, "'", output_path,
               "' is a training checkpoint: it holds the optimizer state that --resume needs, and the average "
               "(which has none) would replace it; write the average to another file, e.g. -o ",
               (folder / str_cat("checkpoint_avg", inputs, ".pt")).string());
}

}  // namespace

std::string numbered_checkpoint_path(const std::string& run_dir, int64_t update) {
  return str_cat(run_dir, "/", kNumberedPrefix, update, kNumberedSuffix);
}

std::vector<std::string> numbered_checkpoints(const std::string& run_dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  if (!std::filesystem::is_directory(run_dir)) return {};
  for (const auto& entry : std::filesystem::directory_iterator(run_dir)) {
    const int64_t update = update_of(entry.path().filename().string());
    if (update >= 0 && entry.is_regular_file()) found.emplace_back(update, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& [update, path] : found) paths.push_back(std::move(path));
  return paths;
}

std::vector<std::string> last_numbered_checkpoints(const std::string& run_dir, int64_t n) {
  MIXSEQ_CHECK(n > 0, "the number of checkpoints to average must be positive, not ", n);
  auto paths = numbered_checkpoints(run_dir);
  MIXSEQ_CHECK(static_cast<int64_t>(paths.size()) >= n, "'", run_dir, "' holds ", paths.size(),
               " numbered checkpoints (checkpoint_<update>.pt), fewer than the ", n,
               " asked for; train with train.keep_last_checkpoints >= ", n);
  paths.erase(paths.begin(), paths.end() - n);
  return paths;
}

void average_checkpoints(const std::vector<std::string>& paths, const std::string& output_path) {
  MIXSEQ_CHECK(!paths.empty(), "no checkpoints to average");
  refuse_to_replace_training_checkpoint(output_path, paths.size());
  // The first checkpoint builds the model; the others load into it and must fit it.
  const auto stored = load_stored_model(paths.front(), torch::kCPU);  // any family: translation, speech, ...
  torch::nn::Module& model = *stored;
  const auto first = read_checkpoint_contents(paths.front());
  const auto first_model_yaml = model_section_yaml(paths.front(), first);
  auto last = first;

  torch::NoGradGuard no_grad;
  std::map<std::string, torch::Tensor> sums;  // fp64, so many fp32 or bf16 checkpoints add up without rounding
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto& path = paths[i];
    if (i > 0) {
      last = read_checkpoint_contents(path);
      MIXSEQ_CHECK(model_section_yaml(path, last) == first_model_yaml, "'", path,
                   "' has another model config than '", paths.front(), "'; only checkpoints of one model average");
      MIXSEQ_CHECK(last.vocabulary_text == first.vocabulary_text, "'", path, "' has another vocabulary than '",
                   paths.front(), "'; only checkpoints of one model average");
      load_model_weights(path, model);  // checks every name and shape, naming the file
    }
    for (const auto& [name, tensor] : named_tensors(model)) {
      if (!tensor.is_floating_point()) continue;
      auto value = tensor.to(torch::kDouble);
      const auto [it, inserted] = sums.emplace(name, value);
      if (!inserted) it->second += value;
    }
  }
  // Integer buffers are counts, not weights: they keep the last checkpoint's values, loaded above.
  const double count = static_cast<double>(paths.size());
  for (auto& [name, tensor] : named_tensors(model))
    if (tensor.is_floating_point()) tensor.copy_(sums.at(name) / count);  // copy_ casts back to the tensor's type
  save_checkpoint(output_path, last, model, /*optimizer=*/nullptr);
}

}  // namespace mixseq
