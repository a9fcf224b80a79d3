#include "mixseq/models/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <ATen/ATen.h>
#include <zlib.h>

#include "mixseq/util/error.h"
#include "test_support.h"
#include "util/torch_compat.h"

namespace mixseq {
namespace {

using test::error_of;


CheckpointContents sample_contents() {
  CheckpointContents contents;
  contents.config_yaml = "model:\n  arch: gnmt\n";
  contents.vocabulary_text = "<pad> 0\n<unk> 0\n\xC3\xBC 3\n";
  contents.vocabulary_fingerprint = 0x0123456789ABCDEFull;
  contents.tokenizer_kind = "bpe";
  contents.tokenizer_model = std::string("#version: 0.2\na b\n\0binary", 23);
  contents.progress.step = 1234;
  contents.progress.epoch = 3;
  contents.progress.epoch_batches = 17;
  contents.progress.best_score = 27.5;
  contents.progress.validations_without_improvement = 2;
  contents.progress.loss_scale = 4096;
  contents.progress.loss_scale_clean_steps = 77;
  contents.progress.cpu_rng_state = at::detail::getDefaultCPUGenerator().get_state();
  return contents;
}

uint32_t load_u32(const std::string& bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}
uint64_t load_u16(const std::string& bytes, size_t at) {
  return static_cast<unsigned char>(bytes[at]) | (static_cast<unsigned char>(bytes[at + 1]) << 8);
}
void store_u32(std::string& bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(value >> (8 * i));
}

// Rewrites the zip CRC-32 of every stored entry to match its bytes: damage that slips past the
// zip's own check, to show what mixseq's checksums catch behind it. (A small checkpoint: no zip64.)
void reseal_zip(const std::string& path) {
  std::string bytes = test::read_file(path);
  const size_t end = bytes.rfind("PK\x05\x06");
  ASSERT_NE(end, std::string::npos);
  size_t entry = load_u32(bytes, end + 16);
  for (uint64_t i = 0, count = load_u16(bytes, end + 10); i < count; ++i) {
    ASSERT_EQ(load_u32(bytes, entry), 0x02014b50u);
    const size_t local = load_u32(bytes, entry + 42), size = load_u32(bytes, entry + 24);
    const size_t data = local + 30 + load_u16(bytes, local + 26) + load_u16(bytes, local + 28);
    if (load_u16(bytes, entry + 10) == 0) {  // stored
      const uint32_t old_crc = load_u32(bytes, entry + 16);
      const auto crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data() + data), size));
      store_u32(bytes, entry + 16, crc);
      if (load_u32(bytes, local + 14) == old_crc) store_u32(bytes, local + 14, crc);
      const size_t descriptor = data + size + (load_u32(bytes, data + size) == 0x08074b50 ? 4 : 0);
      if (load_u32(bytes, descriptor) == old_crc) store_u32(bytes, descriptor, crc);
    }
    entry += 46 + load_u16(bytes, entry + 28) + load_u16(bytes, entry + 30) + load_u16(bytes, entry + 32);
  }
  test::write_file(path, bytes);
}

TEST(Checkpoint, QuantizedCheckpointKeepsItsPlanAndOnlyPlanAwareLoadersAcceptIt) {
  test::TempDir dir;
  const auto float_path = dir.path("float.pt"), quantized_path = dir.path("int8.pt");
  torch::nn::Linear model(3, 2);
  save_checkpoint(float_path, sample_contents(), *model, nullptr);
  auto contents = sample_contents();
  contents.quantization = "{\"mode\": \"int8\", \"layers\": []}";
  save_checkpoint(quantized_path, contents, *model, nullptr);

  EXPECT_EQ(read_checkpoint_contents(float_path).quantization, "");
  EXPECT_EQ(read_checkpoint_contents(quantized_path).quantization, contents.quantization);
  torch::nn::Linear restored(3, 2);
  EXPECT_NE(error_of([&] { load_model_weights(quantized_path, *restored); })
                .find("is a quantized checkpoint (written by mixseq quantize)"),
            std::string::npos);
  load_model_weights(quantized_path, *restored, /*accept_quantized=*/true);
  EXPECT_TRUE(restored->weight.equal(model->weight));
  load_model_weights(float_path, *restored);  // a float checkpoint loads either way
}

