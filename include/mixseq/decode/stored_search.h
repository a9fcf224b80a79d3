// The search a checkpoint was validated with. `mixseq train` stores its whole configuration in
// every checkpoint, validation_search included, so translate and serve search as the run's
// validation BLEU did unless told otherwise (Marian reads its decoder settings from the model's
// config in the same way).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mixseq/decode/beam_search.h"

namespace mixseq {

// The validation_search section of a stored training configuration (`config_yaml`, read from
// `source`, which errors name). Settings that only make sense in validation are reset: nbest is 1
// and suppress_eos false. A configuration without the section gives BeamSearchOptions{}.
BeamSearchOptions stored_search_options(const std::string& config_yaml, const std::string& source);

// Settings a caller gives over the stored search (mixseq translate's and serve's flags, the
// library's TranslationOptions); each one left unset keeps the checkpoint's value.
struct SearchOverrides {
  std::optional<int64_t> beam_size;        // hypotheses kept per sentence; 1 = greedy search
  std::optional<double> length_penalty;    // GNMT alpha; 0 disables
  std::optional<double> coverage_penalty;  // GNMT beta; 0 disables
  std::optional<double> max_len_a;         // max output tokens = floor(a * source length + b)
  std::optional<int64_t> max_len_b;
  std::optional<int64_t> nbest;            // translations per sentence, at most beam_size
};

// stored_search_options(config_yaml, source) with the given overrides applied.
BeamSearchOptions resolve_search_options(const std::string& config_yaml, const std::string& source,
                                         const SearchOverrides& overrides);

}  // namespace mixseq
