#include "mixseq/api/subwords.h"

#include <mutex>

#include "mixseq/text/tokenizer.h"
#include "mixseq/util/error.h"
#include "mixseq/util/utf8.h"

namespace mixseq {

struct Subwords::Impl {
  std::unique_ptr<Tokenizer> tokenizer;
  std::mutex mutex;  // a tokenizer may keep a cache of segmented words
};

Subwords::Subwords(const std::string& kind, const std::string& path) : impl_(std::make_unique<Impl>()) {
  MIXSEQ_CHECK(kind == "bpe" || kind == "spm", "Subwords: kind '", kind,
               "' is not bpe (BPE codes) or spm (a SentencePiece model)");
  impl_->tokenizer = load_tokenizer(kind + ":" + path);
}

Subwords::~Subwords() = default;
Subwords::Subwords(Subwords&&) noexcept = default;
Subwords& Subwords::operator=(Subwords&&) noexcept = default;

std::vector<std::vector<std::string>> Subwords::encode_batch(const std::vector<std::string>& lines) const {
  MIXSEQ_CHECK(impl_, "this Subwords was moved from");
  std::vector<std::vector<std::string>> pieces;
  pieces.reserve(lines.size());
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (const auto bad = find_invalid_utf8(lines[i]))
      throw Error(str_cat("line ", i + 1, ": malformed UTF-8 at byte ", *bad));
    pieces.push_back(impl_->tokenizer->encode(lines[i]));
  }
  return pieces;
}

std::vector<std::string> Subwords::decode_batch(const std::vector<std::vector<std::string>>& pieces) const {
  MIXSEQ_CHECK(impl_, "this Subwords was moved from");
  std::vector<std::string> lines;
  lines.reserve(pieces.size());
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  for (size_t i = 0; i < pieces.size(); ++i) {
    for (const auto& piece : pieces[i])
      if (const auto bad = find_invalid_utf8(piece))
        throw Error(str_cat("line ", i + 1, ": malformed UTF-8 at byte ", *bad, " of a piece"));
    lines.push_back(impl_->tokenizer->decode(pieces[i]));
  }
  return lines;
}

std::string Subwords::describe() const {
  MIXSEQ_CHECK(impl_, "this Subwords was moved from");
  return impl_->tokenizer->describe();
}

}  // namespace mixseq