TEST(Checkpoint, LanguagesRoundTripAndAreEmptyWhereNotWritten) {
  test::TempDir dir;
  torch::nn::Linear model(3, 2);
  auto contents = sample_contents();
  contents.source_lang = "en";
  contents.target_lang = "de";
  save_checkpoint(dir.path("pair.pt"), contents, *model, nullptr);
  contents.target_lang = "";  // a language model's monolingual text
  save_checkpoint(dir.path("mono.pt"), contents, *model, nullptr);
  save_checkpoint(dir.path("none.pt"), sample_contents(), *model, nullptr);  // speech, or an older checkpoint

  const auto pair = read_checkpoint_contents(dir.path("pair.pt"));
  EXPECT_EQ(pair.source_lang, "en");
  EXPECT_EQ(pair.target_lang, "de");
  const auto mono = read_checkpoint_contents(dir.path("mono.pt"));
  EXPECT_EQ(mono.source_lang, "en");
  EXPECT_EQ(mono.target_lang, "");
  const auto none = read_checkpoint_contents(dir.path("none.pt"));
  EXPECT_EQ(none.source_lang, "");
  EXPECT_EQ(none.target_lang, "");
}

TEST(Checkpoint, RoundTripsContentsWeightsAndOptimizer) {
  test::TempDir dir;
  const auto path = dir.path("run/checkpoint_last.pt");
  torch::manual_seed(0);
  torch::nn::Linear model(3, 2);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  model->forward(torch::randn({4, 3})).sum().backward();
  optimizer.step();
  save_checkpoint(path, sample_contents(), *model, &optimizer);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  const auto contents = read_checkpoint_contents(path);
  EXPECT_EQ(contents.config_yaml, sample_contents().config_yaml);
  EXPECT_EQ(contents.vocabulary_text, sample_contents().vocabulary_text);
  EXPECT_EQ(contents.tokenizer_model, sample_contents().tokenizer_model);  // bytes survive, NUL included
  EXPECT_EQ(contents.vocabulary_fingerprint, 0x0123456789ABCDEFull);
  EXPECT_EQ(contents.progress.step, 1234);
  EXPECT_EQ(contents.progress.epoch_batches, 17);
  EXPECT_DOUBLE_EQ(contents.progress.best_score, 27.5);
  EXPECT_EQ(contents.progress.validations_without_improvement, 2);
  EXPECT_EQ(contents.progress.loss_scale_clean_steps, 77);
  EXPECT_TRUE(contents.progress.cpu_rng_state.equal(sample_contents().progress.cpu_rng_state));
  EXPECT_FALSE(contents.progress.cuda_rng_state.defined());

  torch::nn::Linear restored(3, 2);
  load_model_weights(path, *restored);
  EXPECT_TRUE(restored->weight.equal(model->weight));
  EXPECT_TRUE(restored->bias.equal(model->bias));

  // The restored optimizer continues exactly like the original.
  torch::optim::Adam restored_optimizer(restored->parameters(), torch::optim::AdamOptions(1e-3));
  load_optimizer_state(path, restored_optimizer);
  const auto input = torch::randn({4, 3});
  for (auto* pair : {&model, &restored}) {
    (*pair)->zero_grad();
    (*pair)->forward(input).sum().backward();
  }
  optimizer.step();
  restored_optimizer.step();
  EXPECT_TRUE(restored->weight.equal(model->weight));
}

