// mixseq::Subwords: BPE codes or a SentencePiece model, segmenting text as mixseq's models read it.
//
//   #include <mixseq/mixseq.h>
//   mixseq::Subwords bpe("bpe", "runs/demo/raw/codes.bpe");
//   auto pieces = bpe.encode_batch({"one hundred two"});  // as `mixseq bpe apply -c codes.bpe` writes them
//   auto text = bpe.decode_batch(pieces);                 // back to "one hundred two"
//
// Contract. kind "bpe": a codes file of `mixseq bpe learn` or subword-nmt, applied with all its
// merges and the separator "@@" (`mixseq bpe apply -c CODES` with its defaults; the command's
// other options, a vocabulary filter and glossaries, are the command's). kind "spm": a
// SentencePiece model (`mixseq spm encode -m MODEL`, `spm decode`). encode_batch gives each line's
// pieces, without special symbols; decode_batch joins pieces back into text, equal to the line
// up to whitespace. A translation or language-model checkpoint stores its own and segments raw
// text itself (api/translator.h, api/language_model.h): this is for preparing data and for
// reading what a model reads.
//
// Threads. One Subwords may be shared; its calls run one at a time. Errors: an unknown kind, an
// unreadable or malformed file, malformed UTF-8 in a line (named by its number, from 1) throw
// std::runtime_error (mixseq::Error) with the message of the commands.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace mixseq {

class Subwords {
 public:
  Subwords(const std::string& kind, const std::string& path);
  ~Subwords();
  Subwords(Subwords&&) noexcept;
  Subwords& operator=(Subwords&&) noexcept;

  std::vector<std::vector<std::string>> encode_batch(const std::vector<std::string>& lines) const;
  std::vector<std::string> decode_batch(const std::vector<std::vector<std::string>>& pieces) const;

  std::string describe() const;  // "bpe:<path>" or "spm:<path>"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
