#include "mixseq/data/synthetic_numbers.h"

#include <array>
#include <filesystem>
#include <unordered_set>
#include <utility>

#include "mixseq/util/error.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/random.h"

namespace mixseq {
namespace {

const std::array<const char*, 20> kEnglishSmall = {
    "zero",    "one",     "two",       "three",    "four",     "five",    "six",
    "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
const std::array<const char*, 10> kEnglishTens = {"",      "",      "twenty",  "thirty", "forty",
                                                  "fifty", "sixty", "seventy", "eighty", "ninety"};

const std::array<const char*, 20> kGermanSmall = {
    "null",     "eins",     "zwei",     "drei",     "vier",      "fünf",     "sechs",
    "sieben",   "acht",     "neun",     "zehn",     "elf",       "zwölf",    "dreizehn",
    "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn",  "neunzehn"};
const std::array<const char*, 10> kGermanTens = {"",        "",        "zwanzig", "dreißig", "vierzig",
                                                 "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"};

std::string english_below_thousand(int64_t n) {
  std::string words;
  if (n >= 100) {
    words = std::string(kEnglishSmall[n / 100]) + " hundred";
    n %= 100;
    if (n == 0) return words;
    words += ' ';
  }
  if (n < 20) return words + kEnglishSmall[n];
  words += kEnglishTens[n / 10];
  if (n % 10 != 0) words += std::string("-") + kEnglishSmall[n % 10];
  return words;
}

// German 1..999 as it appears inside a compound: 1 is "ein" before "hundert"/"tausend" and in
// "einundzwanzig", but "eins" at the very end ("hunderteins").
std::string german_below_thousand(int64_t n, bool final_position) {
  std::string word;
  if (n >= 100) {
    word = (n / 100 == 1 ? std::string("ein") : std::string(kGermanSmall[n / 100])) + "hundert";
    n %= 100;
    if (n == 0) return word;
  }
  if (n == 1) return word + (final_position ? "eins" : "ein");
  if (n < 20) return word + kGermanSmall[n];
  if (n % 10 != 0) word += (n % 10 == 1 ? std::string("ein") : std::string(kGermanSmall[n % 10])) + "und";
  return word + kGermanTens[n / 10];
}

// Draws the number of digits first, so that small and large numbers are equally common.
int64_t draw_number(PortableRandom& random, int64_t max_value) {
  const int64_t max_digits = static_cast<int64_t>(std::to_string(max_value).size());
  const int64_t digits = random.uniform(1, max_digits);
  int64_t low = 1, high = 9;
  for (int64_t d = 1; d < digits; ++d) low *= 10, high = high * 10 + 9;
  if (digits == 1) low = 0;
  return random.uniform(low, std::min(high, max_value));
}

}  // namespace

std::string english_number_words(int64_t value) {
  MIXSEQ_CHECK(value >= 0 && value <= kMaxNumberValue, "english_number_words: ", value, " is outside 0..", kMaxNumberValue);
  if (value < 1000) return english_below_thousand(value);
  std::string words = english_below_thousand(value / 1000) + " thousand";
  if (value % 1000 != 0) words += " " + english_below_thousand(value % 1000);
  return words;
}

std::string german_number_words(int64_t value) {
  MIXSEQ_CHECK(value >= 0 && value <= kMaxNumberValue, "german_number_words: ", value, " is outside 0..", kMaxNumberValue);
  if (value < 20) return kGermanSmall[value];
  if (value < 1000) return german_below_thousand(value, /*final_position=*/true);
  std::string word = german_below_thousand(value / 1000, /*final_position=*/false) + "tausend";
  if (value % 1000 != 0) word += german_below_thousand(value % 1000, /*final_position=*/true);
  return word;
}

NumberTaskCorpus make_number_task(const NumberTaskOptions& options) {
  MIXSEQ_CHECK(options.max_value >= 1 && options.max_value <= kMaxNumberValue, "number task: max_value (",
               options.max_value, ") must be in 1..", kMaxNumberValue);
  for (const auto& [name, size] : {std::pair{"train_size", options.train_size}, std::pair{"valid_size", options.valid_size},
                                   std::pair{"test_size", options.test_size}})
    // Kept in memory, each pair about 200 bytes: 10 million is 2 GB (99,999,999,999 ended in std::bad_alloc).
    MIXSEQ_CHECK(size >= 0 && size <= 10'000'000, "number task: ", name, " (", size, ") must be in 0..10000000");
  MIXSEQ_CHECK(options.max_numbers_per_sentence >= 1, "number task: max_numbers_per_sentence (",
               options.max_numbers_per_sentence, ") must be at least 1");
  const int64_t total = options.train_size + options.valid_size + options.test_size;
  PortableRandom random(options.seed);
  std::unordered_set<std::string> seen;
  NumberTaskCorpus corpus;
  const int64_t max_attempts = 100 * total + 1000;
  for (int64_t attempt = 0; static_cast<int64_t>(seen.size()) < total; ++attempt) {
    MIXSEQ_CHECK(attempt < max_attempts, "number task: cannot draw ", total,
                 " distinct sentences with max_value ", options.max_value, "; ask for fewer");
    std::string source, target;
    const int64_t count = random.uniform(1, options.max_numbers_per_sentence);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t value = draw_number(random, options.max_value);
      if (i > 0) source += " , ", target += " , ";
      source += english_number_words(value);
      target += german_number_words(value);
    }
    if (!seen.insert(source).second) continue;  // splits must not share a sentence
    const auto index = static_cast<int64_t>(seen.size()) - 1;
    ParallelText& split = index < options.train_size                        ? corpus.train
                          : index < options.train_size + options.valid_size ? corpus.valid
                                                                            : corpus.test;
    split.source.push_back(std::move(source));
    split.target.push_back(std::move(target));
  }
  return corpus;
}

void write_number_task(const NumberTaskCorpus& corpus, const std::string& dir) {
  create_folder(dir);
  const std::pair<const char*, const ParallelText*> splits[] = {
      {"train", &corpus.train}, {"valid", &corpus.valid}, {"test", &corpus.test}};
  for (const auto& [name, text] : splits) {
    for (const auto& [suffix, lines] : {std::pair{".en", &text->source}, std::pair{".de", &text->target}}) {
      OutputFile file(dir + "/" + name + suffix);
      for (const auto& line : *lines) file.stream() << line << '\n';
      file.commit();
    }
  }
}

}  // namespace mixseq