// A resume takes the optimizer's moments from the checkpoint and its options from the run's
// configuration: LibTorch after 1.13 copies the saved options over the built ones
// (torch/optim/serialize.h), which compat::keeping_param_group_options undoes.
TEST(Checkpoint, ResumedOptimizerKeepsTheOptionsItWasBuiltWith) {
  test::TempDir dir;
  const auto path = dir.path("checkpoint_last.pt");
  torch::manual_seed(3);
  torch::nn::Linear model(3, 2);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3).betas({0.9, 0.98}));
  model->forward(torch::randn({4, 3})).sum().backward();
  optimizer.step();
  save_checkpoint(path, sample_contents(), *model, &optimizer);

  torch::optim::Adam resumed(model->parameters(),
                             torch::optim::AdamOptions(5e-4).betas({0.8, 0.9}).weight_decay(0.01).amsgrad(true));
  load_optimizer_state(path, resumed);
  const auto& options = static_cast<const torch::optim::AdamOptions&>(resumed.param_groups()[0].options());
  EXPECT_EQ(options.lr(), 5e-4);
  EXPECT_EQ(options.betas(), std::make_tuple(0.8, 0.9));
  EXPECT_EQ(options.weight_decay(), 0.01);
  EXPECT_TRUE(options.amsgrad());
  const auto key = compat::optimizer_state_key(resumed.state(), model->weight);
  const auto& saved = static_cast<const torch::optim::AdamParamState&>(
      *optimizer.state().at(compat::optimizer_state_key(optimizer.state(), model->weight)));
  const auto& loaded = static_cast<const torch::optim::AdamParamState&>(*resumed.state().at(key));
  EXPECT_TRUE(loaded.exp_avg().equal(saved.exp_avg()));
  EXPECT_TRUE(loaded.exp_avg_sq().equal(saved.exp_avg_sq()));
  EXPECT_EQ(loaded.step(), 1);
}

TEST(Checkpoint, CarriedStateRoundTripsAndIsChecksummed) {
  test::TempDir dir;
  const auto path = dir.path("checkpoint_last.pt");
  torch::manual_seed(2);
  torch::nn::Linear model(3, 2);
  auto contents = sample_contents();
  contents.progress.carried_state = {torch::randn({4, 5, 3}), torch::randn({4, 5, 3}) * 1000};  // a memory per layer
  save_checkpoint(path, contents, *model, nullptr);
  const auto restored = read_checkpoint_contents(path).progress.carried_state;
  ASSERT_EQ(restored.size(), 2u);
  EXPECT_TRUE(restored[0].equal(contents.progress.carried_state[0]));
  EXPECT_TRUE(restored[1].equal(contents.progress.carried_state[1]));

  std::string bytes = test::read_file(path);
  const auto raw = contents.progress.carried_state[1].contiguous();
  const auto at = bytes.find(std::string(static_cast<const char*>(raw.data_ptr()), raw.nbytes()));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 17] ^= 0x10;
  test::write_file(path, bytes);
  EXPECT_NE(error_of([&] { read_checkpoint_contents(path); }).find("does not match its CRC-32"), std::string::npos);
  reseal_zip(path);  // past the zip's CRCs, mixseq's own checksum still sees it
  EXPECT_NE(error_of([&] { read_checkpoint_contents(path); }).find("is corrupt"), std::string::npos);

  // Without carried state the file holds none back (translation checkpoints).
  save_checkpoint(path, sample_contents(), *model, nullptr);
  EXPECT_TRUE(read_checkpoint_contents(path).progress.carried_state.empty());
}

// A bit flipped inside the stored copy of `values` (a progress field saved as a double tensor) of
// the checkpoint at `path`, past the zip's CRCs: mixseq's own checksum calls the file corrupt.
void expect_flipped_bit_is_caught(const std::string& path, const std::vector<double>& values) {
  std::string bytes = test::read_file(path);
  const auto raw = torch::tensor(values, torch::kDouble);
  const auto at = bytes.find(std::string(static_cast<const char*>(raw.data_ptr()), raw.nbytes()));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 9] ^= 0x01;
  test::write_file(path, bytes);
  reseal_zip(path);
  EXPECT_NE(error_of([&] { read_checkpoint_contents(path); }).find("is corrupt"), std::string::npos);
}

TEST(Checkpoint, SchedulePaceRoundTripsIsChecksummedAndMustHoldFiveNumbers) {
  test::TempDir dir;
  const auto path = dir.path("checkpoint_last.pt");
  torch::nn::Linear model(3, 2);
  auto contents = sample_contents();
  contents.progress.schedule_pace = {5000, 1200, 1187.25, 0.8125, 4600};  // train/run_schedule.h's sizing
  save_checkpoint(path, contents, *model, nullptr);
  EXPECT_EQ(read_checkpoint_contents(path).progress.schedule_pace, contents.progress.schedule_pace);

  expect_flipped_bit_is_caught(path, contents.progress.schedule_pace);

  contents.progress.schedule_pace = {1, 2, 3};
  save_checkpoint(path, contents, *model, nullptr);
  EXPECT_NE(error_of([&] { read_checkpoint_contents(path); }).find("schedule_pace is not 5 numbers"), std::string::npos);

  // A run that max_time never sized stores none (and older checkpoints have none).
  save_checkpoint(path, sample_contents(), *model, nullptr);
  EXPECT_TRUE(read_checkpoint_contents(path).progress.schedule_pace.empty());
}

