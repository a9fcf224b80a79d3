#include "search_flags.h"

#include "mixseq/decode/stored_search.h"
#include "option_checks.h"

namespace mixseq::cli {

void SearchFlags::add_to(CLI::App& command) {
  beam_size_ = command.add_option("--beam-size", given_.beam_size,
                                  "Hypotheses kept per sentence; 1 = greedy (default: the checkpoint's validation_search)")
                   ->check(in_range(1, kMaxBeamSize));
  length_penalty_ = command.add_option("--length-penalty", given_.length_penalty,
                                       "GNMT alpha; 0 disables (default: the checkpoint's)")
                        ->check(finite_number());
  coverage_penalty_ = command.add_option("--coverage-penalty", given_.coverage_penalty,
                                         "GNMT beta; 0 disables (default: the checkpoint's)")
                          ->check(at_least(0));
  max_len_a_ = command.add_option("--max-len-a", given_.max_len_a,
                                  "Max output tokens = a * source length + b (default: the checkpoint's)")
                   ->check(at_least(0));
  max_len_b_ = command.add_option("--max-len-b", given_.max_len_b,
                                  "Max output tokens = a * source length + b (default: the checkpoint's)")
                   ->check(at_least(0));
  nbest_ = command.add_option("--nbest", given_.nbest, "Translations per sentence, at most the beam size")
               ->check(in_range(1, kMaxBeamSize))
               ->capture_default_str();
}

BeamSearchOptions SearchFlags::resolve(const std::string& config_yaml, const std::string& source) const {
  return resolve_search_options(config_yaml, source, overrides());
}

SearchOverrides SearchFlags::overrides() const {
  SearchOverrides overrides;
  if (beam_size_->count() > 0) overrides.beam_size = given_.beam_size;
  if (length_penalty_->count() > 0) overrides.length_penalty = given_.length_penalty;
  if (coverage_penalty_->count() > 0) overrides.coverage_penalty = given_.coverage_penalty;
  if (max_len_a_->count() > 0) overrides.max_len_a = given_.max_len_a;
  if (max_len_b_->count() > 0) overrides.max_len_b = given_.max_len_b;
  if (nbest_->count() > 0) overrides.nbest = given_.nbest;
  return overrides;
}

}  // namespace mixseq::cli
