// Whole small files as bytes: dataset manifests, vocabularies, tokenizer models, labels.
#pragma once

#include <string>

namespace mixseq {

// The bytes of `path`; throws mixseq::Error naming it when it cannot be opened or read.
std::string read_file_bytes(const std::string& path);

// Writes `bytes` to `path` atomically (util/output_file.h: a temporary file renamed into place);
// throws mixseq::Error naming it when it cannot be written.
void write_file_bytes(const std::string& path, const std::string& bytes);

}  // namespace mixseq