TEST(Checkpoint, LogIntervalSumsRoundTripAreChecksummedAndMustHoldSevenNumbers) {
  test::TempDir dir;
  const auto path = dir.path("checkpoint_last.pt");
  torch::nn::Linear model(3, 2);
  auto contents = sample_contents();
  contents.progress.log_interval_sums = {812.5, 640.25, 321, 297, 3, 1, 4.75};  // the train log's, 3 updates in
  save_checkpoint(path, contents, *model, nullptr);
  EXPECT_EQ(read_checkpoint_contents(path).progress.log_interval_sums, contents.progress.log_interval_sums);

  expect_flipped_bit_is_caught(path, contents.progress.log_interval_sums);

  contents.progress.log_interval_sums = {1, 2};
  save_checkpoint(path, contents, *model, nullptr);
  EXPECT_NE(error_of([&] { read_checkpoint_contents(path); }).find("log_interval_sums are not 7 numbers"),
            std::string::npos);

  // Saved right after a log line there is nothing to carry (and older checkpoints have none).
  save_checkpoint(path, sample_contents(), *model, nullptr);
  EXPECT_TRUE(read_checkpoint_contents(path).progress.log_interval_sums.empty());
}

// The bytes of `tensor` as they lie in a checkpoint file (tensors are stored uncompressed).
std::string raw_bytes(const torch::Tensor& tensor) {
  const auto contiguous = tensor.detach().contiguous();
  return std::string(static_cast<const char*>(contiguous.data_ptr()), contiguous.nbytes());
}

// Flips one bit inside the first occurrence of `needle` in the file, which must hold it once.
// The zip CRC-32s then catch it (docs/reliability.md): `reseal` rewrites them, for mixseq's own checks.
enum class Reseal { kNo, kYes };
void flip_bit_inside(const std::string& path, const std::string& needle, Reseal reseal) {
  std::string bytes = test::read_file(path);
  const auto at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(needle, at + 1), std::string::npos) << "ambiguous";
  bytes[at + needle.size() / 2] ^= 0x10;
  test::write_file(path, bytes);
  if (reseal == Reseal::kYes) reseal_zip(path);
}

struct TrainedLinear {
  torch::nn::Linear model{3, 2};
  torch::optim::Adam optimizer{model->parameters(), torch::optim::AdamOptions(1e-3)};
  TrainedLinear() {
    model->forward(torch::randn({4, 3})).sum().backward();
    optimizer.step();
  }
};

// Adam's first moment of the 2x3 weight.
torch::Tensor first_moment(torch::optim::Adam& optimizer) {
  for (const auto& [key, state] : optimizer.state()) {
    const auto& adam = static_cast<const torch::optim::AdamParamState&>(*state);
    if (adam.exp_avg().numel() == 6) return adam.exp_avg();
  }
  ADD_FAILURE() << "no moment of 6 elements";
  return {};
}

