// The Python module `mixseq` (docs/python.md): the public C++ API (include/mixseq/mixseq.h) with
// pybind11. Every call that computes (opening a checkpoint, translating) releases the GIL, so
// other Python threads run meanwhile; mixseq's errors arrive as mixseq.Error, a RuntimeError
// carrying mixseq's message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "mixseq/mixseq.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/chrf.h"
#include "mixseq/text/sacrebleu_tokenizer.h"
#include "mixseq/util/error.h"

namespace py = pybind11;

namespace {

std::string hypothesis_repr(const mixseq::TranslationHypothesis& h) {
  return "TranslationHypothesis(text=" + py::repr(py::str(h.text)).cast<std::string>() +
         ", score=" + py::repr(py::float_(h.score)).cast<std::string>() + ")";
}

mixseq::TranslatorOptions translator_options(const std::string& device, const std::string& precision,
                                             int64_t max_tokens, int64_t max_source_tokens,
                                             bool truncate_long_sources, int threads, int workers) {
  mixseq::TranslatorOptions options;
  options.device = device;
  options.precision = precision;
  options.max_tokens = max_tokens;
  options.max_source_tokens = max_source_tokens;
  options.truncate_long_sources = truncate_long_sources;
  options.threads = threads;
  options.workers = workers;
  return options;
}

// Translator.translate_batch over raw sentences (Source = std::string) or lists of pieces.
template <typename Source>
std::vector<mixseq::TranslationResult> translate_batch(const mixseq::Translator& translator,
                                                       const std::vector<Source>& source,
                                                       std::optional<int64_t> beam_size,
                                                       std::optional<double> length_penalty,
                                                       std::optional<double> coverage_penalty,
                                                       std::optional<double> max_len_a,
                                                       std::optional<int64_t> max_len_b, int64_t nbest,
                                                       bool return_alignment) {
  mixseq::TranslationOptions options;
  options.beam_size = beam_size;
  options.length_penalty = length_penalty;
  options.coverage_penalty = coverage_penalty;
  options.max_len_a = max_len_a;
  options.max_len_b = max_len_b;
  options.nbest = nbest;
  options.return_alignment = return_alignment;
  return translator.translate_batch(source, options);
}

// Recognizer.transcribe_batch over audio files (Audio = std::string) or lists of samples.
template <typename Audio>
std::vector<mixseq::Transcription> transcribe_batch(const mixseq::Recognizer& recognizer,
                                                    const std::vector<Audio>& audio, int64_t beam_size,
                                                    int64_t nbest, double lm_weight, double word_bonus,
                                                    double rescore_weight, double rescore_word_bonus,
                                                    int64_t cutoff_top_n, double cutoff_prob) {
  mixseq::TranscriptionOptions options;
  options.beam_size = beam_size;
  options.nbest = nbest;
  options.lm_weight = lm_weight;
  options.word_bonus = word_bonus;
  options.rescore_weight = rescore_weight;
  options.rescore_word_bonus = rescore_word_bonus;
  options.cutoff_top_n = cutoff_top_n;
  options.cutoff_prob = cutoff_prob;
  if constexpr (std::is_same_v<Audio, std::string>)
    return recognizer.transcribe_files(audio, options);
  else
    return recognizer.transcribe_batch(audio, options);
}

// LanguageModel(path, device=..., precision=..., threads=...) and Synthesizer alike (api/model_options.h).
template <typename Model>
Model open_model(const std::string& path, const std::string& device, const std::string& precision, int threads) {
  mixseq::ModelOptions options;
  options.device = device;
  options.precision = precision;
  options.threads = threads;
  return Model(path, options);
}

// References as mixseq bleu/chrf take them: one list per reference stream, each as long as the
// hypotheses. A single list of strings is one stream.
std::vector<std::vector<std::string>> reference_streams(const py::object& references) {
  if (py::isinstance<py::str>(references))
    throw py::type_error("references must be a list of strings (one stream) or a list of such lists, not a str");
  const auto items = references.cast<py::list>();
  if (items.size() > 0 && py::isinstance<py::str>(items[0])) return {references.cast<std::vector<std::string>>()};
  return references.cast<std::vector<std::vector<std::string>>>();
}

}  // namespace

