// The search a checkpoint was validated with. `mixseq train` stores its whole configuration in
// every checkpoint, validation_search included, so translate and serve search as the run's
// validation BLEU did unless told otherwise (Marian reads its decoder settings from the model's
// config in the same way).
#pragma once

#include <string>

#include "mixseq/decode/beam_search.h"

namespace mixseq {

// The validation_search section of a stored training configuration (`config_yaml`, read from
// `source`, which errors name). Settings that only make sense in validation are reset: nbest is 1
// and suppress_eos false. A configuration without the section gives BeamSearchOptions{}.
BeamSearchOptions stored_search_options(const std::string& config_yaml, const std::string& source);

}  // namespace mixseq