TEST(Checkpoint, ZipCrcsCatchAFlippedBitInEachPart) {
  test::TempDir dir;
  torch::manual_seed(1);
  TrainedLinear trained;
  const auto path = dir.path("checkpoint_last.pt");
  for (const std::string& part : {raw_bytes(trained.model->weight), raw_bytes(first_moment(trained.optimizer)),
                                  std::string("arch: gnmt")}) {
    save_checkpoint(path, sample_contents(), *trained.model, &trained.optimizer);
    flip_bit_inside(path, part, Reseal::kNo);
    const auto error = error_of([&] { read_checkpoint_contents(path); });
    EXPECT_NE(error.find("checkpoint_last.pt' is not a readable checkpoint (truncated or corrupt?): entry '"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("' does not match its CRC-32; use another checkpoint"), std::string::npos) << error;
  }
}

TEST(Checkpoint, ChecksumsBehindTheZipCrcsNameTheDamagedPart) {
  test::TempDir dir;
  torch::manual_seed(1);
  TrainedLinear trained;
  const auto path = dir.path("checkpoint_last.pt");
  const auto save = [&] { save_checkpoint(path, sample_contents(), *trained.model, &trained.optimizer); };

  save();
  flip_bit_inside(path, raw_bytes(trained.model->weight), Reseal::kYes);
  torch::nn::Linear restored(3, 2);
  const auto weights = error_of([&] { load_model_weights(path, *restored); });
  EXPECT_NE(weights.find("checkpoint_last.pt' is corrupt: parameter 'weight' does not match the checksum"),
            std::string::npos)
      << weights;
  EXPECT_NO_THROW(read_checkpoint_contents(path));  // the other parts are intact

  save();
  const torch::Tensor moment = first_moment(trained.optimizer);
  flip_bit_inside(path, raw_bytes(moment), Reseal::kYes);
  torch::optim::Adam optimizer(restored->parameters(), torch::optim::AdamOptions(1e-3));
  const auto state = error_of([&] { load_optimizer_state(path, optimizer); });
  EXPECT_NE(state.find("checkpoint_last.pt' is corrupt: its optimizer state does not match"), std::string::npos)
      << state;
  EXPECT_NO_THROW(load_model_weights(path, *restored));

  save();
  flip_bit_inside(path, "arch: gnmt", Reseal::kYes);
  const auto contents = error_of([&] { read_checkpoint_contents(path); });
  EXPECT_NE(contents.find("checkpoint_last.pt' is corrupt: its configuration"), std::string::npos) << contents;
}

// What save_checkpoint wrote before checksums: such files must still load, optimizer included.
void save_version_1(const std::string& path, const CheckpointContents& contents, const torch::nn::Module& model,
                    const torch::optim::Optimizer& optimizer) {
  const auto bytes = [](const std::string& text) {
    return torch::from_blob(const_cast<char*>(text.data()), {static_cast<int64_t>(text.size())}, torch::kUInt8).clone();
  };
  torch::serialize::OutputArchive archive, state, weights, optimizer_state;
  archive.write("format", c10::IValue(std::string("mixseq-checkpoint")));
  archive.write("version", c10::IValue(int64_t{1}));
  archive.write("config_yaml", c10::IValue(contents.config_yaml));
  archive.write("vocabulary", bytes(contents.vocabulary_text));
  archive.write("tokenizer_kind", c10::IValue(contents.tokenizer_kind));
  archive.write("tokenizer_model", bytes(contents.tokenizer_model));
  state.write("step", c10::IValue(contents.progress.step));
  state.write("epoch", c10::IValue(contents.progress.epoch));
  state.write("epoch_batches", c10::IValue(contents.progress.epoch_batches));
  state.write("best_score", c10::IValue(contents.progress.best_score));
  state.write("loss_scale", c10::IValue(contents.progress.loss_scale));
  state.write("loss_scale_clean_steps", c10::IValue(contents.progress.loss_scale_clean_steps));
  archive.write("progress", state);
  for (const auto& parameter : model.named_parameters()) weights.write(parameter.key(), parameter.value());
  archive.write("model", weights);
  optimizer.save(optimizer_state);
  archive.write("optimizer", optimizer_state);
  archive.save_to(path);
}

TEST(Checkpoint, Version1CheckpointsWithoutChecksumsStillLoad) {
  test::TempDir dir;
  torch::manual_seed(2);
  TrainedLinear trained;
  const auto path = dir.path("old.pt");
  save_version_1(path, sample_contents(), *trained.model, trained.optimizer);

  const auto contents = read_checkpoint_contents(path);
  EXPECT_EQ(contents.progress.step, 1234);
  EXPECT_EQ(contents.vocabulary_fingerprint, 0u);  // unknown
  EXPECT_DOUBLE_EQ(contents.progress.best_loss, -1);
  torch::nn::Linear restored(3, 2);
  load_model_weights(path, *restored);
  EXPECT_TRUE(restored->weight.equal(trained.model->weight));
  EXPECT_TRUE(has_optimizer_state(path));
  torch::optim::Adam optimizer(restored->parameters(), torch::optim::AdamOptions(1e-3));
  EXPECT_NO_THROW(load_optimizer_state(path, optimizer));
}

TEST(Checkpoint, ReportsBadFilesByName) {
  test::TempDir dir;
  torch::nn::Linear model(3, 2);
  const auto path = dir.path("c.pt");
  save_checkpoint(path, sample_contents(), *model, nullptr);

  const std::string bytes = test::read_file(path);
  test::write_file(dir.path("truncated.pt"), bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(error_of([&] { read_checkpoint_contents(dir.path("truncated.pt")); }).find("truncated or corrupt"),
            std::string::npos);
  test::write_file(dir.path("text.pt"), "hello");
  EXPECT_NE(error_of([&] { read_checkpoint_contents(dir.path("text.pt")); }).find("text.pt"), std::string::npos);
  EXPECT_NE(error_of([&] { read_checkpoint_contents(dir.path("none.pt")); }).find("does not exist"),
            std::string::npos);
  // `translate -c runs/x` (the run folder) said "not a readable checkpoint (truncated or corrupt?)".
  EXPECT_EQ(error_of([&] { read_checkpoint_contents(dir.root().string()); }),
            "checkpoint '" + dir.root().string() + "' is a directory; name a checkpoint in it, such as " +
                dir.path("checkpoint_best.pt"));

  torch::nn::Linear wider(3, 5);
  const auto shape = error_of([&] { load_model_weights(path, *wider); });
  EXPECT_NE(shape.find("'weight' has shape [2, 3] but the model expects [5, 3]"), std::string::npos) << shape;

  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  EXPECT_NE(error_of([&] { load_optimizer_state(path, optimizer); }).find("no optimizer state"), std::string::npos);
}

// LibTorch rebuilds a tensor with the sizes its pickle gives, whatever its storage holds: a damaged
// checkpoint handed the reader a tensor reaching past its bytes (fuzz_checkpoint;
// tests/fuzz/corpus/checkpoint/crash_tensor_outside_storage). It is an error naming the tensor.
TEST(Checkpoint, TensorsReachingOutsideTheirBytesAreErrors) {
  test::TempDir dir;
  auto vocabulary = torch::zeros({6}, torch::kUInt8);
  vocabulary.unsafeGetTensorImpl()->set_sizes_contiguous({100});  // 100 bytes claimed, 6 stored
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string("mixseq-checkpoint")));
  archive.write("version", c10::IValue(int64_t{2}));
  archive.write("config_yaml", c10::IValue(std::string("model: {}\n")));
  archive.write("vocabulary", vocabulary);
  const auto path = dir.path("beyond.pt");
  archive.save_to(path);
  const auto error = error_of([&] { read_checkpoint_contents(path); });
  EXPECT_EQ(error, "'" + path + "' is corrupt: tensor 'vocabulary' reaches outside its stored bytes; use another " +
                       "checkpoint (checkpoint_best.pt, checkpoint_last.pt or a numbered one)");
}

