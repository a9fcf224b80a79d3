// The input symbols of speech synthesis: the English table of NVIDIA DeepLearningExamples' Tacotron 2
// (tacotron2/text/symbols.py, from keithito/tacotron): id 0 the pad '_', 1 '-', then the
// punctuation !'(),.:;? and space, the letters A-Z a-z, then 84 ARPAbet phonemes written "@AA1"
// (148 in all, their n_symbols). Text is read character by character (ASCII only; no cleaning:
// lowercase it, spell out numbers and abbreviations before, as their english_cleaners does);
// {HH AW1 S} in braces is read as ARPAbet phonemes, as their text_to_sequence does.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mixseq {

// The 148 symbols, in id order ('@'-prefixed for the phonemes).
const std::vector<std::string>& synthesis_symbols();

// The ids of `text`. Throws mixseq::Error starting "<where>: " for empty text (or only spaces), a
// character outside the table (naming it, its position and the characters allowed), an unknown
// or unclosed ARPAbet phoneme, and a text of empty braces alone ("{}": no symbol at all). `where` names the text in messages ("texts.txt:3").
std::vector<int64_t> synthesis_symbol_ids(const std::string& text, const std::string& where);

// The symbols one per line, in id order: what a synthesizer's checkpoint stores as its vocabulary,
// so that a model is never read with another symbol table.
std::string synthesis_symbols_text();

}  // namespace mixseq
