#include "mixseq/models/checkpoint.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/mapped_file.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/zip_integrity.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

constexpr const char* kFormat = "mixseq-checkpoint";
constexpr int64_t kFirstVersionWithChecksums = 2;
constexpr int64_t kVersionWithoutInt8Weights = 2;  // what every checkpoint without 8-bit weights is written as
constexpr int64_t kMostCarriedTensors = 1 << 16;  // a language model's memory: one per layer
constexpr const char* kUseAnother = "use another checkpoint (checkpoint_best.pt, checkpoint_last.pt or a numbered one)";
// The scale of the int8 weight "<name>" is the model archive's tensor "<name><kInt8ScaleSuffix>".
constexpr const char* kInt8ScaleSuffix = ".int8_scale";

torch::Tensor bytes_to_tensor(const std::string& bytes) {
  auto tensor = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

std::string tensor_to_bytes(const torch::Tensor& tensor) {
  const auto contiguous = tensor.contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()), static_cast<size_t>(contiguous.numel()));
}

// Checksums are stored as int64 (what an IValue holds), bit for bit.
c10::IValue checksum_value(uint64_t checksum) { return c10::IValue(static_cast<int64_t>(checksum)); }

uint64_t tensor_checksum(const torch::Tensor& tensor) {
  const auto contiguous = tensor.contiguous();
  return checksum64(contiguous.data_ptr(), contiguous.nbytes());
}

// Everything but the model and optimizer tensors, each field length-prefixed so that bytes
// cannot move from one field to the next unnoticed.
uint64_t contents_checksum(const CheckpointContents& contents) {
  Checksum64 checksum;
  const auto add_bytes = [&](const void* data, uint64_t size) {
    checksum.update(&size, sizeof size);
    checksum.update(data, size);
  };
  const auto add_string = [&](const std::string& text) { add_bytes(text.data(), text.size()); };
  const auto add_number = [&](auto value) { add_bytes(&value, sizeof value); };
  const auto add_tensor = [&](const torch::Tensor& tensor) {
    if (!tensor.defined()) return add_string("undefined");
    const auto contiguous = tensor.contiguous();
    add_bytes(contiguous.data_ptr(), contiguous.nbytes());
  };
  add_string(contents.config_yaml);
  add_string(contents.vocabulary_text);
  add_number(contents.vocabulary_fingerprint);
  add_string(contents.tokenizer_kind);
  add_string(contents.tokenizer_model);
  const TrainingProgress& progress = contents.progress;
  for (const int64_t value : {progress.step, progress.epoch, progress.epoch_batches, progress.loss_scale_clean_steps})
    add_number(value);
  for (const double value : {progress.best_score, progress.best_loss, progress.loss_scale}) add_number(value);
  add_tensor(progress.cpu_rng_state);
  add_tensor(progress.cuda_rng_state);
  if (progress.validations_without_improvement != 0)  // so that checkpoints from before it keep their checksum
    add_number(progress.validations_without_improvement);
  if (!progress.carried_state.empty()) {  // so that checkpoints from before it keep their checksum
    add_number(static_cast<int64_t>(progress.carried_state.size()));
    for (const auto& tensor : progress.carried_state) add_tensor(tensor);
  }
  for (const double value : progress.schedule_pace) add_number(value);   // none before train.max_time sized a run
  for (const double value : progress.log_interval_sums) add_number(value);  // none where the last update was logged
  if (!contents.quantization.empty()) add_string(contents.quantization);  // likewise for float checkpoints
  if (!contents.labels_text.empty()) add_string(contents.labels_text);    // and for models without labels
  return checksum.value();
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

struct OpenCheckpoint {
  torch::serialize::InputArchive archive;
  bool has_checksums = false;
  int64_t version = 0;
};

// LibTorch reports a damaged archive, or an entry of the wrong type, with c10::Error, but also with
// std::out_of_range and others (found by fuzz_checkpoint): whatever it throws while a checkpoint is
// read becomes one Error that names the file.
template <typename Read>
auto read_checkpoint(const std::string& path, Read&& read) -> decltype(read()) {
  const auto unreadable = [&](const std::string& what) {
    return Error(str_cat("'", path, "' is not a readable checkpoint (truncated or corrupt?): ",
                         what.substr(0, what.find('\n'))));
  };
  try {
    return read();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw unreadable(e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw unreadable(e.what());
  }
}

// LibTorch 1.13 rebuilds a tensor with the sizes, strides and offset its pickle says, without
// checking them against the bytes of its storage: a damaged checkpoint gave a tensor that reached
// past its storage, or had none (found by fuzz_checkpoint). Every tensor is checked before its
// bytes are read.
void check_tensor_bytes(const torch::Tensor& tensor, const std::string& path, const std::string& name) {
  const auto corrupt = [&](const char* what) {
    return Error(str_cat("'", path, "' is corrupt: tensor '", name, "' ", what, "; ", kUseAnother));
  };
  if (!tensor.defined() || tensor.layout() != torch::kStrided || !tensor.has_storage()) throw corrupt("is not a tensor");
  if (tensor.numel() == 0) return;
  int64_t lowest = tensor.storage_offset(), highest = tensor.storage_offset();  // in elements
  for (int64_t d = 0; d < tensor.dim(); ++d) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(tensor.size(d) - 1, tensor.stride(d), &reach) ||
        __builtin_add_overflow(reach < 0 ? lowest : highest, reach, reach < 0 ? &lowest : &highest))
      throw corrupt("has sizes and strides that overflow");
  }
  const auto& storage = tensor.storage();
  const auto item_size = static_cast<int64_t>(tensor.element_size());
  if (storage.data() == nullptr || lowest < 0 || highest >= static_cast<int64_t>(storage.nbytes()) / item_size)
    throw corrupt("reaches outside its stored bytes");
}