// A quantized checkpoint may store weights in 8 bits: they load as scale * value with their
// scales returned, are checksummed like every tensor, and make the file a version 3 one.
TEST(Checkpoint, Int8WeightsRoundTripDequantizedAndAreChecksummed) {
  test::TempDir dir;
  const auto path = dir.path("int8.pt");
  torch::manual_seed(4);
  torch::nn::Linear model(64, 32);
  auto contents = sample_contents();
  contents.quantization = "{\"mode\": \"int8\", \"layers\": []}";
  const auto scale = at::rand({32}) * 0.01 + 0.001;
  const auto values = at::randint(-127, 128, {32, 64}).to(at::kChar);
  EXPECT_NE(error_of([&] { save_checkpoint(path, sample_contents(), *model, nullptr, {{"weight", {values, scale}}}); })
                .find("int8 weights need a quantized checkpoint"),
            std::string::npos);
  save_checkpoint(path, contents, *model, nullptr, {{"weight", {values, scale}}});

  torch::nn::Linear restored(64, 32);
  const auto scales = load_model_weights(path, *restored, /*accept_quantized=*/true);
  ASSERT_EQ(scales.size(), 1u);
  EXPECT_TRUE(scales.at("weight").equal(scale));
  EXPECT_TRUE(restored->weight.equal(values.to(at::kFloat) * scale.unsqueeze(1)));
  EXPECT_TRUE(restored->bias.equal(model->bias));  // the bias stays fp32
  EXPECT_NE(test::read_file(path).find(raw_bytes(values)), std::string::npos) << "stored as int8 bytes";
  // Version 3: an older mixseq refuses it by its version rather than reading integers as weights.
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  c10::IValue version;
  archive.read("version", version);
  EXPECT_EQ(version.toInt(), kCheckpointVersionWithInt8Weights);

  flip_bit_inside(path, raw_bytes(values), Reseal::kNo);
  const auto zip = error_of([&] { load_model_weights(path, *restored, true); });
  EXPECT_NE(zip.find("'" + path + "' is not a readable checkpoint"), std::string::npos) << zip;
  save_checkpoint(path, contents, *model, nullptr, {{"weight", {values, scale}}});
  flip_bit_inside(path, raw_bytes(scale), Reseal::kYes);
  EXPECT_EQ(error_of([&] { load_model_weights(path, *restored, true); }),
            "'" + path + "' is corrupt: parameter 'weight.int8_scale' does not match the checksum saved with it; use "
            "another checkpoint (checkpoint_best.pt, checkpoint_last.pt or a numbered one)");
  save_checkpoint(path, contents, *model, nullptr, {{"weight", {values, scale}}});
  flip_bit_inside(path, raw_bytes(values), Reseal::kYes);
  EXPECT_NE(error_of([&] { load_model_weights(path, *restored, true); })
                .find("is corrupt: parameter 'weight' does not match the checksum"),
            std::string::npos);
}

