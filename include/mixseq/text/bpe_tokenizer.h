// BpeTokenizer: the Tokenizer (tokenizer.h) for subword-nmt BPE codes.
//
// encode(line) gives the pieces apply_bpe.py would write for the line, separator included
// ("the lowest" -> {"the", "low@@", "est"}); decode(pieces) joins them with spaces and removes the
// separator as `sed -r 's/(@@ )|(@@ ?$)//g'` does, so decode(encode(x)) is x with its words
// separated by single spaces. Thread-safe; threads share the applier's cache of segmented words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mixseq/text/bpe_applier.h"
#include "mixseq/text/tokenizer.h"

namespace mixseq {

class BpeTokenizer : public Tokenizer {
 public:
  BpeTokenizer(BpeCodes codes, const BpeApplyOptions& options);

  std::vector<std::string> encode(std::string_view line) const override;
  std::string decode(const std::vector<std::string>& pieces) const override;
  std::string describe() const override;  // "bpe:<codes file>"

 private:
  BpeApplier applier_;
};

}  // namespace mixseq
