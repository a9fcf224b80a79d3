// The token dataset reader (data/token_dataset.h) on a file holding the input. A bad file gets
// mixseq::Error when it opens or when a sequence with a bad id is read, never a read out of bounds.
#include <string>

#include "fuzz_support.h"
#include "mixseq/data/token_dataset.h"

using namespace mixseq;
using fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_scratch_file("tokens.bin", fuzz::as_text(data, size));
  fuzz::expect_clear_errors([&] {
    const TokenDataset dataset(path);
    dataset.checksum();
    int64_t total = 0;
    for (const int64_t length : dataset.lengths()) {
      fuzz_check(length >= 0, "sequence lengths are not negative");
      total += length;
    }
    fuzz_check(total == dataset.total_tokens(), "the sequences hold every token");
    for (int64_t i = 0; i < dataset.size(); ++i)
      fuzz::expect_clear_errors([&] {
        for (const int64_t id : dataset.sequence(i)) fuzz_check(id >= 0 && id < dataset.vocab_size(), "ids index the vocabulary");
      });
  });
  return 0;
}
