// The prepared-dataset reader (data/prepared_data.h): a folder as `mixseq prepare` writes it. Input:
// "<dataset.json>\n%%\n<vocab.txt>\n%%\n<train.src.bin>\n%%\n<train.tgt.bin>"; the manifest may name
// these files or others. A bad folder gets mixseq::Error when it opens.
#include <string>

#include "fuzz_support.h"
#include "mixseq/data/prepared_data.h"

using namespace mixseq;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 4);
  const char* names[] = {"dataset.json", "vocab.txt", "train.src.bin", "train.tgt.bin"};
  for (size_t i = 0; i < 4; ++i) fuzz::write_scratch_file(names[i], i < parts.size() ? parts[i] : "");
  fuzz::expect_clear_errors([&] {
    const PreparedData prepared(fuzz::scratch_dir());
    for (const char* split : {"train", "valid", "test"}) {
      if (!prepared.has_split(split)) continue;
      fuzz::expect_clear_errors([&] {
        const TokenDataset& source = prepared.source(split);
        for (int64_t i = 0; i < source.size(); ++i) source.sequence(i);
        if (prepared.monolingual()) return;
        const TokenDataset& target = prepared.target(split);
        for (int64_t i = 0; i < target.size(); ++i) target.sequence(i);
      });
    }
  });
  return 0;
}
