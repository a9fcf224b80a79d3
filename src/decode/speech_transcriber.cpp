#include "mixseq/decode/speech_transcriber.h"

#include <torch/utils.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "mixseq/data/speech_batch.h"
#include "mixseq/util/error.h"
#include "mixseq/util/threads.h"
#include "mixseq/util/worker_threads.h"

namespace mixseq {

SpeechTranscriber::SpeechTranscriber(TrainedSpeechRecognizer& recognizer, const torch::Device& device,
                                     Precision precision)
    : recognizer_(recognizer), device_(device), precision_(precision) {}

std::vector<Transcript> SpeechTranscriber::transcribe(const std::vector<std::vector<float>>& audio,
                                                      const TranscribeOptions& options) const {
  std::vector<Transcript> transcripts(audio.size());
  if (audio.empty()) return transcripts;
  std::vector<size_t> order(audio.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return audio[a].size() > audio[b].size(); });
  const SpeechFeatureOptions features = recognizer_.input.feature_options();
  const double hop_seconds = recognizer_.input.hop_ms / 1000.0;
  const bool greedy = options.beam.beam_size == 1 && !options.beam.language_model;
  if (!greedy) check_ctc_beam_search_options(options.beam, recognizer_.symbols);
  const bool rescoring = options.rescoring.language_model != nullptr;
  MIXSEQ_CHECK(!rescoring || !greedy, "n-best rescoring re-ranks the beam search's n-best: it needs a beam_size "
               "above 1 (or an n-gram language model), not greedy decoding");

  // Batches over `order`, longest first: the first utterance of a batch sets its padded length.
  const int threads = device_.is_cpu() ? adapt_threads_to_load() : 1;
  const int wanted_workers =
      device_.is_cpu() ? worker_count(options.workers, threads, static_cast<int64_t>(audio.size())) : 1;
  int64_t max_frames = options.max_frames;
  if (wanted_workers > 1) {  // a batch for every worker: smaller batches lose less than an idle core
    int64_t total = 0;
    for (const auto& samples : audio) total += features.frames(static_cast<int64_t>(samples.size()));
    max_frames = std::min(max_frames, (total + wanted_workers - 1) / wanted_workers);
  }
  std::vector<std::pair<size_t, size_t>> batches;  // [begin, end) in `order`
  for (size_t begin = 0; begin < order.size();) {
    const int64_t longest = features.frames(static_cast<int64_t>(audio[order[begin]].size()));
    size_t end = begin + 1;
    while (end < order.size() && static_cast<int64_t>(end - begin + 1) * longest <= max_frames) ++end;
    batches.emplace_back(begin, end);
    begin = end;
  }

  std::vector<std::vector<CtcScoredHypothesis>> searches(greedy ? 0 : audio.size());  // beam search: by utterance
  std::vector<double> frame_seconds(audio.size());                                    // beam search: by utterance
  const auto decode_batch = [&](int64_t index) {
    const auto [begin, end] = batches[static_cast<size_t>(index)];
    torch::NoGradGuard no_grad;  // grad mode is per thread: each worker sets its own
    std::vector<std::vector<float>> batch_audio;
    for (size_t k = begin; k < end; ++k) batch_audio.push_back(audio[order[k]]);
    const SpeechBatch batch = make_speech_batch(batch_audio, recognizer_.input, nullptr);
    if (device_.is_cpu()) adapt_threads_to_load();  // docs/threads.md; a worker's count stays fixed
    CtcOutput output;
    {
      const AutocastScope autocast(precision_, device_);
      output = recognizer_.model->forward(batch.features.to(device_), batch.lengths.to(device_));
    }
    // One output frame's duration, from each utterance's own input and output lengths (not the padded
    // batch's), so that word times do not depend on what the utterance was batched with.
    const auto in_frames = batch.lengths.to(torch::kCPU, torch::kLong);
    const auto out_frames = output.lengths.to(torch::kCPU, torch::kLong);
    const auto frame_seconds_of = [&](size_t b) {
      const auto index = static_cast<int64_t>(b);
      return hop_seconds * static_cast<double>(in_frames[index].item<int64_t>()) /
             static_cast<double>(std::max<int64_t>(1, out_frames[index].item<int64_t>()));
    };
    if (greedy) {
      const auto hypotheses = ctc_greedy_decode(output.logits.to(torch::kFloat), output.lengths);
      for (size_t k = begin; k < end; ++k) {
        const auto& hypothesis = hypotheses[k - begin];
        Transcript& t = transcripts[order[k]];
        t.text = recognizer_.symbols.decode(hypothesis.symbols);
        t.words = ctc_words(hypothesis, recognizer_.symbols, frame_seconds_of(k - begin));
      }
    } else {
      auto searched = ctc_beam_search(output.logits, output.lengths, recognizer_.symbols, options.beam);
      for (size_t k = begin; k < end; ++k) {
        searches[order[k]] = std::move(searched[k - begin]);  // never empty: the empty prefix at least
        frame_seconds[order[k]] = frame_seconds_of(k - begin);
      }
    }
  };
  const auto count = static_cast<int64_t>(batches.size());
  run_on_workers(count, worker_count(wanted_workers, threads, count), decode_batch);
  if (greedy) return transcripts;

  // The n best of every utterance as text, then (rescoring) their language-model scores in one
  // batched pass over all of them, then each list in the order of its final scores.
  std::vector<std::string> texts;
  std::vector<double> search_scores;
  for (const auto& nbest : searches)
    for (const auto& h : nbest) {
      texts.push_back(recognizer_.symbols.decode(h.hypothesis.symbols));
      search_scores.push_back(h.score);
    }
  std::vector<SentenceLmScore> lm_scores(texts.size());
  std::vector<double> scores = search_scores;
  if (rescoring) {
    lm_scores = options.rescoring.language_model->score(texts, options.rescoring.max_tokens);
    scores = rescored_scores(texts, search_scores, lm_scores, options.rescoring);
  }
  for (size_t u = 0, first = 0; u < searches.size(); first += searches[u].size(), ++u) {
    const auto& nbest = searches[u];
    std::vector<size_t> rank(nbest.size());
    std::iota(rank.begin(), rank.end(), 0);
    // Stable: ties keep the search's order, so without rescoring nothing moves.
    std::stable_sort(rank.begin(), rank.end(), [&](size_t a, size_t b) { return scores[first + a] > scores[first + b]; });
    Transcript& t = transcripts[u];
    for (const size_t i : rank) {
      const auto& h = nbest[i];
      t.nbest.push_back({texts[first + i], scores[first + i], h.score, h.ctc_log_prob, h.lm_log10_prob,
                         lm_scores[first + i].log_prob});
    }
    t.text = t.nbest.at(0).text;
    t.words = ctc_words(nbest[rank[0]].hypothesis, recognizer_.symbols, frame_seconds[u]);
  }
  return transcripts;
}

int64_t adapt_speech_recognizer(TrainedSpeechRecognizer& recognizer, int64_t utterances,
                                const std::function<std::vector<float>(int64_t)>& audio,
                                const torch::Device& device) {
  if (device.is_cpu()) adapt_threads_to_load();
  const int64_t norms = adapt_batch_norms(*recognizer.model, utterances, [&](int64_t i) {
    const SpeechBatch batch = make_speech_batch({audio(i)}, recognizer.input, nullptr);
    return std::make_pair(batch.features.to(device), batch.lengths.to(device));
  });
  MIXSEQ_CHECK(norms > 0, "the speech recognizer (", recognizer.config.arch, ") has no batch norms to adapt");
  return norms;
}

}  // namespace mixseq
