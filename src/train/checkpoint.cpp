#include "mixseq/train/checkpoint.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstring>
#include <filesystem>

#include "mixseq/util/error.h"
#include "mixseq/util/output_file.h"

namespace mixseq {
namespace {

constexpr const char* kFormat = "mixseq-checkpoint";

torch::Tensor bytes_to_tensor(const std::string& bytes) {
  auto tensor = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

std::string tensor_to_bytes(const torch::Tensor& tensor) {
  const auto contiguous = tensor.contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()), static_cast<size_t>(contiguous.numel()));
}

// Flushed to disk before it is renamed into place: a crash keeps the previous checkpoint or the
// whole new one.
void save_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  OutputFile file(path, OutputFileOptions{/*sync_to_disk=*/true});
  archive.save_to([&](const void* data, size_t size) -> size_t {
    file.stream().write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    return size;
  });
  file.commit();
}

torch::serialize::InputArchive open_checkpoint(const std::string& path) {
  MIXSEQ_CHECK(std::filesystem::exists(path), "checkpoint '", path, "' does not exist");
  MIXSEQ_CHECK(!std::filesystem::is_directory(path), "checkpoint '", path, "' is a directory; name a checkpoint in it, ",
               "such as ", (std::filesystem::path(path) / "checkpoint_best.pt").string());
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, torch::kCPU);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    throw Error(str_cat("'", path, "' is not a readable checkpoint (truncated or corrupt?): ",
                        what.substr(0, what.find('\n'))));
  }
  c10::IValue format, version;
  MIXSEQ_CHECK(archive.try_read("format", format) && format.isString() && format.toStringRef() == kFormat, "'",
               path, "' is not a mixseq checkpoint");
  archive.read("version", version);
  MIXSEQ_CHECK(version.toInt() == kCheckpointVersion, "'", path, "' is a version ", version.toInt(),
               " checkpoint; this mixseq reads version ", kCheckpointVersion);
  return archive;
}

std::string read_string(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toStringRef();
}

int64_t read_int(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toInt();
}

double read_double(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toDouble();
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointContents& contents, const torch::nn::Module& model,
                     const torch::optim::Optimizer* optimizer) {
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string(kFormat)));
  archive.write("version", c10::IValue(kCheckpointVersion));
  archive.write("config_yaml", c10::IValue(contents.config_yaml));
  archive.write("vocabulary", bytes_to_tensor(contents.vocabulary_text));
  archive.write("tokenizer_kind", c10::IValue(contents.tokenizer_kind));
  archive.write("tokenizer_model", bytes_to_tensor(contents.tokenizer_model));

  const TrainingProgress& progress = contents.progress;
  torch::serialize::OutputArchive state;
  state.write("step", c10::IValue(progress.step));
  state.write("epoch", c10::IValue(progress.epoch));
  state.write("epoch_batches", c10::IValue(progress.epoch_batches));
  state.write("best_score", c10::IValue(progress.best_score));
  state.write("loss_scale", c10::IValue(progress.loss_scale));
  state.write("loss_scale_clean_steps", c10::IValue(progress.loss_scale_clean_steps));
  if (progress.cpu_rng_state.defined()) state.write("cpu_rng_state", progress.cpu_rng_state);
  if (progress.cuda_rng_state.defined()) state.write("cuda_rng_state", progress.cuda_rng_state);
  archive.write("progress", state);

  torch::serialize::OutputArchive weights;
  for (const auto& parameter : model.named_parameters()) weights.write(parameter.key(), parameter.value().cpu());
  for (const auto& buffer : model.named_buffers()) weights.write(buffer.key(), buffer.value().cpu(), /*is_buffer=*/true);
  archive.write("model", weights);

  if (optimizer) {
    torch::serialize::OutputArchive optimizer_state;
    optimizer->save(optimizer_state);
    archive.write("optimizer", optimizer_state);
  }
  save_atomically(archive, path);
}

CheckpointContents read_checkpoint_contents(const std::string& path) {
  auto archive = open_checkpoint(path);
  CheckpointContents contents;
  contents.config_yaml = read_string(archive, "config_yaml");
  torch::Tensor bytes;
  archive.read("vocabulary", bytes);
  contents.vocabulary_text = tensor_to_bytes(bytes);
  contents.tokenizer_kind = read_string(archive, "tokenizer_kind");
  archive.read("tokenizer_model", bytes);
  contents.tokenizer_model = tensor_to_bytes(bytes);

  torch::serialize::InputArchive state;
  archive.read("progress", state);
  TrainingProgress& progress = contents.progress;
  progress.step = read_int(state, "step");
  progress.epoch = read_int(state, "epoch");
  progress.epoch_batches = read_int(state, "epoch_batches");
  progress.best_score = read_double(state, "best_score");
  progress.loss_scale = read_double(state, "loss_scale");
  progress.loss_scale_clean_steps = read_int(state, "loss_scale_clean_steps");
  state.try_read("cpu_rng_state", progress.cpu_rng_state);
  state.try_read("cuda_rng_state", progress.cuda_rng_state);
  return contents;
}

void load_model_weights(const std::string& path, torch::nn::Module& model) {
  auto archive = open_checkpoint(path);
  torch::serialize::InputArchive weights;
  archive.read("model", weights);
  torch::NoGradGuard no_grad;
  const auto load = [&](const std::string& name, torch::Tensor& target, bool is_buffer) {
    torch::Tensor saved;
    MIXSEQ_CHECK(weights.try_read(name, saved, is_buffer), "checkpoint '", path, "' has no ",
                 is_buffer ? "buffer" : "parameter", " '", name, "'; was it written for another architecture?");
    MIXSEQ_CHECK(saved.sizes() == target.sizes(), "checkpoint '", path, "': '", name, "' has shape ", saved.sizes(),
                 " but the model expects ", target.sizes(), "; was it trained with another config or vocabulary?");
    target.copy_(saved);
  };
  for (auto& parameter : model.named_parameters()) load(parameter.key(), parameter.value(), false);
  for (auto& buffer : model.named_buffers()) load(buffer.key(), buffer.value(), true);
}

void load_optimizer_state(const std::string& path, torch::optim::Optimizer& optimizer) {
  auto archive = open_checkpoint(path);
  torch::serialize::InputArchive optimizer_state;
  MIXSEQ_CHECK(archive.try_read("optimizer", optimizer_state), "checkpoint '", path,
               "' holds no optimizer state (an averaged or exported model?); it cannot resume training");
  optimizer.load(optimizer_state);
}

}  // namespace mixseq