// Reads the tensor `key` of `archive` and checks it; try_read_tensor returns false when it is absent.
bool try_read_tensor(torch::serialize::InputArchive& archive, const std::string& key, torch::Tensor& tensor,
                     const std::string& path, bool is_buffer = false) {
  if (!archive.try_read(key, tensor, is_buffer)) return false;
  check_tensor_bytes(tensor, path, key);
  return true;
}

torch::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key, const std::string& path) {
  torch::Tensor tensor;
  MIXSEQ_CHECK(try_read_tensor(archive, key, tensor, path), "'", path, "' is corrupt: it has no tensor '", key, "'; ",
               kUseAnother);
  return tensor;
}

// LibTorch does not verify the CRC-32s in the checkpoint's zip, and a damaged entry can crash its
// reader (docs/reliability.md, "Fuzzing"): every entry is checked before LibTorch opens the file.
// A checkpoint is opened several times (contents, weights, optimizer) and may be gigabytes, so a
// file is checked once per process, until its size or modification time changes.
void check_zip_integrity(const std::string& path) {
  struct Checked {
    std::uintmax_t size;
    std::filesystem::file_time_type modified;
    bool operator==(const Checked& other) const { return size == other.size && modified == other.modified; }
  };
  static std::mutex mutex;
  static std::map<std::string, Checked> checked;
  const Checked now{std::filesystem::file_size(path), std::filesystem::last_write_time(path)};
  const std::string key = std::filesystem::absolute(path).lexically_normal().string();
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = checked.find(key); it != checked.end() && it->second == now) return;
  if (const auto damage = find_zip_damage(MappedFile(path)))
    throw Error(str_cat("'", path, "' is not a readable checkpoint (truncated or corrupt?): ", *damage, "; ",
                        kUseAnother));
  checked[key] = now;
}

OpenCheckpoint open_checkpoint(const std::string& path) {
  MIXSEQ_CHECK(std::filesystem::exists(path), "checkpoint '", path, "' does not exist");
  MIXSEQ_CHECK(!std::filesystem::is_directory(path), "checkpoint '", path, "' is a directory; name a checkpoint in it, ",
               "such as ", (std::filesystem::path(path) / "checkpoint_best.pt").string());
  check_zip_integrity(path);
  OpenCheckpoint opened;
  auto& archive = opened.archive;
  archive.load_from(path, torch::kCPU);
  c10::IValue format, version;
  MIXSEQ_CHECK(archive.try_read("format", format) && format.isString() && format.toStringRef() == kFormat, "'",
               path, "' is not a mixseq checkpoint");
  archive.read("version", version);
  MIXSEQ_CHECK(version.isInt() && version.toInt() >= 1 && version.toInt() <= kCheckpointVersion, "'", path,
               "' is a version ", version, " checkpoint; this mixseq reads versions 1 to ", kCheckpointVersion);
  opened.version = version.toInt();
  opened.has_checksums = version.toInt() >= kFirstVersionWithChecksums;
  if (!opened.has_checksums) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      log_info("warning: '", path, "' is a version 1 checkpoint, written before checkpoints carried checksums: "
               "corruption in it cannot be detected");
    });
  }
  return opened;
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

