// Reading BPE codes and vocabulary files and applying them (text/bpe_codes.h, bpe_applier.h), as
// `mixseq bpe apply -c codes --vocabulary vocab --glossaries ...` does. Input:
// "<options byte><codes file>\n%%\n<text>\n%%\n<vocabulary file>\n%%\n<glossary>".
// Bad files get mixseq::Error; the text is segmented without crashing or hanging.
#include <string>

#include "fuzz_support.h"
#include "mixseq/text/bpe_applier.h"
#include "mixseq/util/utf8.h"

using namespace mixseq;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const auto parts = fuzz::split_parts(fuzz::as_text(data + 1, size - 1), 4);
  const std::string codes_path = fuzz::write_scratch_file("codes", parts[0]);
  fuzz::expect_clear_errors([&] {
    const BpeCodes codes = BpeCodes::load(codes_path, flags & 1 ? -1 : (flags >> 1) % 16);
    BpeApplyOptions options;
    options.threads = 1;
    if (flags & 32) options.separator = "";
    if (parts.size() > 2 && (flags & 64)) {
      options.vocabulary = fuzz::write_scratch_file("vocabulary", parts[2]);
      if (flags & 16) options.vocabulary_threshold = 2;
    }
    if (parts.size() > 3 && (flags & 128)) options.glossaries = {parts[3]};
    const BpeApplier applier(codes, options);
    if (parts.size() < 2) return;
    for (const auto line : split_python_lines(parts[1])) {
      fuzz::expect_clear_errors([&] { applier.process_line(line); });
      fuzz::expect_clear_errors([&] { applier.segment_line(line); });
    }
  });
  return 0;
}
