// mixseq::ModelOptions: how LanguageModel, Recognizer, Classifier and Synthesizer open a checkpoint
// (api/language_model.h, ...; the Translator has more settings: api/translator.h). Set once, at opening.
#pragma once

#include <string>

namespace mixseq {

struct ModelOptions {
  std::string device = "auto";     // auto (CUDA when LibTorch sees one, else the CPU), cpu, cuda or cuda:N
  std::string precision = "fp32";  // auto, fp32, bf16, fp16 or tf32 (the last two on a GPU only)
  int threads = 0;  // CPU threads, as `mixseq --threads` (0 = every usable core); process-wide, the first
                    // facade (Translator, LanguageModel, Recognizer, ...) with threads >= 0 decides; -1 = leave as set
};

}  // namespace mixseq