uint64_t read_checksum(torch::serialize::InputArchive& archive, const std::string& key) {
  return static_cast<uint64_t>(read_int(archive, key));
}

double read_double(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue value;
  archive.read(key, value);
  return value.toDouble();
}

// name -> checksum of each model tensor, as saved.
std::map<std::string, uint64_t> read_model_checksums(torch::serialize::InputArchive& archive, const std::string& path) {
  const torch::Tensor values = read_tensor(archive, "model_checksums", path);
  const std::string names = read_string(archive, "model_checksum_names");
  std::map<std::string, uint64_t> checksums;
  size_t start = 0;
  for (int64_t i = 0; i < values.numel(); ++i) {
    const size_t end = names.find('\n', start);
    checksums[names.substr(start, end - start)] = static_cast<uint64_t>(values[i].item<int64_t>());
    start = end + 1;
  }
  return checksums;
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointContents& contents, const torch::nn::Module& model,
                     const torch::optim::Optimizer* optimizer,
                     const std::map<std::string, Int8StoredWeight>& int8_weights) {
  MIXSEQ_CHECK(int8_weights.empty() || !contents.quantization.empty(), "save_checkpoint: int8 weights need a ",
               "quantized checkpoint (a quantization plan)");
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string(kFormat)));
  archive.write("version",
                c10::IValue(int8_weights.empty() ? kVersionWithoutInt8Weights : kCheckpointVersionWithInt8Weights));
  archive.write("config_yaml", c10::IValue(contents.config_yaml));
  archive.write("vocabulary", bytes_to_tensor(contents.vocabulary_text));
  archive.write("vocabulary_fingerprint", checksum_value(contents.vocabulary_fingerprint));
  archive.write("tokenizer_kind", c10::IValue(contents.tokenizer_kind));
  archive.write("tokenizer_model", bytes_to_tensor(contents.tokenizer_model));
  if (!contents.quantization.empty()) archive.write("quantization", c10::IValue(contents.quantization));
  if (!contents.labels_text.empty()) archive.write("labels", bytes_to_tensor(contents.labels_text));
  if (!contents.source_lang.empty()) archive.write("source_lang", c10::IValue(contents.source_lang));
  if (!contents.target_lang.empty()) archive.write("target_lang", c10::IValue(contents.target_lang));

  const TrainingProgress& progress = contents.progress;
  torch::serialize::OutputArchive state;
  state.write("step", c10::IValue(progress.step));
  state.write("epoch", c10::IValue(progress.epoch));
  state.write("epoch_batches", c10::IValue(progress.epoch_batches));
  state.write("best_score", c10::IValue(progress.best_score));
  state.write("best_loss", c10::IValue(progress.best_loss));
  state.write("validations_without_improvement", c10::IValue(progress.validations_without_improvement));
  state.write("loss_scale", c10::IValue(progress.loss_scale));
  state.write("loss_scale_clean_steps", c10::IValue(progress.loss_scale_clean_steps));
  state.write("train_seconds", c10::IValue(progress.train_seconds));
  if (!progress.schedule_pace.empty())
    state.write("schedule_pace", torch::tensor(progress.schedule_pace, torch::kDouble));
  if (!progress.log_interval_sums.empty())
    state.write("log_interval_sums", torch::tensor(progress.log_interval_sums, torch::kDouble));
  if (progress.cpu_rng_state.defined()) state.write("cpu_rng_state", progress.cpu_rng_state);
  if (progress.cuda_rng_state.defined()) state.write("cuda_rng_state", progress.cuda_rng_state);
  state.write("carried_state_count", c10::IValue(static_cast<int64_t>(progress.carried_state.size())));
  for (size_t i = 0; i < progress.carried_state.size(); ++i)
    state.write("carried_state_" + std::to_string(i), progress.carried_state[i].cpu());
  archive.write("progress", state);
  archive.write("contents_checksum", checksum_value(contents_checksum(contents)));

  // One checksum per tensor, so that an error can name the damaged one.
  torch::serialize::OutputArchive weights;
  std::vector<int64_t> checksums;
  std::string names;
  const auto add = [&](const std::string& name, const torch::Tensor& tensor, bool is_buffer) {
    const auto cpu = tensor.cpu();
    weights.write(name, cpu, is_buffer);
    checksums.push_back(static_cast<int64_t>(tensor_checksum(cpu)));
    names += name + "\n";
  };
  size_t int8_written = 0;
  for (const auto& parameter : model.named_parameters()) {
    const auto int8 = int8_weights.find(parameter.key());
    if (int8 == int8_weights.end()) {
      add(parameter.key(), parameter.value(), false);
      continue;
    }
    const auto& [values, scale] = int8->second;
    MIXSEQ_CHECK(values.scalar_type() == torch::kInt8 && values.sizes() == parameter.value().sizes() &&
                     scale.scalar_type() == torch::kFloat &&
                     (scale.dim() == 0 || (scale.dim() == 1 && scale.size(0) == values.size(0))),
                 "save_checkpoint: the int8 weight '", parameter.key(), "' must be int8 ", parameter.value().sizes(),
                 " with fp32 scales [] or [", values.size(0), "]");
    add(parameter.key(), values, false);
    add(parameter.key() + kInt8ScaleSuffix, scale, false);
    ++int8_written;
  }
  MIXSEQ_CHECK(int8_written == int8_weights.size(), "save_checkpoint: ", int8_weights.size() - int8_written,
               " int8 weights name no parameter of the model");
  for (const auto& buffer : model.named_buffers()) add(buffer.key(), buffer.value(), true);
  archive.write("model", weights);
  archive.write("model_checksums", torch::tensor(checksums, torch::kLong));
  archive.write("model_checksum_names", c10::IValue(names));

  // The optimizer's own archive, kept as bytes, so that one checksum covers whatever the
  // optimizer saves (moments, step counts) without knowing its layout.
  std::string optimizer_bytes;
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_state;
    optimizer->save(optimizer_state);
    optimizer_state.save_to([&](const void* data, size_t size) -> size_t {
      optimizer_bytes.append(static_cast<const char*>(data), size);
      return size;
    });
    archive.write("optimizer_bytes", torch::from_blob(optimizer_bytes.data(),
                                                      {static_cast<int64_t>(optimizer_bytes.size())}, torch::kUInt8));
    archive.write("optimizer_checksum", checksum_value(checksum64(optimizer_bytes.data(), optimizer_bytes.size())));
  }
  save_atomically(archive, path);
}

