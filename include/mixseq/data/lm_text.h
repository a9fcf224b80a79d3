// Text for a language model outside of a prepared folder (`mixseq lm-eval -i FILE`, `generate
// --prompt`): segmented by the model's tokenizer and mapped to ids with its vocabulary, every
// line followed by </s>, as `mixseq prepare` and data/lm_stream.h's concatenate_with_eos lay out
// the training text (Transformer-XL's corpora add <eos> to every line).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mixseq/text/tokenizer.h"
#include "mixseq/text/vocabulary.h"

namespace mixseq {

struct LmText {
  std::vector<int64_t> tokens;  // the ids of every line in order, each line ended by kEosId
  int64_t lines = 0;
  int64_t unknown_tokens = 0;   // pieces not in the vocabulary, read as kUnkId (a "<unk>" piece is not counted)
  int64_t characters = 0;       // Unicode characters of the lines, line ends included (for bits per character)
};

// Reads `path` ("-" = stdin); malformed UTF-8 throws "<path>:<line>: ...".
LmText read_lm_text(const std::string& path, const Tokenizer& tokenizer, const Vocabulary& vocabulary);

// The same from lines in memory (the library's LanguageModel); malformed UTF-8 throws "<what> <n>:
// malformed UTF-8 at byte <b>" (n from 1).
LmText encode_lm_lines(const std::vector<std::string>& lines, const Tokenizer& tokenizer, const Vocabulary& vocabulary,
                       const std::string& what = "line");

// The pieces of `text` that the vocabulary lacks (other than "<unk>" itself), in order, each once.
std::vector<std::string> pieces_outside_vocabulary(std::string_view text, const Tokenizer& tokenizer,
                                                   const Vocabulary& vocabulary);

// A prompt to continue (`mixseq generate --prompt`, LanguageModel::generate): </s> and then the
// prompt's pieces, read as a line of the training text after the end of the previous one. An empty
// prompt, malformed UTF-8 or words outside the vocabulary (the model would read <unk>) throw,
// naming `what` ("--prompt").
std::vector<int64_t> encode_prompt(std::string_view prompt, const Tokenizer& tokenizer, const Vocabulary& vocabulary,
                                   const std::string& what);

// Whether every piece of the vocabulary (special symbols aside) is one character: a
// character-level model, whose loss per token is a loss per character (enwik8, text8).
bool is_character_level(const Vocabulary& vocabulary);

}  // namespace mixseq
