// BpeCodes: the ordered merge operations of a byte pair encoding model (Sennrich et al. 2016,
// "Neural Machine Translation of Rare Words with Subword Units") and its codes file, as written
// and read by subword-nmt's learn_bpe.py and apply_bpe.py.
//
// Codes file: the header "#version: 0.2", then one merge per line, "<left> <right>", in the order
// they were learnt (the first line has the highest priority). "</w>" marks the end of a word, so
// "s t</w>" joins an "s" and a word-final "t". A file without the header is version 0.1, where
// "</w>" is a symbol of its own. subword-nmt's byte-level codes ("#version: 0.2 byte") are rejected.
//
// A BpeCodes is a value: immutable once built, safe to read from several threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mixseq {

// The marker of a word's end in codes and in symbols ("t</w>"), as subword-nmt writes it.
inline constexpr std::string_view kBpeEndOfWord = "</w>";

struct BpeMerge {
  std::string left;   // first symbol of the pair, e.g. "s"
  std::string right;  // second symbol, e.g. "t</w>"; the merge makes left + right ("st</w>")
};

class BpeCodes {
 public:
  enum class Version { k0_1, k0_2 };  // "</w>" as a separate symbol (0.1) or glued to the last character (0.2)

  // Reads a codes file ("-": stdin). max_merges >= 0 keeps only the first max_merges merges and, like
  // apply_bpe.py --merges, checks only those lines; -1 keeps all. A line that is not exactly two
  // symbols separated by one space throws "<path>:<line>: ...".
  static BpeCodes load(const std::string& path, int64_t max_merges = -1);

  explicit BpeCodes(std::vector<BpeMerge> merges, Version version = Version::k0_2, std::string source = "");

  // Writes the codes file (header for version 0.2, then one merge per line) atomically; "-": stdout.
  void save(const std::string& path) const;

  const std::vector<BpeMerge>& merges() const { return merges_; }
  Version version() const { return version_; }
  const std::string& source() const { return source_; }  // the file it was loaded from; "" if built in memory

 private:
  std::vector<BpeMerge> merges_;
  Version version_;
  std::string source_;
};

}  // namespace mixseq
