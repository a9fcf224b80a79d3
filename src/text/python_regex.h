// PythonRegex: a Python `re` pattern run by ICU's regex engine, with the three calls subword-nmt's
// glossary code makes (re.match, re.search, re.split), so that --glossaries behaves as in apply_bpe.py.
//
// Python and ICU share the Perl syntax and leftmost-first backtracking. Python-only spellings are
// rewritten: (?P<name>...) and (?P=name), \Z, a "{" that starts no quantifier (a literal in Python),
// {,n}, and punctuation inside [...] that ICU reads as set operators. \w, \W, \s, \S get Python's
// definitions (\w: letters, numbers, "_"; \s: str.isspace()). "." and "$" see only "\n" as a line
// end, as in Python. Known differences: \b uses ICU's word characters (which add combining marks);
// case-insensitive matching folds as ICU does; and after an empty match re.split retries at the
// same position for a non-empty match, where this class moves one character on.
//
// A PythonRegex is immutable and safe to use from several threads.
#pragma once

#include <unicode/regex.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mixseq {

class PythonRegex {
 public:
  // Compiles `pattern`; a syntax error throws mixseq::Error naming the pattern and the position.
  explicit PythonRegex(const std::string& pattern);
  // re.match(pattern, text): a match that starts at the beginning of `text` (it may end early).
  bool match(std::string_view text) const;
  // re.search(pattern, text): a match anywhere.
  bool search(std::string_view text) const;
  // re.split(pattern, text): the text between matches, each followed by the pattern's groups
  // (nullopt for a group that did not take part, Python's None); the last element is the rest.
  std::vector<std::optional<std::string_view>> split(std::string_view text) const;

 private:
  std::string pattern_;
  std::unique_ptr<icu::RegexPattern> compiled_;
};

// The ICU spelling of a Python pattern (exposed for tests).
std::string python_pattern_to_icu(std::string_view pattern);

}  // namespace mixseq