CheckpointContents read_checkpoint_contents(const std::string& path) {
  return read_checkpoint(path, [&] {
    auto [archive, has_checksums, version] = open_checkpoint(path);
    CheckpointContents contents;
    contents.config_yaml = read_string(archive, "config_yaml");
    contents.vocabulary_text = tensor_to_bytes(read_tensor(archive, "vocabulary", path));
    contents.tokenizer_kind = read_string(archive, "tokenizer_kind");
    contents.tokenizer_model = tensor_to_bytes(read_tensor(archive, "tokenizer_model", path));
    c10::IValue quantization;  // only in quantized checkpoints
    if (archive.try_read("quantization", quantization)) {
      MIXSEQ_CHECK(quantization.isString(), "'", path, "' is corrupt: its quantization plan is not text; ", kUseAnother);
      contents.quantization = quantization.toStringRef();
    }
    torch::Tensor labels;  // only in classifiers' checkpoints
    if (try_read_tensor(archive, "labels", labels, path)) contents.labels_text = tensor_to_bytes(labels);
    const std::pair<const char*, std::string*> languages[] = {{"source_lang", &contents.source_lang},
                                                              {"target_lang", &contents.target_lang}};
    for (const auto& [key, field] : languages) {
      c10::IValue language;  // only in checkpoints of text data written since 2026-11-27
      if (!archive.try_read(key, language)) continue;
      MIXSEQ_CHECK(language.isString(), "'", path, "' is corrupt: its ", key, " is not text; ", kUseAnother);
      *field = language.toStringRef();
    }

    torch::serialize::InputArchive state;
    archive.read("progress", state);
    TrainingProgress& progress = contents.progress;
    progress.step = read_int(state, "step");
    progress.epoch = read_int(state, "epoch");
    progress.epoch_batches = read_int(state, "epoch_batches");
    progress.best_score = read_double(state, "best_score");
    progress.loss_scale = read_double(state, "loss_scale");
    progress.loss_scale_clean_steps = read_int(state, "loss_scale_clean_steps");
    c10::IValue train_seconds;  // absent from checkpoints written before train.max_time
    if (state.try_read("train_seconds", train_seconds)) progress.train_seconds = train_seconds.toDouble();
    torch::Tensor schedule_pace;  // only where train.max_time sized the run
    if (try_read_tensor(state, "schedule_pace", schedule_pace, path)) {
      MIXSEQ_CHECK(schedule_pace.scalar_type() == torch::kDouble && schedule_pace.dim() == 1 &&
                       schedule_pace.numel() == kSchedulePaceValues,
                   "'", path, "' is corrupt: its schedule_pace is not ", kSchedulePaceValues, " numbers; ", kUseAnother);
      const auto values = schedule_pace.contiguous();
      progress.schedule_pace.assign(values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
    }
    torch::Tensor interval_sums;  // only where the last update saved was not logged
    if (try_read_tensor(state, "log_interval_sums", interval_sums, path)) {
      MIXSEQ_CHECK(interval_sums.scalar_type() == torch::kDouble && interval_sums.dim() == 1 &&
                       interval_sums.numel() == kLogIntervalSums,
                   "'", path, "' is corrupt: its log_interval_sums are not ", kLogIntervalSums, " numbers; ",
                   kUseAnother);
      const auto values = interval_sums.contiguous();
      progress.log_interval_sums.assign(values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
    }
    try_read_tensor(state, "cpu_rng_state", progress.cpu_rng_state, path);
    try_read_tensor(state, "cuda_rng_state", progress.cuda_rng_state, path);
    c10::IValue carried;  // absent from checkpoints written before language models
    if (state.try_read("carried_state_count", carried)) {
      MIXSEQ_CHECK(carried.isInt() && carried.toInt() >= 0 && carried.toInt() <= kMostCarriedTensors, "'", path,
                   "' is corrupt: it claims ", carried, " carried tensors; ", kUseAnother);
      progress.carried_state.resize(static_cast<size_t>(carried.toInt()));
      for (size_t i = 0; i < progress.carried_state.size(); ++i)
        progress.carried_state[i] = read_tensor(state, "carried_state_" + std::to_string(i), path);
    }
    c10::IValue best_loss;  // absent from the first version 1 checkpoints
    if (state.try_read("best_loss", best_loss)) progress.best_loss = best_loss.toDouble();
    c10::IValue without_improvement;  // absent from checkpoints written before train.patience
    if (state.try_read("validations_without_improvement", without_improvement))
      progress.validations_without_improvement = without_improvement.toInt();
    if (!has_checksums) return contents;

    contents.vocabulary_fingerprint = read_checksum(archive, "vocabulary_fingerprint");
    MIXSEQ_CHECK(contents_checksum(contents) == read_checksum(archive, "contents_checksum"), "'", path,
                 "' is corrupt: its configuration, vocabulary, tokenizer or training progress do not match the "
                 "checksum saved with them; ", kUseAnother);
    return contents;
  });
}

std::map<std::string, torch::Tensor> load_model_weights(const std::string& path, torch::nn::Module& model,
                                                        bool accept_quantized) {
  return read_checkpoint(path, [&] {
    auto opened = open_checkpoint(path);
    auto& archive = opened.archive;
    c10::IValue quantization;
    MIXSEQ_CHECK(accept_quantized || !archive.try_read("quantization", quantization), "'", path,
                 "' is a quantized checkpoint (written by mixseq quantize): only translate, serve and bench translate "
                 "run it (alone, not in an ensemble); training, averaging and the other tools need the float "
                 "checkpoint it was quantized from");
    const bool has_checksums = opened.has_checksums;  // a lambda below uses it: no structured binding (C++17)
    torch::serialize::InputArchive weights;
    archive.read("model", weights);
    const auto checksums = has_checksums ? read_model_checksums(archive, path) : std::map<std::string, uint64_t>{};
    torch::NoGradGuard no_grad;
    const auto read_checked = [&](const std::string& name, bool is_buffer) {
      torch::Tensor saved;
      MIXSEQ_CHECK(try_read_tensor(weights, name, saved, path, is_buffer), "checkpoint '", path, "' has no ",
                   is_buffer ? "buffer" : "parameter", " '", name, "'; was it written for another architecture?");
      if (has_checksums) {
        const auto it = checksums.find(name);
        MIXSEQ_CHECK(it != checksums.end() && it->second == tensor_checksum(saved), "'", path, "' is corrupt: ",
                     is_buffer ? "buffer" : "parameter", " '", name,
                     "' does not match the checksum saved with it; ", kUseAnother);
      }
      return saved;
    };
    std::map<std::string, torch::Tensor> int8_scales;
    const auto load = [&](const std::string& name, torch::Tensor& target, bool is_buffer) {
      auto saved = read_checked(name, is_buffer);
      MIXSEQ_CHECK(saved.sizes() == target.sizes(), "checkpoint '", path, "': '", name, "' has shape ", saved.sizes(),
                   " but the model expects ", target.sizes(), "; was it trained with another config or vocabulary?");
      if (saved.scalar_type() == torch::kInt8 && target.is_floating_point()) {  // stored in 8 bits
        MIXSEQ_CHECK(opened.version >= kCheckpointVersionWithInt8Weights && target.dim() == 2, "'", path,
                     "' is corrupt: parameter '", name, "' is stored in 8 bits where this checkpoint has none; ",
                     kUseAnother);
        const auto scale = read_checked(name + kInt8ScaleSuffix, is_buffer);
        MIXSEQ_CHECK(scale.scalar_type() == torch::kFloat &&
                         (scale.dim() == 0 || (scale.dim() == 1 && scale.size(0) == saved.size(0))),
                     "'", path, "' is corrupt: the int8 scale of '", name, "' has shape ", scale.sizes(), "; ",
                     kUseAnother);
        // As quantize-dequantize computes it (nn/quantization_grid.h): (q - 0) * scale in fp32.
        saved = saved.to(torch::kFloat) * (scale.dim() == 1 ? scale.unsqueeze(1) : scale);
        int8_scales[name] = scale;
      }
      target.copy_(saved);
    };
    for (auto& parameter : model.named_parameters()) load(parameter.key(), parameter.value(), false);
    for (auto& buffer : model.named_buffers()) load(buffer.key(), buffer.value(), true);
    return int8_scales;
  });
}

bool has_optimizer_state(const std::string& path) {
  return read_checkpoint(path, [&] {
    auto [archive, has_checksums, version] = open_checkpoint(path);
    torch::Tensor bytes;
    torch::serialize::InputArchive optimizer_state;
    return has_checksums ? archive.try_read("optimizer_bytes", bytes) : archive.try_read("optimizer", optimizer_state);
  });
}

void load_optimizer_state(const std::string& path, torch::optim::Optimizer& optimizer) {
  read_checkpoint(path, [&] {
    auto [archive, has_checksums, version] = open_checkpoint(path);
    const std::string no_state = str_cat("checkpoint '", path, "' holds no optimizer state (an averaged or exported "
                                         "model?); it cannot resume training");
    torch::serialize::InputArchive optimizer_state;
    if (!has_checksums) {
      MIXSEQ_CHECK(archive.try_read("optimizer", optimizer_state), no_state);
      compat::keeping_param_group_options(optimizer, [&] { optimizer.load(optimizer_state); });
      return;
    }
    torch::Tensor bytes;
    MIXSEQ_CHECK(try_read_tensor(archive, "optimizer_bytes", bytes, path), no_state);
    bytes = bytes.contiguous();
    const auto* data = static_cast<const char*>(bytes.data_ptr());
    const auto size = static_cast<size_t>(bytes.numel());
    MIXSEQ_CHECK(checksum64(data, size) == read_checksum(archive, "optimizer_checksum"), "'", path,
                 "' is corrupt: its optimizer state does not match the checksum saved with it; ", kUseAnother,
                 " to resume");
    optimizer_state.load_from(data, size, torch::kCPU);
    compat::keeping_param_group_options(optimizer, [&] { optimizer.load(optimizer_state); });
  });
}

}  // namespace mixseq