// An archive LibTorch can open but without mixseq's entries, or with an entry of another type, let
// LibTorch's c10::Error and std::out_of_range escape the reader (fuzz_checkpoint; the inputs it
// found are in tests/fuzz/corpus/checkpoint): each is now an Error naming the file.
TEST(Checkpoint, MissingOrMistypedEntriesAreErrorsNamingTheFile) {
  test::TempDir dir;
  const auto write_archive = [&](const std::string& name, const c10::IValue& config_yaml) {
    torch::serialize::OutputArchive archive;
    archive.write("format", c10::IValue(std::string("mixseq-checkpoint")));
    archive.write("version", c10::IValue(int64_t{2}));
    if (!config_yaml.isNone()) archive.write("config_yaml", config_yaml);
    archive.save_to(dir.path(name));
    return dir.path(name);
  };
  torch::nn::Linear model(3, 2);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  for (const auto& path : {write_archive("bare.pt", c10::IValue()), write_archive("mistyped.pt", c10::IValue(int64_t{7}))}) {
    const std::string unreadable = "'" + path + "' is not a readable checkpoint";
    EXPECT_NE(error_of([&] { read_checkpoint_contents(path); }).find(unreadable), std::string::npos);
    EXPECT_NE(error_of([&] { load_model_weights(path, *model); }).find(unreadable), std::string::npos);
    EXPECT_NE(error_of([&] { load_optimizer_state(path, optimizer); }).find(path), std::string::npos);
  }
}

// Damaged checkpoints that crashed (two SEGVs), exhausted (a 4 GB allocation) or overran
// (a tensor read from another entry's shorter bytes) LibTorch's own reader, found by
// fuzz_checkpoint: the zip check stops each before LibTorch parses it.
TEST(Checkpoint, ArchivesThatCrashedLibTorchAreErrorsNamingTheEntry) {
  const std::string corpus = std::string(MIXSEQ_TEST_DATA_DIR) + "/../fuzz/corpus/checkpoint/";
  const std::pair<const char*, const char*> cases[] = {
      {"crash_damaged_pickle_oom", "does not match its CRC-32"},
      {"crash_damaged_source_highlight", "does not match its CRC-32"},
      {"crash_damaged_torchscript_entry", "does not match its CRC-32"},
      {"crash_duplicate_entry_name", "has a local header that names another entry"}};
  for (const auto& [name, damage] : cases) {
    const std::string path = corpus + name;
    const auto contents = error_of([&] { read_checkpoint_contents(path); });
    EXPECT_NE(contents.find(name + std::string("' is not a readable checkpoint (truncated or corrupt?): entry 'archive/")),
              std::string::npos)
        << contents;
    EXPECT_NE(contents.find(damage), std::string::npos) << contents;
    torch::nn::Linear model(3, 2);
    EXPECT_NE(error_of([&] { load_model_weights(path, *model); }).find(damage), std::string::npos);
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
    EXPECT_NE(error_of([&] { load_optimizer_state(path, optimizer); }).find(damage), std::string::npos);
  }
}

}  // namespace
}  // namespace mixseq
