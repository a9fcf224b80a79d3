#include "mixseq/decode/text_to_speech.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <algorithm>
#include <numeric>

#include "mixseq/data/synthesis_batch.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/error.h"

namespace mixseq {

TextToSpeech::TextToSpeech(TrainedSpeechSynthesizer& synthesizer, const torch::Device& device, Precision precision)
    : synthesizer_(synthesizer), device_(device), precision_(precision) {}

std::vector<SynthesizedSpeech> TextToSpeech::synthesize(const std::vector<std::string>& texts,
                                                        const SynthesizeOptions& options,
                                                        const std::vector<std::string>& names) const {
  MIXSEQ_CHECK(names.empty() || names.size() == texts.size(), "synthesize: ", names.size(), " names for ",
               texts.size(), " texts");
  MIXSEQ_CHECK(options.max_utterances >= 1 && options.max_steps >= 0 && options.gate_threshold >= 0 &&
                   options.gate_threshold < 1,
               "synthesize: max_utterances must be >= 1, max_steps >= 0 and gate_threshold in [0, 1)");
  std::vector<std::vector<int64_t>> ids;
  ids.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    ids.push_back(synthesis_symbol_ids(texts[i], names.empty() ? str_cat("text ", i + 1) : names[i]));

  const Tacotron2Config& model_config = synthesizer_.config.tacotron2;
  SynthesisOptions inference;
  inference.max_steps = options.max_steps > 0 ? options.max_steps : model_config.max_decoder_steps;
  inference.gate_threshold = options.gate_threshold > 0 ? options.gate_threshold : model_config.gate_threshold;

  std::vector<size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });

  torch::NoGradGuard no_grad;
  torch::manual_seed(options.seed);
  at::Generator phase = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  std::vector<SynthesizedSpeech> results(texts.size());
  for (size_t first = 0; first < order.size(); first += static_cast<size_t>(options.max_utterances)) {
    const size_t last = std::min(order.size(), first + static_cast<size_t>(options.max_utterances));
    const auto B = static_cast<int64_t>(last - first);
    int64_t longest = 0;
    for (size_t k = first; k < last; ++k) longest = std::max(longest, static_cast<int64_t>(ids[order[k]].size()));
    auto text = torch::zeros({B, longest}, torch::kLong);
    auto lengths = torch::zeros({B}, torch::kLong);
    for (size_t k = first; k < last; ++k) {
      const auto& row = ids[order[k]];
      const auto b = static_cast<int64_t>(k - first);
      text[b].narrow(0, 0, static_cast<int64_t>(row.size()))
          .copy_(torch::tensor(row, torch::kLong));
      lengths[b] = static_cast<int64_t>(row.size());
    }
    Synthesis synthesis;
    {
      const AutocastScope autocast(precision_, device_);
      synthesis = synthesizer_.model->infer(text.to(device_), lengths.to(device_), inference);
    }
    const auto frames = synthesis.frames.to(torch::kCPU, torch::kFloat);          // [B, F, T]
    const auto alignments = synthesis.alignments.to(torch::kCPU, torch::kFloat);  // [B, T, S]
    const auto kept = synthesis.lengths.to(torch::kCPU);
    for (int64_t b = 0; b < B; ++b) {
      SynthesizedSpeech& out = results[order[first + static_cast<size_t>(b)]];
      const int64_t steps = kept[b].item<int64_t>();
      out.stopped = steps < frames.size(2);  // the gate fired at step `steps`
      out.frames = std::max<int64_t>(1, std::min(steps, frames.size(2)));
      out.alignment = alignments[b].narrow(0, 0, out.frames).narrow(1, 0, lengths[b].item<int64_t>()).contiguous();
      out.samples = synthesis_frames_to_audio(frames[b].narrow(1, 0, out.frames).t(), synthesizer_.input,
                                              options.griffin_lim, phase);
      for (float& x : out.samples) x = std::clamp(x, -1.0f, 1.0f);
    }
  }
  return results;
}

}  // namespace mixseq
