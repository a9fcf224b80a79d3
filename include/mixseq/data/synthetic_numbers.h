// The built-in task: English number words to German number words.
//
//   "three hundred twenty-one thousand , seven"  ->  "dreihunderteinundzwanzigtausend , sieben"
//
// German writes units before tens ("einundzwanzig" = one-and-twenty) and glues a whole number
// below a million into one word, so a model must reorder and agree over long spans: attention
// matters, and BPE has real compounds to split. The corpus is a pure function of its options,
// so every machine gets the same splits from the same seed, and no split shares a sentence
// with another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mixseq {

constexpr int64_t kMaxNumberValue = 999999;  // German writes millions apart ("eine Million"): not in the task

struct NumberTaskOptions {
  uint64_t seed = 1;                 // fixes every split
  int64_t train_size = 20000;        // sentence pairs, >= 0 in every split
  int64_t valid_size = 500;
  int64_t test_size = 500;
  int64_t max_numbers_per_sentence = 3;  // each sentence holds 1..this many numbers, ", "-separated
  int64_t max_value = kMaxNumberValue;  // largest number, 1..kMaxNumberValue
};

struct ParallelText {
  std::vector<std::string> source;  // one sentence per entry, space-tokenized
  std::vector<std::string> target;
};

struct NumberTaskCorpus {
  ParallelText train, valid, test;
};

NumberTaskCorpus make_number_task(const NumberTaskOptions& options);

// 321 -> "three hundred twenty-one" (American style, no "and").
std::string english_number_words(int64_t value);
// 321 -> "dreihunderteinundzwanzig" (one word; 1 -> "eins", 100 -> "einhundert").
std::string german_number_words(int64_t value);

// Writes <dir>/{train,valid,test}.{en,de}.
void write_number_task(const NumberTaskCorpus& corpus, const std::string& dir);

}  // namespace mixseq