PYBIND11_MODULE(mixseq, m) {
  m.doc() =
      "mixseq: translate, transcribe, classify, score, generate and speak with checkpoints trained by `mixseq "
      "train` (the C++ library's Python face)";
  py::register_exception<mixseq::Error>(m, "Error", PyExc_RuntimeError);

  m.def(
      "bleu",
      [](const std::vector<std::string>& hypotheses, const py::object& references, const std::string& tokenize,
         bool lowercase) {
        mixseq::BleuOptions options;
        options.tokenizer = mixseq::parse_bleu_tokenizer(tokenize);
        options.lowercase = lowercase;
        const auto streams = reference_streams(references);
        py::gil_scoped_release release;
        return mixseq::corpus_bleu(hypotheses, streams, options).score;
      },
      "Corpus BLEU (0..100) as `mixseq bleu` (sacreBLEU 2.x) computes it; references: one list of strings per "
      "reference stream, or one list",
      py::arg("hypotheses"), py::arg("references"), py::kw_only(), py::arg("tokenize") = "13a",
      py::arg("lowercase") = false);
  m.def(
      "chrf",
      [](const std::vector<std::string>& hypotheses, const py::object& references, int char_order, int word_order,
         int beta, bool lowercase) {
        mixseq::ChrfOptions options;
        options.char_order = char_order;
        options.word_order = word_order;
        options.beta = beta;
        options.lowercase = lowercase;
        const auto streams = reference_streams(references);
        py::gil_scoped_release release;
        return mixseq::corpus_chrf(hypotheses, streams, options).score;
      },
      "Corpus chrF (0..100; word_order=2: chrF++) as `mixseq bleu -m chrf` computes it",
      py::arg("hypotheses"), py::arg("references"), py::kw_only(), py::arg("char_order") = 6,
      py::arg("word_order") = 0, py::arg("beta") = 2, py::arg("lowercase") = false);

  py::class_<mixseq::TranslationHypothesis>(m, "TranslationHypothesis")
      .def_readonly("text", &mixseq::TranslationHypothesis::text, "detokenized translation")
      .def_readonly("score", &mixseq::TranslationHypothesis::score,
                    "log P(Y|X) with the GNMT length and coverage penalties")
      .def_readonly("tokens", &mixseq::TranslationHypothesis::tokens, "output pieces, without </s>")
      .def_readonly("alignment", &mixseq::TranslationHypothesis::alignment,
                    "with return_alignment: per output piece, the source piece it attended most")
      .def_readonly("pieces", &mixseq::TranslationHypothesis::pieces,
                    "the output's vocabulary pieces, without </s> (text is their detokenization)")
      .def("__repr__", &hypothesis_repr);

  py::class_<mixseq::TranslationResult>(m, "TranslationResult")
      .def_readonly("text", &mixseq::TranslationResult::text, "the best translation")
      .def_readonly("score", &mixseq::TranslationResult::score, "its score")
      .def_readonly("hypotheses", &mixseq::TranslationResult::hypotheses, "nbest hypotheses, best first")
      .def("__repr__", [](const mixseq::TranslationResult& r) {
        return "TranslationResult(text=" + py::repr(py::str(r.text)).cast<std::string>() +
               ", score=" + py::repr(py::float_(r.score)).cast<std::string>() + ")";
      });

  py::class_<mixseq::Translator>(m, "Translator", R"(A translation checkpoint, ready to translate raw text.

Translator(model_path, *, device="auto", precision="fp32", max_tokens=8192, max_source_tokens=1024,
           truncate_long_sources=False, threads=0, workers=0)
model_path: a checkpoint written by `mixseq train`, `average-checkpoints` or `quantize`, or a list of
them (an ensemble). The defaults are `mixseq translate`'s. One Translator may be used from several
threads; their calls run one at a time.)")
      .def(py::init([](const std::string& path, const std::string& device, const std::string& precision,
                       int64_t max_tokens, int64_t max_source_tokens, bool truncate_long_sources, int threads,
                       int workers) {
             return mixseq::Translator(path, translator_options(device, precision, max_tokens, max_source_tokens,
                                                                truncate_long_sources, threads, workers));
           }),
           py::arg("model_path"), py::kw_only(), py::arg("device") = "auto", py::arg("precision") = "fp32",
           py::arg("max_tokens") = 8192, py::arg("max_source_tokens") = 1024,
           py::arg("truncate_long_sources") = false, py::arg("threads") = 0, py::arg("workers") = 0,
           py::call_guard<py::gil_scoped_release>())
      .def(py::init([](const std::vector<std::string>& paths, const std::string& device, const std::string& precision,
                       int64_t max_tokens, int64_t max_source_tokens, bool truncate_long_sources, int threads,
                       int workers) {
             return mixseq::Translator(paths, translator_options(device, precision, max_tokens, max_source_tokens,
                                                                 truncate_long_sources, threads, workers));
           }),
           py::arg("model_path"), py::kw_only(), py::arg("device") = "auto", py::arg("precision") = "fp32",
           py::arg("max_tokens") = 8192, py::arg("max_source_tokens") = 1024,
           py::arg("truncate_long_sources") = false, py::arg("threads") = 0, py::arg("workers") = 0,
           py::call_guard<py::gil_scoped_release>())
      .def("translate_batch", &translate_batch<std::string>,
           R"(Translates a list of raw sentences, or of lists of vocabulary pieces (as CTranslate2 takes them:
tokenize() makes them; a piece outside the vocabulary reads as <unk>); returns one TranslationResult
per sentence, in order.

Search settings left None are the checkpoint's validation_search, as with `mixseq translate`.)",
           py::arg("source"), py::kw_only(), py::arg("beam_size") = py::none(), py::arg("length_penalty") = py::none(),
           py::arg("coverage_penalty") = py::none(), py::arg("max_len_a") = py::none(),
           py::arg("max_len_b") = py::none(), py::arg("nbest") = 1, py::arg("return_alignment") = false,
           py::call_guard<py::gil_scoped_release>())
      .def("translate_batch", &translate_batch<std::vector<std::string>>, py::arg("source"), py::kw_only(),
           py::arg("beam_size") = py::none(), py::arg("length_penalty") = py::none(),
           py::arg("coverage_penalty") = py::none(), py::arg("max_len_a") = py::none(),
           py::arg("max_len_b") = py::none(), py::arg("nbest") = 1, py::arg("return_alignment") = false,
           py::call_guard<py::gil_scoped_release>())
      .def("tokenize", &mixseq::Translator::tokenize, "A sentence -> the vocabulary pieces the checkpoint's "
           "tokenizer makes of it", py::arg("sentence"), py::call_guard<py::gil_scoped_release>())
      .def("detokenize", &mixseq::Translator::detokenize, "Pieces -> text, as translations are written",
           py::arg("pieces"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("source_language", &mixseq::Translator::source_language,
                             "the training data's source language (\"\" for older checkpoints)")
      .def_property_readonly("target_language", &mixseq::Translator::target_language)
      .def_property_readonly("device", &mixseq::Translator::device)
      .def_property_readonly("precision", &mixseq::Translator::precision)
      .def_property_readonly("quantization", &mixseq::Translator::quantization,
                             "the quantized layers' mode (int8 or simulated) for a checkpoint of `mixseq quantize`, "
                             "\"\" for a float one");

  py::class_<mixseq::SentenceScore>(m, "SentenceScore")
      .def_readonly("log_prob", &mixseq::SentenceScore::log_prob, "ln p(the sentence's pieces, then </s>)")
      .def_readonly("tokens", &mixseq::SentenceScore::tokens, "positions scored: the pieces plus </s>")
      .def_readonly("unknown_tokens", &mixseq::SentenceScore::unknown_tokens, "pieces outside the vocabulary")
      .def("__repr__", [](const mixseq::SentenceScore& s) {
        return "SentenceScore(log_prob=" + py::repr(py::float_(s.log_prob)).cast<std::string>() +
               ", tokens=" + std::to_string(s.tokens) + ")";
      });

  py::class_<mixseq::TextPerplexity>(m, "TextPerplexity")
      .def_readonly("loss", &mixseq::TextPerplexity::loss, "mean negative log-likelihood per scored token, nats")
      .def_readonly("perplexity", &mixseq::TextPerplexity::perplexity, "exp(loss)")
      .def_readonly("tokens", &mixseq::TextPerplexity::tokens, "tokens scored")
      .def_readonly("unknown_tokens", &mixseq::TextPerplexity::unknown_tokens, "pieces outside the vocabulary")
      .def("__repr__", [](const mixseq::TextPerplexity& p) {
        return "TextPerplexity(perplexity=" + py::repr(py::float_(p.perplexity)).cast<std::string>() +
               ", tokens=" + std::to_string(p.tokens) + ")";
      });

  py::class_<mixseq::LanguageModel>(m, "LanguageModel", R"(A language-model checkpoint (Transformer-XL or LSTM).

LanguageModel(model_path, *, device="auto", precision="fp32", threads=0)
score(sentences) gives ln p of each sentence alone; perplexity(lines) is `mixseq lm-eval` on those
lines; generate(prompt) is `mixseq generate --prompt`. One LanguageModel may be used from several
threads; their calls run one at a time.)")
      .def(py::init(&open_model<mixseq::LanguageModel>),
           py::arg("model_path"), py::kw_only(), py::arg("device") = "auto", py::arg("precision") = "fp32",
           py::arg("threads") = 0, py::call_guard<py::gil_scoped_release>())
      .def("score", &mixseq::LanguageModel::score_batch,
           "ln p of each sentence and its end of sentence, each alone from the start of a line (natural log)",
           py::arg("sentences"), py::call_guard<py::gil_scoped_release>())
      .def(
          "perplexity",
          [](const mixseq::LanguageModel& model, const std::vector<std::string>& lines, int64_t batch_size,
             int64_t tgt_len, int64_t mem_len, int64_t clamp_len, bool same_length, int64_t max_segments,
             int64_t cache_window, double cache_theta, double cache_lambda) {
            mixseq::PerplexityOptions options;
            options.batch_size = batch_size;
            options.tgt_len = tgt_len;
            options.mem_len = mem_len;
            options.clamp_len = clamp_len;
            options.same_length = same_length;
            options.max_segments = max_segments;
            options.cache_window = cache_window;
            options.cache_theta = cache_theta;
            options.cache_lambda = cache_lambda;
            return model.perplexity(lines, options);
          },
          "The lines as one text, scored as `mixseq lm-eval -i` scores a file (same defaults)", py::arg("lines"),
          py::kw_only(), py::arg("batch_size") = 10, py::arg("tgt_len") = 64, py::arg("mem_len") = 640,
          py::arg("clamp_len") = 400, py::arg("same_length") = true, py::arg("max_segments") = 0,
          py::arg("cache_window") = 0, py::arg("cache_theta") = 0.3, py::arg("cache_lambda") = 0.1,
          py::call_guard<py::gil_scoped_release>())
      .def(
          "generate",
          [](const mixseq::LanguageModel& model, const std::string& prompt, int64_t max_tokens, bool greedy,
             double temperature, int64_t top_k, double top_p, uint64_t seed, bool stop_at_eos, int64_t mem_len) {
            mixseq::GenerateOptions options;
            options.max_tokens = max_tokens;
            options.greedy = greedy;
            options.temperature = temperature;
            options.top_k = top_k;
            options.top_p = top_p;
            options.seed = seed;
            options.stop_at_eos = stop_at_eos;
            options.mem_len = mem_len;
            return model.generate(prompt, options);
          },
          "The continuation `mixseq generate --prompt` writes (same defaults), less its last line break",
          py::arg("prompt"), py::kw_only(), py::arg("max_tokens") = 100, py::arg("greedy") = false,
          py::arg("temperature") = 1.0, py::arg("top_k") = 0, py::arg("top_p") = 1.0, py::arg("seed") = 1,
          py::arg("stop_at_eos") = false, py::arg("mem_len") = -1, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("vocab_size", &mixseq::LanguageModel::vocab_size);

  py::class_<mixseq::TranscribedWord>(m, "TranscribedWord")
      .def_readonly("word", &mixseq::TranscribedWord::word)
      .def_readonly("start", &mixseq::TranscribedWord::start, "seconds from the start of the audio")
      .def_readonly("end", &mixseq::TranscribedWord::end, "seconds")
      .def("__repr__", [](const mixseq::TranscribedWord& w) {
        return "TranscribedWord(" + py::repr(py::str(w.word)).cast<std::string>() + ", " +
               py::repr(py::float_(w.start)).cast<std::string>() + ", " +
               py::repr(py::float_(w.end)).cast<std::string>() + ")";
      });

  py::class_<mixseq::TranscriptionHypothesis>(m, "TranscriptionHypothesis")
      .def_readonly("text", &mixseq::TranscriptionHypothesis::text)
      .def_readonly("score", &mixseq::TranscriptionHypothesis::score, "the ranking score (after rescoring)")
      .def_readonly("search_score", &mixseq::TranscriptionHypothesis::search_score, "the beam search's score")
      .def_readonly("ctc_log_prob", &mixseq::TranscriptionHypothesis::ctc_log_prob, "ln P(text | audio)")
      .def_readonly("lm_log10_prob", &mixseq::TranscriptionHypothesis::lm_log10_prob,
                    "log10 p of its words under the word model (0 without one)")
      .def_readonly("rescore_lm_log_prob", &mixseq::TranscriptionHypothesis::rescore_lm_log_prob,
                    "ln p(text, </s>) under the rescoring model (0 without one)")
      .def("__repr__", [](const mixseq::TranscriptionHypothesis& h) {
        return "TranscriptionHypothesis(text=" + py::repr(py::str(h.text)).cast<std::string>() +
               ", score=" + py::repr(py::float_(h.score)).cast<std::string>() + ")";
      });

  py::class_<mixseq::Transcription>(m, "Transcription")
      .def_readonly("text", &mixseq::Transcription::text, "the transcript, as `mixseq transcribe` writes it")
      .def_readonly("words", &mixseq::Transcription::words, "its words with their start and end times")
      .def_readonly("nbest", &mixseq::Transcription::nbest, "beam search: the n best, best first")
      .def_readonly("seconds", &mixseq::Transcription::seconds, "the audio's duration")
      .def("__repr__", [](const mixseq::Transcription& t) {
        return "Transcription(text=" + py::repr(py::str(t.text)).cast<std::string>() + ")";
      });

  py::class_<mixseq::Recognizer>(m, "Recognizer", R"(A speech recognizer's checkpoint (Wave2Letter+, Jasper or DeepSpeech2).

Recognizer(model_path, *, device="auto", precision="fp32", threads=0, lm="", rescore_lm="",
           max_frames=48000, workers=0)
lm: a word n-gram model (ARPA) fused into the beam search; rescore_lm: a mixseq language model's
checkpoint that re-ranks its n-best (as `mixseq transcribe --lm/--rescore-lm`).
transcribe_batch(audio) takes a list of audio file paths, or of sample lists (mono, in [-1, 1], at
sample_rate), and gives one Transcription each, as `mixseq transcribe` does (same defaults);
adapt(audio) re-estimates the batch norms on unlabelled audio of the speaker to transcribe, as
`mixseq transcribe --adapt-norms`. One Recognizer may be used from several threads; their calls
run one at a time.)")
      .def(py::init([](const std::string& path, const std::string& device, const std::string& precision, int threads,
                       const std::string& lm, const std::string& rescore_lm, int64_t max_frames, int workers) {
             mixseq::RecognizerOptions options;
             options.device = device;
             options.precision = precision;
             options.threads = threads;
             options.lm = lm;
             options.rescore_lm = rescore_lm;
             options.max_frames = max_frames;
             options.workers = workers;
             return mixseq::Recognizer(path, options);
           }),
           py::arg("model_path"), py::kw_only(), py::arg("device") = "auto", py::arg("precision") = "fp32",
           py::arg("threads") = 0, py::arg("lm") = "", py::arg("rescore_lm") = "", py::arg("max_frames") = 48000,
           py::arg("workers") = 0, py::call_guard<py::gil_scoped_release>())
      .def("transcribe_batch", &transcribe_batch<std::string>,
           "Audio file paths, or lists of samples at sample_rate -> one Transcription each, in order "
           "(search settings as `mixseq transcribe`'s flags: greedy unless beam_size > 1 or an lm)",
           py::arg("audio"), py::kw_only(), py::arg("beam_size") = 1, py::arg("nbest") = 0,
           py::arg("lm_weight") = 0.0, py::arg("word_bonus") = 0.0, py::arg("rescore_weight") = 0.0,
           py::arg("rescore_word_bonus") = 0.0, py::arg("cutoff_top_n") = 0, py::arg("cutoff_prob") = 1.0,
           py::call_guard<py::gil_scoped_release>())
      .def("transcribe_batch", &transcribe_batch<std::vector<float>>, py::arg("audio"), py::kw_only(),
           py::arg("beam_size") = 1, py::arg("nbest") = 0, py::arg("lm_weight") = 0.0, py::arg("word_bonus") = 0.0,
           py::arg("rescore_weight") = 0.0, py::arg("rescore_word_bonus") = 0.0, py::arg("cutoff_top_n") = 0,
           py::arg("cutoff_prob") = 1.0, py::call_guard<py::gil_scoped_release>())
      .def("adapt", &mixseq::Recognizer::adapt_files,
           "Unsupervised adaptation to a speaker or channel (`mixseq transcribe --adapt-norms`): the batch-norm "
           "statistics re-estimated on these unlabelled audio files (or lists of samples at sample_rate), which "
           "later calls decode with; returns the number of batch norms adapted",
           py::arg("audio"), py::call_guard<py::gil_scoped_release>())
      .def("adapt", &mixseq::Recognizer::adapt_batch, py::arg("audio"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("sample_rate", &mixseq::Recognizer::sample_rate);

  py::class_<mixseq::Classification>(m, "Classification")
      .def_readonly("label", &mixseq::Classification::label, "the likeliest label")
      .def_readonly("probability", &mixseq::Classification::probability, "its probability")
      .def_readonly("probabilities", &mixseq::Classification::probabilities,
                    "every label's probability, in the order of Classifier.labels")
      .def_readonly("unknown_words", &mixseq::Classification::unknown_words, "pieces outside the vocabulary")
      .def("__repr__", [](const mixseq::Classification& c) {
        return "Classification(label=" + py::repr(py::str(c.label)).cast<std::string>() +
               ", probability=" + py::repr(py::float_(c.probability)).cast<std::string>() + ")";
      });

  py::class_<mixseq::Classifier>(m, "Classifier", R"(A sentence classifier's checkpoint.

Classifier(model_path, *, device="auto", precision="fp32", threads=0)
classify_batch(texts) gives one Classification per text, as `mixseq classify --json` labels it.
One Classifier may be used from several threads; their calls run one at a time.)")
      .def(py::init(&open_model<mixseq::Classifier>),
           py::arg("model_path"), py::kw_only(), py::arg("device") = "auto", py::arg("precision") = "fp32",
           py::arg("threads") = 0, py::call_guard<py::gil_scoped_release>())
      .def(
          "classify_batch",
          [](const mixseq::Classifier& classifier, const std::vector<std::string>& texts, int64_t max_tokens,
             int64_t max_source_tokens) {
            mixseq::ClassifyOptions options;
            options.max_tokens = max_tokens;
            options.max_source_tokens = max_source_tokens;
            return classifier.classify_batch(texts, options);
          },
          "One Classification per text, in order (a text over max_source_tokens tokens is an error; 0 = no limit)",
          py::arg("texts"), py::kw_only(), py::arg("max_tokens") = 8192, py::arg("max_source_tokens") = 1024,
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("labels", &mixseq::Classifier::labels, "the labels, in id order");

  py::class_<mixseq::Speech>(m, "Speech")
      .def_readonly("samples", &mixseq::Speech::samples, "mono audio in [-1, 1] at sample_rate (a list of floats)")
      .def_readonly("sample_rate", &mixseq::Speech::sample_rate, "Hz")
      .def_readonly("frames", &mixseq::Speech::frames, "decoder steps kept (those before the stop token)")
      .def_readonly("stopped", &mixseq::Speech::stopped, "the stop token ended it (False: it ran to max_steps)")
      .def(
          "audio_file",
          [](const mixseq::Speech& speech, const std::string& format) {
            return py::bytes(mixseq::Synthesizer::audio_file(speech, format));
          },
          "The bytes of a 16-bit audio file (\"wav\" or \"flac\"), as `mixseq synthesize` writes it",
          py::arg("format") = "wav")
      .def("__repr__", [](const mixseq::Speech& speech) {
        return "Speech(seconds=" +
               py::repr(py::float_(static_cast<double>(speech.samples.size()) /
                                   static_cast<double>(std::max<int64_t>(1, speech.sample_rate))))
                   .cast<std::string>() +
               ", frames=" + std::to_string(speech.frames) + ", stopped=" + (speech.stopped ? "True" : "False") + ")";
      });

  py::class_<mixseq::Synthesizer>(m, "Synthesizer", R"(A speech synthesizer's checkpoint (Tacotron 2).

Synthesizer(model_path, *, device="auto", precision="fp32", threads=0)
synthesize_batch(texts) speaks each text as `mixseq synthesize` does (same defaults), one Speech
per text; speech.audio_file("wav") gives the bytes of the file the command writes. One Synthesizer
may be used from several threads; their calls run one at a time.)")
      .def(py::init(&open_model<mixseq::Synthesizer>),
           py::arg("model_path"), py::kw_only(), py::arg("device") = "auto", py::arg("precision") = "fp32",
           py::arg("threads") = 0, py::call_guard<py::gil_scoped_release>())
      .def(
          "synthesize_batch",
          [](const mixseq::Synthesizer& synthesizer, const std::vector<std::string>& texts, int64_t batch_size,
             int64_t max_steps, double gate_threshold, int64_t griffin_lim_iters, double griffin_lim_momentum,
             uint64_t seed) {
            mixseq::SpeakOptions options;
            options.batch_size = batch_size;
            options.max_steps = max_steps;
            options.gate_threshold = gate_threshold;
            options.griffin_lim_iterations = griffin_lim_iters;
            options.griffin_lim_momentum = griffin_lim_momentum;
            options.seed = seed;
            return synthesizer.synthesize_batch(texts, options);
          },
          "One Speech per text, as `mixseq synthesize` speaks it (same defaults)", py::arg("texts"), py::kw_only(),
          py::arg("batch_size") = 8, py::arg("max_steps") = 0, py::arg("gate_threshold") = 0.0,
          py::arg("griffin_lim_iters") = 60, py::arg("griffin_lim_momentum") = 0.99, py::arg("seed") = 1,
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("sample_rate", &mixseq::Synthesizer::sample_rate);

  py::class_<mixseq::Subwords>(m, "Subwords", R"(BPE codes or a SentencePiece model.

Subwords(kind, path): kind "bpe" (a codes file, applied as `mixseq bpe apply -c path` with its
defaults) or "spm" (a SentencePiece model, as `mixseq spm encode/decode -m path`).
encode(lines) gives each line's pieces; decode(pieces) joins lists of pieces back into lines.)")
      .def(py::init<const std::string&, const std::string&>(), py::arg("kind"), py::arg("path"),
           py::call_guard<py::gil_scoped_release>())
      .def("encode", &mixseq::Subwords::encode_batch, "Lines -> a list of pieces per line", py::arg("lines"),
           py::call_guard<py::gil_scoped_release>())
      .def("decode", &mixseq::Subwords::decode_batch, "Lists of pieces -> one line each", py::arg("pieces"),
           py::call_guard<py::gil_scoped_release>())
      .def("__repr__", [](const mixseq::Subwords& s) { return "Subwords(" + py::repr(py::str(s.describe())).cast<std::string>() + ")"; });

  py::class_<mixseq::TrainingResult>(m, "TrainingResult")
      .def_readonly("steps", &mixseq::TrainingResult::steps, "updates done in total (across resumes)")
      .def_readonly("epochs", &mixseq::TrainingResult::epochs, "epochs completed")
      .def_readonly("seconds", &mixseq::TrainingResult::seconds, "wall time of this call's training")
      .def_readonly("metric", &mixseq::TrainingResult::metric, "the task's validation metric")
      .def_readonly("best_score", &mixseq::TrainingResult::best_score, "its best validation value; -1: never measured")
      .def_readonly("last_valid_loss", &mixseq::TrainingResult::last_valid_loss, "at the last validation")
      .def_readonly("stopped_early", &mixseq::TrainingResult::stopped_early, "train.patience ended the run")
      .def_readonly("stop_signal", &mixseq::TrainingResult::stop_signal, "SIGINT/SIGTERM that stopped it; 0: none")
      .def_readonly("run_dir", &mixseq::TrainingResult::run_dir)
      .def_readonly("best_checkpoint", &mixseq::TrainingResult::best_checkpoint)
      .def_readonly("last_checkpoint", &mixseq::TrainingResult::last_checkpoint)
      .def("__repr__", [](const mixseq::TrainingResult& r) {
        return "TrainingResult(steps=" + std::to_string(r.steps) + ", metric=" + py::repr(py::str(r.metric)).cast<std::string>() +
               ", best_score=" + py::repr(py::float_(r.best_score)).cast<std::string>() +
               ", best_checkpoint=" + py::repr(py::str(r.best_checkpoint)).cast<std::string>() + ")";
      });

  m.def(
      "train",
      [](const std::string& config_path, const py::object& overrides, bool resume, bool overwrite, int threads) {
        // {"train.max_steps": 300, "train.precision": "bf16", "model.transformer.normalize_before": True}:
        // values as the command line writes them (True/False as true/false).
        std::vector<std::pair<std::string, std::string>> settings;
        if (!overrides.is_none()) {
          for (const auto& item : overrides.cast<py::dict>()) {
            const auto& value = item.second;
            std::string text = py::isinstance<py::bool_>(value) ? (value.cast<bool>() ? "true" : "false")
                                                                 : py::str(value).cast<std::string>();
            settings.emplace_back(item.first.cast<std::string>(), std::move(text));
          }
        }
        mixseq::TrainingOptions options;
        options.resume = resume;
        options.overwrite = overwrite;
        options.threads = threads;
        const py::gil_scoped_release release;
        return mixseq::train(config_path, settings, options);
      },
      R"(`mixseq train -c config_path --path value ...`: trains until the run ends; returns a TrainingResult.

overrides: a dict of dotted config paths to values ({"train.max_steps": 300, "data.dir": "data"}).
resume / overwrite: as the command's --resume / --overwrite. SIGINT or SIGTERM stop the run after
the current update with its last checkpoint saved (the result's stop_signal says so).)",
      py::arg("config_path") = "", py::arg("overrides") = py::none(), py::kw_only(), py::arg("resume") = false,
      py::arg("overwrite") = false, py::arg("threads") = 0);
}
